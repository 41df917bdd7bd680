//! The values of the fixed-choice flags, as clap value enums so `--help` lists them. Where a
//! library owns the meaning (its crate has no clap), the enum here is a thin mirror converted
//! once by an exhaustive `From`; the tests check each name against the library's own parser, so
//! the spellings cannot drift. A library that has a `clap` feature (bakeoff-suites: `--suite`'s
//! `SuiteChoice`) implements `ValueEnum` itself, and needs no mirror. Variants carry `//` comments, not doc comments: a documented value
//! would turn clap's one-line `[possible values: …]` into a block.

use bakeoff_artifact::evidence::VerdictKind;
use bakeoff_client::dialect::structured::{FormChoice, SchemaForm};
use bakeoff_load::Arrival;
use bakeoff_model::kv::KvCacheDtype;
use bakeoff_report::compare::Confound;
use bakeoff_suites::ThinkingMode;
use clap::ValueEnum;

/// `--thinking`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Thinking {
    On,
    Off,
    // Send nothing: whatever the server and template do by default.
    Default,
}

impl From<Thinking> for ThinkingMode {
    fn from(t: Thinking) -> Self {
        match t {
            Thinking::On => ThinkingMode::On,
            Thinking::Off => ThinkingMode::Off,
            Thinking::Default => ThinkingMode::Default,
        }
    }
}

/// `--schema-form` (`eval run --suite structured`, `bench run --schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaFormArg {
    // OpenAI's response_format, which every engine here serves.
    Auto,
    // The engine's own: vLLM's by its version, llama.cpp's json_schema.
    Native,
    ResponseFormat,
    StructuredOutputs,
    GuidedJson,
    JsonSchema,
}

impl From<SchemaFormArg> for FormChoice {
    fn from(f: SchemaFormArg) -> Self {
        match f {
            SchemaFormArg::Auto => FormChoice::Auto,
            SchemaFormArg::Native => FormChoice::Native,
            SchemaFormArg::ResponseFormat => FormChoice::Forced(SchemaForm::ResponseFormat),
            SchemaFormArg::StructuredOutputs => FormChoice::Forced(SchemaForm::StructuredOutputs),
            SchemaFormArg::GuidedJson => FormChoice::Forced(SchemaForm::GuidedJson),
            SchemaFormArg::JsonSchema => FormChoice::Forced(SchemaForm::JsonSchema),
        }
    }
}

/// `verdict SLUG VERDICT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Verdict {
    Accept,
    // Always under the tested configuration; the long form is the recorded one.
    #[value(alias = "reject-under-tested-configuration")]
    Reject,
    NotEnoughEvidence,
    Watch,
}

impl From<Verdict> for VerdictKind {
    fn from(v: Verdict) -> Self {
        match v {
            Verdict::Accept => VerdictKind::Accept,
            Verdict::Reject => VerdictKind::RejectUnderTestedConfiguration,
            Verdict::NotEnoughEvidence => VerdictKind::NotEnoughEvidence,
            Verdict::Watch => VerdictKind::Watch,
        }
    }
}

/// `bench compare --sweep`: which sweep of each artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Sweep {
    Throughput,
    Longgen,
}

impl Sweep {
    /// The key of the sweep in an artifact's `load` (a `bench run`) or `suites` (an `eval run`).
    pub fn as_str(self) -> &'static str {
        match self {
            Sweep::Throughput => "throughput",
            Sweep::Longgen => "longgen",
        }
    }
}

/// `bench run --arrival`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArrivalKind {
    Poisson,
    Constant,
    // Its shape is --burstiness (default 1: Poisson).
    Gamma,
}

impl From<ArrivalKind> for Arrival {
    fn from(k: ArrivalKind) -> Self {
        match k {
            ArrivalKind::Poisson => Arrival::Poisson,
            ArrivalKind::Constant => Arrival::Constant,
            ArrivalKind::Gamma => Arrival::Gamma { burstiness: 1.0 },
        }
    }
}

/// `--allow WHAT`: a difference between two runs, or a condition, that a comparison or a
/// verdict may rest on anyway. Every command takes this one type; those that can allow only
/// `contaminated` refuse the rest in `config` (`config::allow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Allow {
    // The runs measured different items.
    #[value(alias = "items")]
    ItemSet,
    // The runs measured different numbers of items.
    #[value(alias = "n-confound")]
    N,
    // Different chat-template hashes.
    #[value(alias = "chat-template")]
    Template,
    // Different --thinking modes.
    Thinking,
    // A side measured under a condition flag (host-contended, gpu-shared, …).
    Contaminated,
}

impl From<Allow> for Confound {
    fn from(a: Allow) -> Self {
        match a {
            Allow::ItemSet => Confound::ItemSet,
            Allow::N => Confound::N,
            Allow::Template => Confound::Template,
            Allow::Thinking => Confound::Thinking,
            Allow::Contaminated => Confound::Contaminated,
        }
    }
}

/// `kv --kv-cache-dtype`: vLLM's names, and the torch dtype names the library also reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KvDtype {
    Auto,
    #[value(alias = "bf16", alias = "torch.bfloat16")]
    Bfloat16,
    #[value(alias = "fp16", alias = "half", alias = "torch.float16")]
    Float16,
    #[value(alias = "fp32", alias = "float", alias = "torch.float32")]
    Float32,
    Fp8,
    // The fp8 variants vLLM names apart take one byte per element all the same.
    #[value(name = "fp8_e4m3", alias = "float8_e4m3fn")]
    Fp8E4m3,
    #[value(name = "fp8_e5m2")]
    Fp8E5m2,
    #[value(name = "fp8_inc")]
    Fp8Inc,
    #[value(name = "fp8_ds_mla")]
    Fp8DsMla,
}

impl From<KvDtype> for KvCacheDtype {
    fn from(d: KvDtype) -> Self {
        match d {
            KvDtype::Auto => KvCacheDtype::Auto,
            KvDtype::Bfloat16 => KvCacheDtype::Bf16,
            KvDtype::Float16 => KvCacheDtype::Fp16,
            KvDtype::Float32 => KvCacheDtype::Fp32,
            KvDtype::Fp8 | KvDtype::Fp8E4m3 | KvDtype::Fp8E5m2 | KvDtype::Fp8Inc => {
                KvCacheDtype::Fp8
            }
            KvDtype::Fp8DsMla => KvCacheDtype::Fp8DsMla,
        }
    }
}

/// `kv --cache-type-k/-v`: llama.cpp's KV cache types (`-ctk`, `-ctv`), by the names the model
/// crate sizes (`bakeoff_model::ggml_types::cache_type_id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheType {
    F16,
    Bf16,
    F32,
    #[value(name = "q8_0")]
    Q8_0,
    #[value(name = "q4_0")]
    Q4_0,
    #[value(name = "q4_1")]
    Q4_1,
    #[value(name = "q5_0")]
    Q5_0,
    #[value(name = "q5_1")]
    Q5_1,
    #[value(name = "iq4_nl")]
    Iq4Nl,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    /// Every name and alias of `E`.
    fn spellings<E: ValueEnum + Clone>() -> Vec<(E, String)> {
        let mut out = Vec::new();
        for v in E::value_variants() {
            let p = v.to_possible_value().unwrap();
            for name in p.get_name_and_aliases() {
                out.push((v.clone(), name.to_string()));
            }
        }
        out
    }

    #[test]
    fn every_spelling_means_what_the_library_parser_says() {
        for (v, s) in spellings::<Thinking>() {
            assert_eq!(ThinkingMode::parse(&s), Ok(v.into()), "{s}");
        }
        for (v, s) in spellings::<Verdict>() {
            assert_eq!(VerdictKind::parse(&s), Ok(v.into()), "{s}");
        }
        for (v, s) in spellings::<ArrivalKind>() {
            assert_eq!(Arrival::parse(&s), Some(v.into()), "{s}");
        }
        for (v, s) in spellings::<Allow>() {
            assert_eq!(Confound::parse(&s), Ok(v.into()), "{s}");
        }
        for (v, s) in spellings::<SchemaFormArg>() {
            assert_eq!(FormChoice::named(&s), Some(v.into()), "{s}");
        }
        for (v, s) in spellings::<KvDtype>() {
            assert_eq!(KvCacheDtype::parse(&s), Some(v.into()), "{s}");
        }
        for (_, s) in spellings::<CacheType>() {
            assert!(
                bakeoff_model::ggml_types::cache_type_id(&s).is_some(),
                "{s}"
            );
        }
    }

    #[test]
    fn every_library_value_has_a_flag_value() {
        for name in FormChoice::names() {
            let f = FormChoice::named(name).unwrap();
            assert!(
                SchemaFormArg::value_variants()
                    .iter()
                    .any(|v| f == (*v).into())
            );
        }
        for k in VerdictKind::ALL {
            assert!(Verdict::value_variants().iter().any(|v| k == (*v).into()));
        }
        for t in [
            "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl",
        ] {
            assert!(CacheType::from_str(t, false).is_ok(), "{t}");
        }
    }
}
