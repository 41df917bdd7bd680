//! The adapter check (`bakeoff eval adapter`) on the terminal — how the adapter was asked for,
//! a row per prompt, the verdict — and its suite's cell in every report (from
//! `summary.details`, where the check writes its verdict sentence). First tokens are model
//! output: escaped like any reply.

use bakeoff_artifact::{AdapterReport, AdapterRouteKind, SuiteResult};

use crate::escape::for_terminal;
use crate::read::{self, noted};
use crate::table::{Grid, Kind, render};

/// The suite's name in artifacts.
pub const SUITE: &str = crate::read::suite::ADAPTER;

/// The suite's cell: the verdict sentence (it starts with the verdict: `applied: …`,
/// `adapter-no-op: …`, `withheld: …`); none when the details do not read (the report's note).
pub fn cell_text(name: &str, s: &SuiteResult) -> Option<String> {
    let d = noted(read::adapter(name, s))?;
    Some(if d.message.is_empty() {
        for_terminal(&d.verdict, 40)
    } else {
        for_terminal(&d.message, 160)
    })
}

fn nats(v: Option<f64>) -> String {
    match v {
        Some(0.0) => "0".into(),
        Some(x) if x.abs() < 1e-3 => format!("{x:.1e}"),
        Some(x) => format!("{x:.4}"),
        None => "–".into(),
    }
}

fn token(t: &Option<String>) -> String {
    t.as_deref()
        .map_or("–".into(), |t| format!("{:?}", for_terminal(t, 24)))
}

fn yes_no(v: Option<bool>) -> String {
    match v {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "–".into(),
    }
}

/// The check's result for the terminal, laid out for `width` columns, ending with the
/// verdict sentence on a line of its own and the artifact's path.
pub fn terminal(r: &AdapterReport, artifact: &str, width: u16) -> String {
    let route = match r.route.kind {
        AdapterRouteKind::ModelId => format!(
            "adapter {} as its own model id, base {}",
            for_terminal(&r.route.adapter_model, 120),
            for_terminal(&r.route.base_model, 120)
        ),
        AdapterRouteKind::LlamacppLora => match &r.route.lora {
            Some(l) => format!(
                "llama.cpp adapter {} ({}) at scale {} by the per-request `lora` field, base with every adapter off",
                l.id,
                for_terminal(&l.path, 200),
                l.scale
            ),
            None => format!(
                "llama.cpp adapter {} by the per-request `lora` field",
                for_terminal(&r.route.adapter, 200)
            ),
        },
    };
    let mut out = format!(
        "{route}; top-{} logprobs, {} tokens each; {} of {} prompts measured\n",
        r.top_k, r.max_tokens, r.measured, r.prompts
    );
    let mut t = Grid::new();
    t.column("prompt", Kind::Name(40))
        .column("KL base‖adapter", Kind::Number)
        .column("KL base‖base", Kind::Number)
        .column("top-1 base", Kind::Words)
        .column("top-1 adapter", Kind::Words)
        .secondary("text differs", Kind::Number)
        .secondary("note", Kind::Text);
    for row in &r.rows {
        t.row(vec![
            for_terminal(&row.id, 80),
            nats(row.kl),
            nats(row.self_kl),
            token(&row.base_top1),
            token(&row.adapter_top1),
            yes_no(row.text_differs),
            row.unmeasured
                .as_deref()
                .map_or(String::new(), |u| for_terminal(u, 200)),
        ]);
    }
    out.push_str(&render(&t, width));
    if let Some(c) = &r.self_check {
        out.push_str(&format!(
            "\ninstrument check (base against itself): KL upper bound {} nats, limit {:.0e}: {}",
            nats(Some(c.kl.high)),
            c.limit_nats,
            if c.passed { "passed" } else { "FAILED" }
        ));
    }
    out.push_str(&format!("\n{}\n", for_terminal(&r.message, 1200)));
    out.push_str(&format!("artifact: {}\n", for_terminal(artifact, 400)));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn report() -> AdapterReport {
        serde_json::from_value(serde_json::json!({
            "verdict": "applied",
            "message": "applied: KL(base ‖ adapter) 0.1300 nats",
            "route": {"kind": "llamacpp-lora", "adapter": "lora.gguf", "base_model": "m",
                      "adapter_model": "m", "lora": {"id": 0, "path": "/m/lora.gguf", "scale": 1.0}},
            "top_k": 20, "max_tokens": 8, "prompts": 1, "measured": 1,
            "noise_floor_nats": 0.001, "top1_differs": 1, "text_differs": 1,
            "self_text_differs": 0, "bootstrap_seed": 1,
            "rows": [{"id": "p1", "kl": 0.13, "self_kl": 0.0,
                      "base_top1": "\u{1b}[31mred", "adapter_top1": "ok", "text_differs": true}]
        }))
        .unwrap()
    }

    #[test]
    fn the_terminal_view_escapes_tokens_and_ends_with_the_verdict() {
        let t = terminal(&report(), "out/x.bakeoff.json", 120);
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(t.contains("\napplied: KL(base ‖ adapter) 0.1300"), "{t}");
        assert!(t.ends_with("artifact: out/x.bakeoff.json\n"), "{t}");
    }

    #[test]
    fn the_cell_is_the_verdict_sentence() {
        let mut s: SuiteResult = serde_json::from_value(serde_json::json!({
            "status": "complete",
            "summary": {"planned": 3, "finished": 3, "outcomes": {}, "passed": 0, "scored": 0,
                        "details": {"verdict": "adapter-no-op", "message": "adapter-no-op: same \u{1b}[31m"}},
            "items": []
        }))
        .unwrap();
        let t = cell_text("adapter", &s).unwrap();
        assert!(t.starts_with("adapter-no-op: same"), "{t}");
        assert!(!t.contains('\u{1b}'), "{t}");
        assert!(cell_text("smoke", &s).is_none());
        s.summary.details = serde_json::Value::Null;
        assert!(cell_text("adapter", &s).is_none());
    }
}
