//! `bench run`'s refusals: load shapes, step bounds, `--versus`, and the workload files a flag
//! names (read and checked before anything is sent). Each is one line naming the fix.

use crate::{assert_refused, refused, strs, with};

const RUN: [&str; 4] = ["bench", "run", "--endpoint", "http://127.0.0.1:9"];

/// The shape flags are checked before anything starts: each wrong use names the fix.
#[test]
fn shape_flags_are_checked_before_anything_starts() {
    for (extra, says) in [
        (&["--burstiness", "0.5"][..], "--rate R --arrival gamma"),
        (
            &["--rate", "2", "--burstiness", "0.5"][..],
            "add --arrival gamma",
        ),
        (
            &["--rate", "2", "--arrival", "gamma", "--burstiness", "0"][..],
            "--burstiness 0: must be a number from 0.01 to 100; fix: ",
        ),
        (
            &["--cancel-rate", "1.5"][..],
            "--cancel-rate 1.5: must be a number from 0 to 0.99",
        ),
        (
            &["--ramp-up", "0"][..],
            "--ramp-up 0: must be a number from 0.1 to 3600",
        ),
        (&["--gauge-interval", "0.01"][..], "at least 0.1 s"),
        (
            &["--multi-turn", "2", "--cancel-rate", "0.2"][..],
            "not to --trace, --multi-turn, --sessions or --sessions-file",
        ),
    ] {
        assert_refused(&strs(&with(&RUN, extra)), says);
    }
}

#[test]
fn bad_step_warmup_and_step_requests_are_one_line_refusals() {
    let cases: [(&[&str], &str); 6] = [
        (&["--step-requests", "0"], "--step-requests"),
        (&["--step-warmup", "-1"], "--step-warmup"),
        (&["--step-warmup", "100001"], "--step-warmup"),
        (
            &["--step-requests", "50"],
            "--step-requests needs --duration SECS as each step's upper bound",
        ),
        (
            &[
                "--step-requests",
                "50",
                "--requests",
                "50",
                "--duration",
                "60",
            ],
            "--step-requests counts completed requests and --requests counts sent ones",
        ),
        (
            &["--step-requests", "50", "--duration", "60", "--rate", "2"],
            "--step-requests applies to closed-loop steps",
        ),
    ];
    let base = with(&RUN, &["--no-calibrate"]);
    for (args, want) in cases {
        assert_refused(&strs(&with(&strs(&base), args)), want);
    }
}

/// `--versus` needs the endpoint it is paired with (clap's refusal), and cannot search for a
/// capacity (the check's).
#[test]
fn versus_refuses_what_it_cannot_pair() {
    assert_refused(
        &["bench", "run", "--versus", "http://127.0.0.1:9"],
        "--endpoint",
    );
    assert_refused(
        &strs(&with(
            &RUN,
            &[
                "--versus",
                "http://127.0.0.1:9",
                "--rate",
                "1",
                "--slo",
                "ttft=1s",
                "--find-capacity",
            ],
        )),
        "--find-capacity",
    );
}

/// A session file is read as the flag is checked: a bad line is named, with what is wrong.
#[test]
fn bad_session_files_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let ok = r#"{"session": "a", "t": 1.0, "request": {"messages": [{"role": "user", "content": "hi"}]}}"#;
    let cases = [
        (
            r#"{"t": 2.0, "request": {"messages": [{"role": "user", "content": "x"}]}}"#,
            "line 2: a turn without a session",
        ),
        (
            r#"{"session": "a", "t": 0.5, "request": {"messages": [{"role": "user", "content": "x"}]}}"#,
            "line 2: the timestamp goes backwards",
        ),
        (
            r#"{"session": "a", "t": 2.0, "continues": true, "request": {"messages": [{"role": "user", "content": "x"}]}}"#,
            "line 2: a reply is missing where replay needs one",
        ),
    ];
    for (k, (bad, want)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("s{k}.jsonl"));
        std::fs::write(&file, format!("{ok}\n{bad}\n")).unwrap();
        let file = file.to_str().unwrap();
        assert_refused(&strs(&with(&RUN, &["--sessions-file", file])), want);
    }
}

/// A trace or a ShareGPT file is read as the flag is checked: the file and line are named,
/// never the file's text (it may be a user's conversation).
#[test]
fn bad_workload_files_are_one_line_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.jsonl");
    std::fs::write(
        &trace,
        "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2}\n{\"input_length\": 8}\n",
    )
    .unwrap();
    let sharegpt = dir.path().join("s.jsonl");
    std::fs::write(&sharegpt, "{\"conversations\": \"SECRET-TEXT\"}\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--trace", trace.to_str().unwrap()],
            "t.jsonl line 2: no arrival time",
        ),
        (
            &["--prompts-sharegpt", sharegpt.to_str().unwrap()],
            "s.jsonl line 1: \"conversations\" is not an array",
        ),
        (
            &["--system-prompt-tokens", "8"],
            "--multi-turn conversations or --sessions",
        ),
    ];
    let base = with(&RUN, &["--no-calibrate"]);
    for (args, want) in cases {
        let args = with(&strs(&base), args);
        assert_refused(&strs(&args), want);
        let line = refused(&strs(&args));
        assert!(!line.contains("SECRET-TEXT"), "{line}");
    }
}
