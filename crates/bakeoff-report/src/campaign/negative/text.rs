//! How `negative-results.md` writes what it read: escaped text, code spans, bullets, a variant's
//! axes, and an artifact read only from inside the campaign's directory.

use std::fmt::Write as _;
use std::path::{Component, Path};

use bakeoff_artifact::campaign::VariantRow;
use bakeoff_artifact::{Artifact, StoreError, read_versioned};
use bakeoff_term::escape::{cut_and_map, visible_control};

use super::super::store_reason;
use crate::escape::for_markdown;

/// Notable log lines shown per variant (the record keeps the root cause first).
pub(super) const MAX_LOG_LINES: usize = 5;

pub(super) fn md(s: &str) -> String {
    for_markdown(s, 400)
}

/// `text` as a code span: shown literally by markdown renderers (no HTML, no emphasis), so only
/// backticks (which would close it), line breaks and control characters are replaced.
pub(super) fn code(s: &str) -> String {
    if s.is_empty() {
        return "(empty)".into();
    }
    let inner = cut_and_map(s, 300, |c, out| match c {
        '`' => out.push('\''),
        '\n' | '\r' | '\t' => out.push(' '),
        c if c.is_control() => visible_control(c, out),
        c => out.push(c),
    });
    format!("`{inner}`")
}

/// Distinct values, in order.
pub(super) fn distinct(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// A relative path that stays inside the directory it is joined to.
fn inside(rel: &str) -> bool {
    !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Why an artifact the record names is not in the report, as its Evidence line says it.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unread {
    #[error("not read: its path leaves the campaign directory")]
    Outside,
    #[error("missing")]
    Missing,
    #[error("not read: {}", store_reason(.0))]
    Store(#[source] StoreError),
}

pub(super) fn read_artifact(dir: &Path, rel: &str) -> Result<Artifact, Unread> {
    if !inside(rel) {
        return Err(Unread::Outside);
    }
    let path = dir.join(rel);
    if !path.exists() {
        return Err(Unread::Missing);
    }
    read_versioned::<Artifact>(&path).map_err(Unread::Store)
}

/// One variant's axis values, `-c 8192, --flash-attn on` (its slug when it has none).
pub(super) fn axes_text(r: &VariantRow) -> String {
    if r.axes.is_empty() {
        return r.variant.clone();
    }
    let parts: Vec<String> = r
        .axes
        .iter()
        .map(|a| format!("{} {}", a.flag, a.value))
        .collect();
    parts.join(", ")
}

/// Write `items` after `label`: inline when there is one, else as sub-bullets.
pub(super) fn bullet(out: &mut String, label: &str, items: &[String]) {
    match items {
        [] => {}
        [one] => {
            let _ = writeln!(out, "- **{label}:** {one}");
        }
        many => {
            let _ = writeln!(out, "- **{label}:**");
            for i in many {
                let _ = writeln!(out, "  - {i}");
            }
        }
    }
}
