//! How `negative-results.md` writes what it read: escaped text, code spans, bullets, a variant's
//! axes, and an artifact read only from inside the campaign's directory.

use std::fmt::Write as _;
use std::path::{Component, Path};

use bakeoff_artifact::campaign::VariantRow;
use bakeoff_artifact::{Artifact, read_versioned};
use bakeoff_wire::escape::{cut_and_map, visible_control};

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

pub(super) fn read_artifact(dir: &Path, rel: &str) -> Result<Artifact, String> {
    if !inside(rel) {
        return Err("not read: its path leaves the campaign directory".into());
    }
    let path = dir.join(rel);
    if !path.exists() {
        return Err("missing".into());
    }
    read_versioned::<Artifact>(&path).map_err(|e| format!("not read: {}", store_reason(&e)))
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
