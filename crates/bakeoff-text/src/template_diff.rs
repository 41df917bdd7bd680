//! The audit table (build, lines, short sha256, matches the reference) and the diff of the
//! rendered prompts, line by line (the `similar` crate's unified diff).

use similar::TextDiff;

use crate::template::{TemplateFingerprint, fingerprint};
use crate::template_render::{RenderError, RenderInput, render_template};
use crate::template_source::ExtractedTemplate;

/// One row of the audit table.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateRow {
    pub label: String,
    pub source: String,
    pub fingerprint: TemplateFingerprint,
    /// `None` without a reference.
    pub matches_reference: Option<bool>,
    pub rendered: Result<String, RenderError>,
}

/// Fingerprints and renders every template; `reference` (when given) is what each is matched
/// against. The reference is rendered too and comes first when present.
pub fn template_table(
    templates: &[ExtractedTemplate],
    reference: Option<&ExtractedTemplate>,
    input: &RenderInput,
) -> (Option<TemplateRow>, Vec<TemplateRow>) {
    let row = |t: &ExtractedTemplate, refp: Option<&TemplateFingerprint>| {
        let fp = fingerprint(&t.text);
        let mut inp = input.clone();
        if let Some(b) = &t.bos_token {
            inp.bos_token.clone_from(b);
        }
        if let Some(e) = &t.eos_token {
            inp.eos_token.clone_from(e);
        }
        TemplateRow {
            label: t.label.clone(),
            source: t.source.clone(),
            matches_reference: refp.map(|r| r.sha256 == fp.sha256),
            fingerprint: fp,
            rendered: render_template(&t.text, &inp),
        }
    };
    let reference_row = reference.map(|r| row(r, None));
    let refp = reference_row.as_ref().map(|r| r.fingerprint.clone());
    let rows = templates.iter().map(|t| row(t, refp.as_ref())).collect();
    (reference_row, rows)
}

fn rendered_text(r: &Result<String, RenderError>) -> String {
    match r {
        Ok(s) => s.clone(),
        Err(e) => format!("<{e}>\n"),
    }
}

/// A unified diff of `b`'s rendered prompt against `a`'s; `None` when they are identical.
pub fn render_diff(a: &TemplateRow, b: &TemplateRow) -> Option<String> {
    let (ta, tb) = (rendered_text(&a.rendered), rendered_text(&b.rendered));
    if ta == tb {
        return None;
    }
    let diff = TextDiff::from_lines(&ta, &tb);
    Some(
        diff.unified_diff()
            .context_radius(2)
            .header(&a.label, &b.label)
            .missing_newline_hint(true)
            .to_string(),
    )
}
