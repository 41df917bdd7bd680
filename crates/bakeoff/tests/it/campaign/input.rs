//! Bad campaign files are usage errors (exit 2, one line naming what is wrong) before anything
//! starts, and `--dry-run` prints every variant's launch and starts and writes nothing. No
//! engine runs here: the seat's command is never executed.

use std::process::Output;

use super::*;
use crate::util::{code, free_port, stdout, text};

/// A process seat whose command does not exist (nothing here starts it).
fn paper_seat(name: &str, port: u16) -> String {
    let header = bakeoff_testkit::fleet::seat_header(name, "llama.cpp", "bench", port, SERVED);
    format!(
        r#"{header}[seat.process]
command = "/opt/none/llama-server"
args = ["-m", "/models/m.gguf", "--host", "127.0.0.1", "--port", "{{port}}", "--ctx-size", "1024", "--alias", "{SERVED}"]
"#
    )
}

/// One line on stderr, `error: …`, containing every one of `want`.
fn assert_one_line_error(o: &Output, want: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: "), "{}", text(o));
    assert_eq!(err.trim().lines().count(), 1, "one line: {}", text(o));
    for w in want {
        assert!(err.contains(w), "{w:?} not in: {}", text(o));
    }
}

#[test]
fn unknown_keys_are_usage_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = paper_seat("base", free_port());
    let header = campaign_header("bad-input");
    for (campaign, key) in [
        (
            format!("{header}colour = \"red\"\n\n[[candidate]]\nname = \"a\"\nseat = \"base\"\n"),
            "colour",
        ),
        (
            format!(
                "{header}\n[[candidate]]\nname = \"a\"\nseat = \"base\"\nsett_args = {{ \"-c\" = \"1\" }}\n"
            ),
            "sett_args",
        ),
        (
            format!(
                "{header}\n[[candidate]]\nname = \"a\"\nseat = \"base\"\n[candidate.window]\ndisplaces = [\"base\"]\nidle_for = 3\n"
            ),
            "idle_for",
        ),
    ] {
        let f = Files::write(dir.path(), &fleet, &campaign);
        let o = f.run(&[]);
        assert_eq!(code(&o), 2, "{key}: {}", text(&o));
        assert_one_line_error(&o, &[key]);
        assert!(!f.out.exists(), "{key}: the output directory was created");
    }
}

#[test]
fn a_candidate_naming_a_seat_not_in_the_fleet_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = format!(
        "{}\n[[candidate]]\nname = \"a\"\nseat = \"ghost\"\n",
        campaign_header("bad-seat")
    );
    let f = Files::write(dir.path(), &paper_seat("base", free_port()), &campaign);
    let o = f.run(&[]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    // Names the missing seat and the ones the fleet has.
    assert_one_line_error(&o, &["ghost", "base"]);
    assert!(!f.out.exists());
    // The same for a window that displaces a seat the fleet does not declare.
    let campaign = format!(
        "{}\n[[candidate]]\nname = \"a\"\nseat = \"base\"\n[candidate.window]\ndisplaces = [\"phantom\"]\n",
        campaign_header("bad-seat")
    );
    let f = Files::write(dir.path(), &paper_seat("base", free_port()), &campaign);
    let o = f.run(&[]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert_one_line_error(&o, &["phantom"]);
}

#[test]
fn dry_run_prints_every_launch_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "ctx"
seat = "base"
add_args = ["--metrics"]
[candidate.ladder]
"-c" = ["2048", "512"]
"--no-warmup" = [true, false]
"#,
        header = campaign_header("dry")
    );
    let f = Files::write(dir.path(), &paper_seat("base", port), &campaign);
    let o = f.run(&["--dry-run"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan = stdout(&o);
    // Nothing started, nothing written.
    assert!(!f.out.join("campaign.journal.jsonl").exists());
    assert!(
        !f.out.exists() || std::fs::read_dir(&f.out).unwrap().next().is_none(),
        "--dry-run wrote into {}",
        f.out.display()
    );
    assert!(
        !f.state.exists() || std::fs::read_dir(&f.state).unwrap().next().is_none(),
        "--dry-run left seat state"
    );
    // Four variants, each with its exact command line.
    let launches: Vec<&str> = plan
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("launch: "))
        .collect();
    assert_eq!(launches.len(), 4, "{plan}");
    for ctx in ["--ctx-size 2048", "--ctx-size 512"] {
        for warmup in [true, false] {
            let found = launches.iter().filter(|l| {
                l.starts_with(&format!(
                    "/opt/none/llama-server -m /models/m.gguf --host 127.0.0.1 --port {port} {ctx} --alias {SERVED}"
                )) && l.contains("--no-warmup") == warmup
                    && l.ends_with(" --metrics")
            });
            assert_eq!(found.count(), 1, "{ctx} warmup flag {warmup}:\n{plan}");
        }
    }
    // -c is found under the seat's other spelling, never added beside it.
    assert!(
        launches.iter().all(|l| !l.contains(" -c ")),
        "-c was added beside --ctx-size:\n{plan}"
    );
    // The variants in file order, the first axis (-c) varying slowest, named after their axes
    // in that order; the delta in that order too.
    let heads: Vec<&str> = plan.lines().filter(|l| l.starts_with('#')).collect();
    let want = [
        "#1 ctx-c-2048-no-warmup ",
        "#2 ctx-c-2048-no-no-warmup ",
        "#3 ctx-c-512-no-warmup ",
        "#4 ctx-c-512-no-no-warmup ",
    ];
    assert_eq!(heads.len(), 4, "{plan}");
    for (h, w) in heads.iter().zip(want) {
        assert!(h.starts_with(w), "ladder not in file order: {heads:#?}");
    }
    assert!(
        plan.contains("delta: -c 512 (was 1024); + --no-warmup; + --metrics"),
        "{plan}"
    );
}

/// `--dry-run --only NAME` plans only what a run with `--only NAME` would run, and an unknown
/// name is refused (exit 2, one line naming it and the names the campaign has), as a run
/// refuses it.
#[test]
fn dry_run_honours_only_and_refuses_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = format!(
        "{}\n[[candidate]]\nname = \"one\"\nseat = \"base\"\n\n[[candidate]]\nname = \"two\"\nseat = \"base\"\nadd_args = [\"--metrics\"]\n",
        campaign_header("only")
    );
    let f = Files::write(dir.path(), &paper_seat("base", free_port()), &campaign);
    let o = f.run(&["--dry-run", "--only", "two"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let plan = stdout(&o);
    let launches = plan.lines().filter(|l| l.contains("launch: ")).count();
    assert_eq!(launches, 1, "{plan}");
    assert!(
        plan.contains("two (candidate two") && !plan.contains("one (candidate one"),
        "{plan}"
    );
    let o = f.run(&["--dry-run", "--only", "three"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert_one_line_error(&o, &["--only three", "one", "two"]);
}
