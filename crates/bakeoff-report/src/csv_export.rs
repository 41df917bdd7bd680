//! CSV export: one row per item record (`items.csv`) and one per load step (`steps.csv`), for
//! spreadsheets and notebooks. Retracted artifacts are exported with `retracted = true` so a
//! reader can filter them, never silently dropped nor silently mixed in.
//!
//! Replies are untrusted: a cell a spreadsheet would run as a formula is prefixed with `'`.

use std::path::{Path, PathBuf};

use crate::escape::for_spreadsheet as cell;
use crate::registry::Registry;
use crate::steps::sweeps_of;

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("cannot create {path}: {source} (choose another --csv directory)")]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: csv::Error },
    #[error(
        "{path} exists and is not an export of bakeoff report: it is never overwritten (choose another --csv directory)"
    )]
    Foreign { path: PathBuf },
}

/// An existing file at `path` may be regenerated only when it is one of our own exports (its
/// header is ours): bakeoff never overwrites a file it did not write.
fn refuse_foreign(path: &Path) -> Result<(), CsvError> {
    match std::fs::read_to_string(path) {
        Ok(t) if !t.starts_with("artifact,slug,") => Err(CsvError::Foreign {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn optu(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

const ITEM_HEADER: &[&str] = &[
    "artifact",
    "slug",
    "kind",
    "retracted",
    "suite",
    "item",
    "outcome",
    "ttft_ms",
    "ttfot_ms",
    "first_byte_ms",
    "e2e_ms",
    "text_chunks",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
    "http_status",
    "check",
    "error_kind",
    "error_message",
    "content",
];

/// One column per metric of a load step (no JSON cell): what the HTML per-level table shows.
pub const STEP_HEADER: &[&str] = &[
    "artifact",
    "slug",
    "retracted",
    "suite",
    "step",
    "concurrency",
    "output_tok_per_s",
    "ttft_p50_ms",
    "ttft_p90_ms",
    "ttft_p99_ms",
    "requests",
    "label",
    "tpot_p50_ms",
    "tpot_p99_ms",
    "itl_p50_ms",
    "itl_p99_ms",
    "e2e_p50_ms",
    "e2e_p99_ms",
];

/// Write `DIR/items.csv` and `DIR/steps.csv`; returns their paths and row counts.
pub fn export(reg: &Registry, dir: &Path) -> Result<Vec<(PathBuf, usize)>, CsvError> {
    std::fs::create_dir_all(dir).map_err(|source| CsvError::Create {
        path: dir.to_path_buf(),
        source,
    })?;
    let items_path = dir.join("items.csv");
    let steps_path = dir.join("steps.csv");
    refuse_foreign(&items_path)?;
    refuse_foreign(&steps_path)?;
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CsvError::Write {
            path: path.clone(),
            source,
        }
    };

    let mut w = csv::Writer::from_path(&items_path).map_err(werr(&items_path))?;
    w.write_record(ITEM_HEADER).map_err(werr(&items_path))?;
    let mut n_items = 0;
    for e in &reg.entries {
        let a = &e.artifact;
        for (suite, s) in &a.suites {
            for it in &s.items {
                let u = it.response.usage.as_ref();
                let row = vec![
                    e.name.clone(),
                    a.candidate.slug.clone(),
                    format!("{:?}", a.kind).to_lowercase(),
                    e.is_retracted().to_string(),
                    suite.clone(),
                    cell(&it.id),
                    it.outcome.as_str().to_string(),
                    opt(it.latency.ttft_ms),
                    opt(it.latency.ttfot_ms),
                    opt(it.latency.first_byte_ms),
                    it.latency.e2e_ms.to_string(),
                    it.latency.text_chunks.to_string(),
                    optu(u.and_then(|u| u.prompt_tokens)),
                    optu(u.and_then(|u| u.completion_tokens)),
                    cell(it.response.finish_reason.as_deref().unwrap_or("")),
                    it.response
                        .http_status
                        .map(|x| x.to_string())
                        .unwrap_or_default(),
                    cell(it.check.as_deref().unwrap_or("")),
                    it.error
                        .as_ref()
                        .map(|x| x.kind.clone())
                        .unwrap_or_default(),
                    cell(it.error.as_ref().map(|x| x.message.as_str()).unwrap_or("")),
                    cell(&it.response.content),
                ];
                w.write_record(&row).map_err(werr(&items_path))?;
                n_items += 1;
            }
        }
    }
    w.flush().map_err(|e| CsvError::Write {
        path: items_path.clone(),
        source: e.into(),
    })?;

    let mut w = csv::Writer::from_path(&steps_path).map_err(werr(&steps_path))?;
    w.write_record(STEP_HEADER).map_err(werr(&steps_path))?;
    let mut n_steps = 0;
    for e in &reg.entries {
        for (suite, steps) in sweeps_of(&e.artifact) {
            for st in steps {
                let row = vec![
                    e.name.clone(),
                    e.artifact.candidate.slug.clone(),
                    e.is_retracted().to_string(),
                    cell(&suite),
                    st.index.to_string(),
                    opt(st.concurrency),
                    opt(st.tok_per_s),
                    opt(st.ttft_p50_ms),
                    opt(st.ttft_p90_ms),
                    opt(st.ttft_p99_ms),
                    opt(st.requests),
                    cell(st.label.as_deref().unwrap_or("")),
                    opt(st.tpot_p50_ms),
                    opt(st.tpot_p99_ms),
                    opt(st.itl_p50_ms),
                    opt(st.itl_p99_ms),
                    opt(st.e2e_p50_ms),
                    opt(st.e2e_p99_ms),
                ];
                w.write_record(&row).map_err(werr(&steps_path))?;
                n_steps += 1;
            }
        }
    }
    w.flush().map_err(|e| CsvError::Write {
        path: steps_path.clone(),
        source: e.into(),
    })?;
    Ok(vec![(items_path, n_items), (steps_path, n_steps)])
}
