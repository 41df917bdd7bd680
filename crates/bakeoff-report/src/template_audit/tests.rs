use bakeoff_artifact::TemplateFingerprint;
use bakeoff_text::{RenderError, TemplateRow};

use super::{json, terminal};

fn row(
    label: &str,
    short: &str,
    matches: Option<bool>,
    rendered: Result<&str, &str>,
) -> TemplateRow {
    TemplateRow {
        label: label.into(),
        source: "tokenizer_config.json chat_template".into(),
        fingerprint: TemplateFingerprint {
            sha256: format!("{short}{}", "0".repeat(48)),
            short: short.into(),
            lines: 12,
        },
        matches_reference: matches,
        rendered: rendered
            .map(str::to_string)
            .map_err(|e| RenderError::Raised(e.to_string())),
    }
}

/// A reference, a matching build, a differing one whose label carries an escape sequence (a
/// hostile path: it is shown escaped, never sent to the terminal), and one that refuses.
#[test]
fn table_and_diffs_escape_untrusted_labels() {
    let reference = row(
        "models/ref",
        "0123456789abcdef",
        None,
        Ok("<s>user: hi\nassistant:"),
    );
    let rows = vec![
        row(
            "builds/a",
            "0123456789abcdef",
            Some(true),
            Ok("<s>user: hi\nassistant:"),
        ),
        row(
            "builds/\u{1b}[31mred",
            "fedcba9876543210",
            Some(false),
            Ok("<s>user: hi\nassistant: \u{1b}]0;x\u{7}"),
        ),
        row("builds/c", "1111111111111111", Some(false), Err("no tools")),
    ];
    let out = terminal(Some(&reference), &rows);
    assert!(
        !out.contains('\u{1b}'),
        "an escape reached the output: {out:?}"
    );
    insta::assert_snapshot!(out);
    let v = json(Some(&reference), &rows);
    assert_eq!(
        v["templates"][2]["render_error"],
        "template raised: no tools"
    );
    assert_eq!(v["reference"]["build"], "models/ref");
}

#[test]
fn without_rows_only_the_header() {
    assert_eq!(
        terminal(None, &[]),
        "build  lines  sha256 (normalized)  matches reference  render\n"
    );
}
