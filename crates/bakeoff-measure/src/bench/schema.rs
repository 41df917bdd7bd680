//! `bench run --schema FILE`: the cost of constraining under load. The same workload is sent
//! constrained by the schema (side B) and unconstrained (side A), alternately step by step as
//! `--versus` alternates two endpoints (`bakeoff_load::run_versus`, here with one endpoint on
//! both sides), one artifact per side and their paired comparison written beside them
//! (`schema-<run id>.compare.json`): the difference of output tok/s, TTFT, TPOT and ITL per
//! level with its interval.
//!
//! Before the warm-up, three single requests of the sweep's shape measure what the first
//! request with a new schema pays (its grammar's compilation): one unconstrained, the first
//! constrained, the next constrained. The compile cost is first − next, reported apart and
//! never in a measured step.
//!
//! Output pinning (`ignore_eos`, `min_tokens`) is off on both sides: a grammar whose JSON has
//! closed allows only the end of the sequence, which `ignore_eos` forbids; so both sides end
//! where their output ends, at most `--output-tokens`.

use std::path::Path;
use std::sync::Arc;

use bakeoff_artifact::{CompileCost, SchemaLoadRecord};
use bakeoff_client::Client;
use bakeoff_client::dialect::structured::{FormChoice, SchemaForm};
use bakeoff_load::compare::{SweepComparison, compare};
use bakeoff_load::{LoadPlan, PinPolicy, Progress};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use super::request::{BenchError, BenchRequest, Benched, VersusBenched};
use bakeoff_suites::preflight::PreflightOutcome;

/// `--schema FILE`, read and compiled, and how to send it.
#[derive(Debug, Clone)]
pub struct SchemaBench {
    /// The file, as given (recorded in both artifacts).
    pub file: String,
    pub schema: Value,
    /// `--schema-form`.
    pub form: FormChoice,
    /// `--allow contaminated`.
    pub allow_contaminated: bool,
}

/// Why `--schema FILE` is refused, each one line naming the file and the fix.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SchemaFileError {
    #[error(
        "cannot read --schema {path}: {message}; pass an existing JSON file holding one JSON Schema"
    )]
    Read { path: String, message: String },
    #[error("--schema {path} is not JSON ({message}); the file must hold one JSON Schema object")]
    NotJson { path: String, message: String },
    #[error("--schema {path} holds {found}, not a JSON Schema object; wrap the schema in {{…}}")]
    NotObject { path: String, found: &'static str },
    #[error("--schema {path}: the validator cannot compile the schema: {message}; fix the schema")]
    Compile { path: String, message: String },
}

/// Read, parse and compile `--schema FILE`.
pub fn load_schema(path: &Path) -> Result<Value, SchemaFileError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SchemaFileError::Read {
        path: p.clone(),
        message: e.to_string(),
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| SchemaFileError::NotJson {
        path: p.clone(),
        message: e.to_string(),
    })?;
    if !v.is_object() {
        let found = match v {
            Value::Array(_) => "an array",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(SchemaFileError::NotObject { path: p, found });
    }
    bakeoff_suites::structured::battery::validator(&v).map_err(|message| {
        SchemaFileError::Compile {
            path: p.clone(),
            message: one_line(&message),
        }
    })?;
    Ok(v)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One level's ITL p50 difference (B − A).
#[derive(Debug, Clone, Serialize)]
pub struct LevelItl {
    pub label: String,
    pub difference: bakeoff_load::difference::Difference,
}

/// What `schema-<run id>.compare.json` holds.
#[derive(Debug, Clone, Serialize)]
pub struct SchemaComparison {
    /// A is unconstrained, B constrained: a difference is B − A.
    pub sides: &'static str,
    pub form: String,
    pub compile: CompileCost,
    /// ITL p50's paired difference per level (the comparison's own rows carry tok/s, TTFT
    /// and TPOT).
    pub itl: Vec<LevelItl>,
    #[serde(flatten)]
    pub comparison: SweepComparison,
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |v| format!("{v:.0} ms"))
}

impl SchemaComparison {
    /// The lines `bench run --schema` prints under the paired comparison: the form, the
    /// compile cost apart, and ITL p50's difference per level.
    pub fn text(&self) -> String {
        let c = &self.compile;
        let mut out = format!(
            "constraining: A unconstrained, B constrained (schema sent as {}); B − A per level above\n\
             compile cost (first request with the schema, kept out of every step): {} \
             (first constrained TTFT {}, next {}, unconstrained {}; one request each, no interval)\n",
            self.form,
            ms(c.compile_ms),
            ms(c.first_constrained_ttft_ms),
            ms(c.next_constrained_ttft_ms),
            ms(c.unconstrained_ttft_ms),
        );
        for l in &self.itl {
            let d = &l.difference;
            let interval = match (d.low, d.high) {
                (Some(lo), Some(hi)) => format!("[{lo:.1}, {hi:.1}]"),
                _ => "no interval (repeat 2 or more)".into(),
            };
            out.push_str(&format!(
                "{}: ITL p50 {:.1} → {:.1} ms, B − A {:+.1} ms {interval}: {}\n",
                bakeoff_term::escape::for_terminal(&l.label, 40),
                d.a.mean,
                d.b.mean,
                d.diff,
                d.verdict
            ));
        }
        out
    }
}

async fn ttft_of(
    client: &Client,
    plan: &LoadPlan,
    nonce: u64,
    i: u64,
) -> (Option<f64>, Option<String>) {
    let (req, _) = bakeoff_load::runner::build_request(plan, nonce, 0, i);
    let ex = client.chat_stream(&req).await;
    match &ex.error {
        Some(e) => {
            let words = match e {
                bakeoff_client::RequestError::Http { body, .. }
                | bakeoff_client::RequestError::ServerErrorEvent { body } => {
                    bakeoff_suites::structured::judge::words_of(body)
                }
                other => other.to_string(),
            };
            (None, Some(words))
        }
        None => (ex.reply.ttft.map(|d| d.as_secs_f64() * 1000.0), None),
    }
}

/// The three probe requests: unconstrained, first constrained, next constrained.
async fn compile_cost(client: &Client, a: &LoadPlan, b: &LoadPlan) -> CompileCost {
    // Their own nonce: prompts no measured step sends, so no prompt cache carries over.
    let nonce = a.seed ^ 0x005c_4e3a_0001;
    let (u, ue) = ttft_of(client, a, nonce, 0).await;
    let (first, fe) = ttft_of(client, b, nonce, 1).await;
    let (next, ne) = ttft_of(client, b, nonce, 2).await;
    CompileCost {
        unconstrained_ttft_ms: u,
        first_constrained_ttft_ms: first,
        next_constrained_ttft_ms: next,
        compile_ms: first.zip(next).map(|(f, n)| f - n),
        error: fe.or(ne).or(ue),
    }
}

pub(super) async fn measure(
    req: &BenchRequest<'_>,
    sb: &SchemaBench,
    pre: &PreflightOutcome,
    mut plan_a: LoadPlan,
    progress: Arc<dyn Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<Benched, BenchError> {
    let facts = &pre.discovered.facts;
    let form: SchemaForm = sb
        .form
        .resolve(facts.engine, facts.engine_version.as_deref());
    plan_a.pin = PinPolicy::default();
    let mut plan_b = plan_a.clone();
    form.apply("bench_schema", &sb.schema, &mut plan_b.extra);
    let compile = compile_cost(req.client, &plan_a, &plan_b).await;
    if compile.first_constrained_ttft_ms.is_none()
        && let Some(words) = &compile.error
    {
        return Err(BenchError::SchemaRefused {
            file: sb.file.clone(),
            form: form.as_str().to_owned(),
            words: words.clone(),
        });
    }
    let (mut ra, mut rb) = bakeoff_load::run_versus(
        bakeoff_load::Side {
            client: req.client,
            plan: &plan_a,
        },
        bakeoff_load::Side {
            client: req.client,
            plan: &plan_b,
        },
        progress,
        cancel,
    )
    .await?;
    let record = |side: &str| SchemaLoadRecord {
        side: side.into(),
        schema_file: sb.file.clone(),
        form: form.as_str().to_owned(),
        form_asked: sb.form.as_str().to_owned(),
        compile: Some(compile.clone()),
    };
    ra.schema = Some(record("unconstrained"));
    rb.schema = Some(record("constrained"));
    let comparison = compare(&ra, &rb, sb.allow_contaminated);
    let itl = comparison
        .levels
        .iter()
        .filter_map(|l| {
            bakeoff_load::paired::itl_difference(&ra, &rb, &l.label).map(|difference| LevelItl {
                label: l.label.clone(),
                difference,
            })
        })
        .collect();
    let run_id = ra
        .versus
        .as_ref()
        .map(|v| v.run_id.clone())
        .unwrap_or_default();
    let a = super::versus::write_side(req, "unconstrained", req.client, pre, ra)?;
    let b = super::versus::write_side(req, "constrained", req.client, pre, rb)?;
    let comparison_path = req.output.out.join(format!("schema-{run_id}.compare.json"));
    let file = SchemaComparison {
        sides: "A unconstrained, B constrained by the schema",
        form: form.as_str().to_owned(),
        compile: compile.clone(),
        itl,
        comparison: comparison.clone(),
    };
    bakeoff_artifact::write_new(&comparison_path, &file)?;
    Ok(Benched::Versus(Box::new(VersusBenched {
        a,
        b,
        comparison,
        comparison_path,
        schema: Some(file),
    })))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_schema_file_is_one_line_naming_it() {
        let dir = std::env::temp_dir().join(format!("bakeoff-schema-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("bad.json", "{\"type\":", "is not JSON"),
            ("arr.json", "[1]", "holds an array"),
            (
                "re.json",
                "{\"type\":\"string\",\"pattern\":\"(\"}",
                "cannot compile",
            ),
        ];
        for (name, text, want) in cases {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            let e = load_schema(&p).unwrap_err().to_string();
            assert!(
                e.contains(want) && e.contains(name) && !e.contains('\n'),
                "{e}"
            );
        }
        let e = load_schema(&dir.join("missing.json"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cannot read --schema"), "{e}");
        std::fs::write(dir.join("ok.json"), "{\"type\":\"object\"}").unwrap();
        assert!(load_schema(&dir.join("ok.json")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
