//! `bakeoff audit checkpoint`'s output: what the checkpoint's files say (architectures, model
//! type, dtype, weights, quantization config), the serving flag it is checked against, and the
//! findings with their fixes; and the JSON form. Every string comes from the checkpoint's files
//! (or the command line): escaped, so a hostile config.json cannot drive the terminal.

use bakeoff_model::{CheckpointReport, Finding, Severity};
use bakeoff_term::units::gib;

use crate::escape::for_terminal;

#[cfg(test)]
mod tests;

/// The report as printed (each line ends with a newline); `flag`: the `--quantization` value
/// checked, if any.
pub fn terminal(report: &CheckpointReport, flag: Option<&str>, findings: &[Finding]) -> String {
    let t = |s: &str| for_terminal(s, 300);
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!("checkpoint {}", t(&report.path)));
    line(format!(
        "  architectures: {}",
        t(&report.architectures.join(", "))
    ));
    line(format!(
        "  model type: {}{}",
        t(report.model_type.as_deref().unwrap_or("—")),
        report
            .text_model_type
            .as_deref()
            .map(|m| format!(" (text: {})", t(m)))
            .unwrap_or_default()
    ));
    line(format!(
        "  dtype: {}",
        t(report.dtype.as_deref().unwrap_or("—"))
    ));
    line(match &report.weights {
        Some(w) => format!(
            "  weights: {} ({} bytes, from {}, {} files)",
            gib(w.bytes),
            w.bytes,
            t(&w.source),
            w.files.len()
        ),
        None => "  weights: none found".to_string(),
    });
    line(match &report.quantization {
        Some(q) => format!(
            "  quantization_config: {} (from {}){}",
            t(&q.method),
            t(&q.source),
            q.format
                .as_deref()
                .map(|f| format!(", format {}", t(f)))
                .unwrap_or_default()
        ),
        None => "  quantization_config: none (unquantized)".to_string(),
    });
    line(format!(
        "  serving flag: --quantization {}",
        t(flag.unwrap_or("(none)"))
    ));
    for n in &report.notes {
        line(format!("  note: {}", t(n)));
    }
    for f in findings {
        line(finding_line(f));
        if let Some(fix) = &f.fix {
            line(format!("    fix: {}", for_terminal(fix, 600)));
        }
    }
    if findings.is_empty() {
        line("  ok: the flag agrees with the checkpoint".to_string());
    }
    out
}

fn finding_line(f: &Finding) -> String {
    let sev = match f.severity {
        Severity::Error => "ERROR",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    format!(
        "  {sev} [{}]: {}",
        for_terminal(&f.code, 300),
        for_terminal(&f.message, 600)
    )
}

/// The JSON form: the checkpoint, the flag checked and the findings.
pub fn json(
    report: &CheckpointReport,
    flag: Option<&str>,
    findings: &[Finding],
) -> serde_json::Value {
    serde_json::json!({"checkpoint": report, "quantization_flag": flag, "findings": findings})
}
