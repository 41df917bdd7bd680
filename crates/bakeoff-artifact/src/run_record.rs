//! `artifact.run`: what the operator asked for, as each command records it (docs/artifacts.md,
//! "run"). One struct for every command: each field is absent where a command leaves it out, so
//! every writer keeps the key set it always wrote, and an artifact from before a field existed
//! still reads. Never a key or anything else secret: URLs go through their redaction first.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

use crate::DamageReference;

/// What the operator asked for, verbatim where harmless. The field order is the order the
/// writers have always used (`eval run`'s keys, then the others), so most of them write the
/// same bytes as before.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// The command, for those that record it (`bench run`, `eval adapter`, `eval damage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The campaign a variant's run belongs to (`bakeoff campaign run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign: Option<String>,
    /// The campaign's variant (its slug).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The campaign's candidate the variant was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// `eval adapter`'s adapter, as asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// `eval adapter`'s base model (`null`: the server's only other model).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub base: Option<Option<String>>,
    /// The prompt set: `--prompts`' path, or the shipped one's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_count: Option<u64>,
    /// The suites asked for, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suites: Option<Vec<String>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub max_model_len_hint: Option<Option<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_timeout_s: Option<u64>,
    /// The run started its own embedded default engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_default: Option<bool>,
    /// `--thinking` (`off`, `on`, `default`); absent in runs from before the flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// `--battery`'s path (`null`: the shipped battery).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub battery: Option<Option<String>>,
    /// `--refusal-battery`'s path (`null`: the shipped one).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub refusal_battery: Option<Option<String>>,
    /// `--structured-battery`'s path (`null`: the shipped one); written when the structured
    /// suite ran.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub structured_battery: Option<Option<String>>,
    /// `--schema-form` as asked (`auto`, `native`, or a form); written when the structured
    /// suite ran, or `bench run --schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_form: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// `eval damage`'s tokens per continuation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u32>,
    /// `--limit` (`null`: every item).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub limit: Option<Option<u64>>,
    /// The campaign variant's value on each of its candidate's axes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<Vec<String>>,
    /// The seed (`null`: the command stopped before it chose one).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub seed: Option<Option<u64>>,
    /// `--tokenizer`'s path (`null`: none given).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub tokenizer: Option<Option<String>>,
    /// `eval damage`'s reference endpoint (its URL redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<DamageReference>,
    /// The fleet file of a `bakeoff seat …` failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<String>,
}

/// A key that is present reads as `Some`, even when its value is `null`: the writers record
/// `null` for an option left unset, and a rewrite keeps that key.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl RunRecord {
    /// `bakeoff bench run`'s record.
    pub fn bench_run(embedded_default: bool) -> Self {
        Self {
            command: Some("bench run".into()),
            embedded_default: Some(embedded_default),
            ..Self::default()
        }
    }

    /// Nothing recorded (the field is left out of the artifact).
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The thinking mode the run used: `thinking`, else `default` (runs before the flag).
    pub fn thinking_or_default(&self) -> &str {
        self.thinking.as_deref().unwrap_or("default")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::RunRecord;

    /// A key written as `null` stays a key on a rewrite; an absent one stays absent.
    #[test]
    fn null_keys_survive_a_round_trip() {
        let text = r#"{"suites":["context"],"battery":null,"seed":7}"#;
        let r: RunRecord = serde_json::from_str(text).unwrap();
        assert_eq!(r.battery, Some(None));
        assert_eq!(r.seed, Some(Some(7)));
        assert_eq!(r.limit, None);
        assert_eq!(serde_json::to_string(&r).unwrap(), text);
    }

    #[test]
    fn bench_run_writes_its_two_keys() {
        let r = RunRecord::bench_run(false);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"command":"bench run","embedded_default":false}"#
        );
        assert!(RunRecord::default().is_empty());
    }
}
