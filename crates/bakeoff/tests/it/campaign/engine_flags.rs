//! A ladder over a flag the engine does not have, against the real llama-server: its own
//! `--help` is asked before anything starts, so `--dry-run` says the flag is unknown to it and
//! the run skips the variants at the pre-start check instead of starting each into
//! `failed:bad-argument`. And `campaign run --out DIR` writes (and resumes) there instead of
//! the file's `out`.

use super::*;
use crate::util::{code, free_port, serial_tempdir, stdout, text};

#[tokio::test]
async fn a_flag_the_engine_does_not_have_is_named_before_the_start() {
    let (_g, dir) = serial_tempdir().await;
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "nosuch"
seat = "base"
[candidate.ladder]
"--no-such-flag" = ["1", "2"]
"#,
        header = campaign_header("flag-test"),
    );
    let f = Files::write(
        dir.path(),
        &process_seat("base", "bench", free_port()),
        &campaign,
    );
    let _cleanup = f.guard();

    let dry = f.run(&["--dry-run"]);
    let plan = stdout(&dry);
    assert_eq!(code(&dry), 0, "{}", text(&dry));
    assert_eq!(
        plan.matches("UNKNOWN FLAG: --no-such-flag is not a flag of ")
            .count(),
        2,
        "{plan}"
    );
    assert!(
        plan.contains("llama-server (its --help does not list it)"),
        "{plan}"
    );

    // The run, into --out: each variant skipped at the pre-start check, the engine never
    // started; nothing under the file's `out`.
    let elsewhere = dir.path().join("elsewhere");
    let o = f.run(&[
        "--out",
        elsewhere.to_str().unwrap(),
        "--allow",
        "contaminated",
    ]);
    let rec = read_json(&elsewhere.join("campaign.json"));
    assert!(!f.out.exists(), "the file's out was written: {}", text(&o));
    let variants = rec["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 2, "{rec}");
    for v in variants {
        assert_eq!(v["outcome_label"], "skipped:pre-start", "{v}");
        let m = v["outcome"]["message"].as_str().unwrap_or_default();
        assert!(m.contains("--no-such-flag is not a flag of"), "{v}");
    }
    assert!(
        !journal_lines(&elsewhere)
            .iter()
            .any(|e| e["event"] == "seat-starting"),
        "a seat was started"
    );
}
