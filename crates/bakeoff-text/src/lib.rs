//! Text the model sees: chat-template fingerprints (normalized so that line endings and trailing
//! whitespace never make two identical templates look different), and — as the context suite
//! grows — tokenization routes and exact prompt sizing.
//!
//! This crate never guesses a token count from words or characters: every count comes from a
//! real tokenizer (the server's, or a local `tokenizer.json`).

pub mod template;

pub use template::{TemplateFingerprint, fingerprint, normalize_template};
