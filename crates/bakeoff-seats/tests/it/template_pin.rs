//! Pinned chat templates against the real llama-server (docs/field-cases.md F4): two real models, Gemma 3
//! 270M (a base GGUF: it carries no `tokenizer.chat_template`, so llama-server serves its own
//! default) and SmolLM2 135M Instruct (a ChatML template in its GGUF). SmolLM2's template,
//! extracted from its GGUF, is pinned on a Gemma seat: not passed to the engine, the served
//! template differs and the start fails with `template-mismatch`; passed with
//! `--jinja --chat-template-file`, it is served and the start is clean.

use std::path::{Path, PathBuf};

use bakeoff_artifact::{FindingSeverity, SeatFinding};
use bakeoff_seats::{UpOutcome, hooks, render};

use crate::common::{StopOnDrop, fleet, free_port, quick_watch, serial_tempdir};

/// SmolLM2's own template, extracted from its GGUF into `dir`.
fn smollm2_template(dir: &Path) -> PathBuf {
    let t = bakeoff_text::extract_templates(&bakeoff_testkit::smollm2_path())
        .unwrap()
        .remove(0);
    assert!(t.text.contains("<|im_start|>"), "not ChatML: {}", t.text);
    let p = dir.join("smollm2-chatml.jinja");
    std::fs::write(&p, &t.text).unwrap();
    p
}

/// A llama-server process seat on `model`, pinned to `pin`, with `extra` arguments.
fn pinned_seat(
    name: &str,
    port: u16,
    model: &Path,
    served: &str,
    pin: &Path,
    extra: &[&str],
) -> String {
    let bin = bakeoff_testkit::engine().llama_server.display().to_string();
    let mut args: Vec<String> = [
        "-m",
        &model.display().to_string(),
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "-c",
        "1024",
        "-np",
        "1",
        "--alias",
        served,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let args = args
        .iter()
        .map(|a| format!("{a:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let header = bakeoff_testkit::fleet::seat_header(name, "llama.cpp", "bench", port, served);
    format!(
        "{header}chat_template = {:?}\n[seat.process]\ncommand = {bin:?}\nargs = [{args}]\n",
        pin.display().to_string()
    )
}

fn findings(o: &UpOutcome) -> &[SeatFinding] {
    &o.report.as_ref().unwrap().findings
}

/// The template findings' codes: the engine-support note every local llama.cpp seat also gets
/// (`checks::engine_support`, tested in its own module) is left out.
fn codes(f: &[SeatFinding]) -> Vec<&str> {
    f.iter()
        .map(|f| f.code.as_str())
        .filter(|c| !c.starts_with("engine-support"))
        .collect()
}

#[tokio::test]
async fn a_chatml_pin_not_passed_to_a_gemma_seat_fails_with_the_diff_and_passed_it_is_served() {
    let (_g, dir) = serial_tempdir().await;
    let pin = smollm2_template(dir.path());
    let gemma = bakeoff_testkit::model_path();
    let (p1, p2) = (free_port(), free_port());
    let text = pinned_seat("gemma-unpassed", p1, &gemma, "gemma-3-270m", &pin, &[])
        + &pinned_seat(
            "gemma-passed",
            p2,
            &gemma,
            "gemma-3-270m",
            &pin,
            &[
                "--jinja",
                "--chat-template-file",
                &pin.display().to_string(),
            ],
        );
    let seats = fleet(dir.path(), &text, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);

    // Not passed: predicted before the start, found after ready.
    let out = seats.up("gemma-unpassed", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(r.ready(), "not ready: {} / {:?}", r.message, r.tail);
    let f = findings(&out);
    // The Gemma GGUF is a base build without a template: the pin cannot be compared with it.
    assert_eq!(
        codes(f),
        [
            "template-pin-unchecked",
            "template-pin-not-passed",
            "template-mismatch"
        ],
        "{f:?}"
    );
    let m = f.iter().find(|f| f.code == "template-mismatch").unwrap();
    assert_eq!(m.severity, FindingSeverity::Error);
    assert!(
        !m.evidence.is_empty(),
        "the render diff is the evidence: {m:?}"
    );
    assert!(m.evidence.len() <= 20);
    assert!(
        m.evidence.iter().any(|l| l.contains("<|im_start|>")),
        "{:?}",
        m.evidence
    );
    assert!(
        m.fix.as_deref().unwrap().contains("--chat-template-file"),
        "{:?}",
        m.fix
    );
    assert!(!out.ok(), "an error finding fails the operation");
    let lines = render::up_lines(&out);
    eprintln!("{}", lines.join("\n"));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  finding template-mismatch: ")),
        "{lines:?}"
    );
    let json = render::up_json(&out);
    assert_eq!(json["ok"], false);
    let mismatch = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "template-mismatch")
        .unwrap();
    assert_eq!(mismatch["severity"], "error");
    // A mismatched start is not recorded as a good one.
    assert!(
        !seats
            .fleet
            .state_dir
            .join("gemma-unpassed.template.json")
            .exists()
    );
    seats.down("gemma-unpassed", false).await.unwrap();

    // Passed: the engine serves the pin, and the good start is recorded.
    let out = seats.up("gemma-passed", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(r.ready(), "not ready: {} / {:?}", r.message, r.tail);
    assert_eq!(
        codes(findings(&out)),
        ["template-pin-unchecked"],
        "{:?}",
        findings(&out)
    );
    assert!(out.ok());
    let rec: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(seats.fleet.state_dir.join("gemma-passed.template.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rec["pin_sha256"], rec["served_sha256"]);
    assert_eq!(
        rec["pin_sha256"],
        bakeoff_text::fingerprint(&std::fs::read_to_string(&pin).unwrap()).sha256
    );
    seats.down("gemma-passed", false).await.unwrap();
}

#[tokio::test]
async fn a_smollm2_seat_pinned_to_its_own_template_is_a_no_op_and_another_pin_an_override() {
    let (_g, dir) = serial_tempdir().await;
    let pin = smollm2_template(dir.path());
    let gemma2 = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../bakeoff-text/tests/fixtures/templates/google-gemma-2-2b-it.jinja");
    let smol = bakeoff_testkit::smollm2_path();
    let port = free_port();
    let text = pinned_seat("smol-own", port, &smol, "smollm2", &pin, &[])
        + &pinned_seat("smol-gemma", free_port(), &smol, "smollm2", &gemma2, &[]);
    let seats = fleet(dir.path(), &text, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);

    // Another template pinned on the same weights: a deliberate override, found before any start.
    let other = seats.fleet.seat("smol-gemma").unwrap();
    let pre = hooks::before_start(&seats.fleet, other).await.unwrap();
    assert_eq!(
        codes(&pre),
        ["template-override", "template-pin-not-passed"],
        "{pre:?}"
    );

    // Its own template: a no-op. Not passed, the engine still serves the GGUF's template, which
    // is the pin: the warning says so and the served check is clean.
    let out = seats.up("smol-own", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(r.ready(), "not ready: {} / {:?}", r.message, r.tail);
    let f = findings(&out);
    assert_eq!(
        codes(f),
        ["template-pin-no-op", "template-pin-not-passed"],
        "{f:?}"
    );
    assert_eq!(f[0].severity, FindingSeverity::Note);
    assert!(
        f[1].message
            .contains("only as long as the checkpoint does not move"),
        "{}",
        f[1].message
    );
    assert!(out.ok());
    seats.down("smol-own", false).await.unwrap();
}
