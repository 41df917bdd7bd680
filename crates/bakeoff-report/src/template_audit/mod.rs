//! `bakeoff audit template`'s output: the table of templates (build, lines, fingerprint,
//! whether it matches the reference, how it renders), the rendered prompt of the fixed
//! conversation compared with the reference (else the first template), and the JSON form.
//! Labels, sources and template text come from files or an endpoint: every cell and diff line
//! is escaped.

use bakeoff_text::{TemplateRow, render_diff};

use crate::escape::{for_terminal, for_terminal_keep_end};

#[cfg(test)]
mod tests;

/// The table and the prompt diffs, as printed (each line ends with a newline).
pub fn terminal(reference: Option<&TemplateRow>, rows: &[TemplateRow]) -> String {
    let mut table: Vec<Vec<String>> = Vec::new();
    if let Some(r) = reference {
        table.push(vec![
            format!("{} (reference)", r.label),
            r.fingerprint.lines.to_string(),
            r.fingerprint.short.clone(),
            "—".into(),
            render_state(r),
        ]);
    }
    for r in rows {
        table.push(vec![
            r.label.clone(),
            r.fingerprint.lines.to_string(),
            r.fingerprint.short.clone(),
            match r.matches_reference {
                Some(true) => "yes".into(),
                Some(false) => "NO".into(),
                None => "—".into(),
            },
            render_state(r),
        ]);
    }
    let mut out = aligned(
        &[
            "build",
            "lines",
            "sha256 (normalized)",
            "matches reference",
            "render",
        ],
        &table,
    );
    // Diffs: against the reference, else against the first template.
    let Some(base) = reference.or(rows.first()) else {
        return out;
    };
    out.push('\n');
    out.push_str(&format!(
        "rendered prompt of the fixed conversation (system, user, assistant, user; one tool), \
         compared with {}:\n",
        for_terminal_keep_end(&base.label, 200)
    ));
    for r in rows {
        if std::ptr::eq(r, base) {
            continue;
        }
        match render_diff(base, r) {
            None => out.push_str(&format!(
                "  {}: identical prompt\n",
                for_terminal_keep_end(&r.label, 200)
            )),
            Some(d) => {
                out.push_str(&format!(
                    "  {}: prompt differs\n",
                    for_terminal_keep_end(&r.label, 200)
                ));
                for l in d.lines() {
                    out.push_str(&format!("    {}\n", for_terminal(l, 400)));
                }
            }
        }
    }
    out
}

/// The JSON form (`--json`): the reference's row and each template's.
pub fn json(reference: Option<&TemplateRow>, rows: &[TemplateRow]) -> serde_json::Value {
    let row_json = |r: &TemplateRow| {
        serde_json::json!({
            "build": r.label, "source": r.source, "lines": r.fingerprint.lines,
            "sha256": r.fingerprint.sha256, "short": r.fingerprint.short,
            "matches_reference": r.matches_reference,
            "rendered": r.rendered.as_ref().ok(),
            "render_error": r.rendered.as_ref().err().map(|e| e.to_string()),
        })
    };
    serde_json::json!({
        "reference": reference.map(row_json),
        "templates": rows.iter().map(row_json).collect::<Vec<_>>(),
    })
}

fn render_state(r: &TemplateRow) -> String {
    match &r.rendered {
        Ok(s) => format!("{} chars", s.chars().count()),
        Err(e) => e.to_string(),
    }
}

/// A plain aligned table (cells escaped: paths and template text come from files). The first
/// column is a path or URL: a long one keeps its end, where the file name is.
fn aligned(header: &[&str], rows: &[Vec<String>]) -> String {
    let cells: Vec<Vec<String>> = std::iter::once(header.iter().map(|h| (*h).to_owned()).collect())
        .chain(rows.iter().map(|r| {
            r.iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        for_terminal_keep_end(c, 120)
                    } else {
                        for_terminal(c, 120)
                    }
                })
                .collect()
        }))
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in &cells {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}
