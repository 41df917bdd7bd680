//! Text the model sees: chat-template fingerprints (normalized so that line endings and trailing
//! whitespace never make two identical templates look different), filler cut exactly on token
//! boundaries, and the local tokenization route (`--tokenizer tokenizer.json`).
//!
//! This crate never guesses a token count from words or characters: every count comes from a
//! real tokenizer (the server's, or a local `tokenizer.json`).

pub mod haystack;
pub mod template;
pub mod template_diff;
pub mod template_render;
pub mod template_source;
pub mod tokenizer;

/// The generator is `bakeoff-stats`' (the filler's seeded order draws from it); named here too
/// for the callers that already reach it through this crate.
pub use bakeoff_stats::SplitMix64;
pub use haystack::{HaystackError, TokenizedFiller, build_filler, filler_sentences};
pub use template::{TemplateFingerprint, fingerprint, normalize_template};
pub use template_diff::{TemplateRow, render_diff, template_table};
pub use template_render::{
    RenderError, RenderInput, fixed_conversation, hf_environment, render_template,
};
pub use template_source::{ExtractedTemplate, TemplateSourceError, extract_templates};
pub use tokenizer::{LocalTokenizer, LocalTokenizerError, byte_level_tokenizer_json, byte_symbols};
