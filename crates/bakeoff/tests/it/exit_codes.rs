//! The exit codes (README "Exit codes and environment"): an output that cannot be written is an I/O failure
//! (3), never a usage error (2) or a failed check (1); a bad flag is a usage error (2). Each
//! error is one line on stderr, `error: …`. What each flag's refusal says is `bakeoff-flags`'
//! tests; here, only that the binary turns both kinds of refusal into that line and exit 2.

use std::path::Path;
use std::process::Output;

use crate::util::{bakeoff, code, dead_port_url, eval_run, text};

/// One line on stderr, starting `error: `, containing `want`.
fn assert_one_line_error(o: &Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: "), "{}", text(o));
    assert_eq!(err.trim().lines().count(), 1, "one line: {}", text(o));
    assert!(err.contains(want), "{want:?} not in: {}", text(o));
}

/// A regular file: any path under it cannot be created.
fn regular_file(dir: &Path) -> std::path::PathBuf {
    let f = dir.join("a-file");
    std::fs::write(&f, "not a directory").unwrap();
    f
}

#[test]
fn an_artifact_that_cannot_be_written_is_an_io_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = regular_file(dir.path()).join("results");
    let o = eval_run(&dead_port_url(), &out, &[]);
    assert_eq!(code(&o), 3, "{}", text(&o));
    assert_one_line_error(&o, "cannot create output directory");
}

#[test]
fn a_report_that_cannot_be_written_is_an_io_failure() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    // A failure artifact to report on (the endpoint is unfit: exit 1).
    let o = eval_run(&dead_port_url(), &results, &[]);
    assert_eq!(code(&o), 1, "{}", text(&o));

    let under_file = regular_file(dir.path()).join("report.html");
    let o = bakeoff(&[
        "report",
        results.to_str().unwrap(),
        "--html",
        under_file.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3, "{}", text(&o));
    assert_one_line_error(&o, "cannot create");

    let o = bakeoff(&[
        "report",
        results.to_str().unwrap(),
        "--csv",
        regular_file(dir.path()).join("csv").to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 3, "{}", text(&o));
    assert_one_line_error(&o, "cannot create");
}

/// Refused as the value is parsed (clap: `--margin`, `--connect-timeout`) or by the check after
/// it (`--date`): exit 2 and one line either way.
#[test]
fn a_bad_flag_is_a_usage_error() {
    for (args, want) in [
        (vec!["plan", "--margin", "-1"], "--margin -1"),
        (
            vec![
                "eval",
                "run",
                "--endpoint",
                "http://127.0.0.1:1",
                "--connect-timeout",
                "0",
            ],
            "--connect-timeout 0: must be a whole number from 1 to 3600; fix: e.g. --connect-timeout 10",
        ),
        (
            vec![
                "log",
                "add",
                "--title",
                "t",
                "--summary",
                "s",
                "--date",
                "soon",
            ],
            "--date \"soon\" is not a date",
        ),
    ] {
        let o = bakeoff(&args);
        assert_eq!(code(&o), 2, "{args:?}: {}", text(&o));
        assert_one_line_error(&o, want);
    }
}

/// Two failure artifacts are the wrong input to a comparison: `eval compare` refuses them as
/// `bench compare` does, exit 2 with one line and the fix, never 1 ("share no scored item").
#[test]
fn comparing_failure_artifacts_is_a_usage_error_in_both_compares() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for side in ["a", "b"] {
        let out = dir.path().join(side);
        let o = eval_run(&dead_port_url(), &out, &[]);
        assert_eq!(code(&o), 1, "{}", text(&o));
        let f = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(".failure.json"))
            .unwrap_or_else(|| panic!("no failure artifact: {}", text(&o)));
        files.push(f.display().to_string());
    }
    let o = bakeoff(&["eval", "compare", &files[0], &files[1]]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert_one_line_error(&o, "is a failure artifact");
    assert_one_line_error(&o, "fix: ");
    let o = bakeoff(&["bench", "compare", &files[0], &files[1]]);
    assert_eq!(code(&o), 2, "{}", text(&o));
}

/// `--help` is no error: clap's page on stdout, nothing on stderr, exit 0 (the pages
/// themselves are `bakeoff-flags`' tests).
#[test]
fn help_is_printed_on_stdout_and_exits_0() {
    for args in [vec!["--help"], vec!["eval", "run", "--help"]] {
        let o = bakeoff(&args);
        assert_eq!(code(&o), 0, "{args:?}: {}", text(&o));
        assert!(o.stderr.is_empty(), "{args:?}: {}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("Usage: bakeoff"), "{out}");
    }
}
