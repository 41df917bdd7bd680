//! `bakeoff seat …` through the real binary: the fail-closed `--confirm` gate, status with
//! aliases grouped under their seat, and a process seat with the real llama-server up, swapped
//! to a second seat on the same port, and down. Docker seats are exercised against the real
//! engine in crates/bakeoff-seats/tests/it/docker_backend.rs.

use crate::util::Bounded;
use std::path::Path;

use crate::util::{self, code, code as code_of, free_port, stdout};

/// `bakeoff ARGS…`: the exit code, stdout and stderr.
fn bakeoff(args: &[&str]) -> (i32, String, String) {
    let o = util::bakeoff(args);
    (
        code(&o),
        stdout(&o),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn seat(name: &str, role: &str, port: u16) -> String {
    let e = bakeoff_testkit::engine();
    let header = bakeoff_testkit::fleet::seat_header(name, "llama.cpp", role, port, "gemma-3-270m");
    format!(
        r#"{header}[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1", "--alias", "gemma-3-270m"]
"#,
        bin = e.llama_server.display(),
        model = e.model.display()
    )
}

fn write(dir: &Path, toml: &str) -> String {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, toml).unwrap();
    p.display().to_string()
}

#[test]
fn production_seat_refuses_without_confirm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let f = write(dir.path(), &seat("prod", "production", port));
    for verb in [
        vec!["up", "--all"],
        vec!["down", "--all"],
        vec!["restart", "prod"],
    ] {
        let mut args = vec!["seat"];
        args.extend(verb.iter().copied());
        args.extend(["--fleet", &f]);
        let (code, out, err) = bakeoff(&args);
        assert_eq!(code, 1, "{verb:?}: {out}{err}");
        assert!(out.contains("--confirm") && out.contains("Would:"), "{out}");
        // The command as it would start: placeholders filled in.
        assert!(
            out.contains(&format!("--port {port}")) && !out.contains("{port}"),
            "{out}"
        );
        assert!(err.contains("nothing was done"), "{err}");
    }
    // Nothing was started: no pid file.
    assert!(!dir.path().join(".bakeoff-seats/prod.process.json").exists());
    // A swap onto the same seat is a usage error, whatever the role.
    let (code, out, err) = bakeoff(&["seat", "swap", "--fleet", &f, "prod", "prod"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("same seat"), "{err}");
}

/// `swap BENCH PROD` touches a production seat (it starts it): refused without --confirm,
/// with the "Would:" line naming what it would have started, and the bench seat untouched.
#[test]
fn a_swap_onto_a_production_seat_needs_confirm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let f = write(
        dir.path(),
        &format!(
            "{}{}",
            seat("trial", "bench", port),
            seat("prod", "production", port)
        ),
    );
    let (code, out, err) = bakeoff(&["seat", "swap", "--fleet", &f, "trial", "prod"]);
    assert_eq!(code, 1, "{out}{err}");
    let would = out
        .lines()
        .find(|l| l.contains("Would:"))
        .unwrap_or_else(|| panic!("no Would: line in {out}"));
    assert!(
        would.contains("refused: prod is a production seat"),
        "{would}"
    );
    assert!(would.contains("start (swap in) seat prod"), "{would}");
    assert!(
        would.contains(&format!("http://127.0.0.1:{port}")),
        "{would}"
    );
    assert!(err.contains("nothing was done"), "{err}");
    // The reverse direction stops the production seat: refused too.
    let (code, out, _) = bakeoff(&["seat", "swap", "--fleet", &f, "prod", "trial"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("Would: stop (swap out) seat prod"), "{out}");
    assert!(
        !dir.path()
            .join(".bakeoff-seats/trial.process.json")
            .exists()
    );
    assert!(!dir.path().join(".bakeoff-seats/prod.process.json").exists());
}

/// A Docker seat whose engine does not answer reads as `unknown (…)`, never as `down`.
#[test]
fn an_unreachable_docker_engine_is_unknown_not_down() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: the connection is refused at once.
    let dead = free_port();
    let toml = format!(
        r#"
[hosts.gone]
docker = "tcp://127.0.0.1:{dead}"

[[seat]]
name = "far"
host = "gone"
engine = "llama.cpp"
role = "bench"
port = 8080
[seat.docker]
image = "bakeoff-llama:local"
"#
    );
    let f = write(dir.path(), &toml);
    let (code, out, err) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    // A state that cannot be read is not a healthy fleet: exit 1, the JSON still printed.
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let state = v["seats"][0]["state"].as_str().unwrap();
    assert!(state.starts_with("unknown ("), "{state}");
    assert!(state.contains(&format!("127.0.0.1:{dead}")), "{state}");
    let (_, out, _) = bakeoff(&["seat", "status", "--fleet", &f]);
    assert!(
        out.contains("far [bench docker]") && out.contains(": unknown ("),
        "{out}"
    );
    assert!(!out.contains(": down"), "{out}");
}

#[test]
fn status_groups_aliases_under_their_seat_and_bad_fleets_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let toml = format!(
        "{}\n[[route]]\nalias = \"char-rp\"\napi_base = \"http://127.0.0.1:{port}/v1\"\n\n[[route]]\nalias = \"char-rp-reasoning\"\nseat = \"one\"\n",
        seat("one", "bench", port)
    );
    let f = write(dir.path(), &toml);
    let (code, out, err) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["seats"][0]["aliases"],
        serde_json::json!(["char-rp", "char-rp-reasoning"])
    );
    assert_eq!(v["seats"][0]["state"], "down");
    let bad = write(dir.path(), "[[seat]]\nname = \"x\"\n");
    let (code, _, err) = bakeoff(&["seat", "status", "--fleet", &bad]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

#[test]
fn process_seat_up_swap_down_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // A gateway alias by address: it follows whichever seat serves the port.
    let f = write(
        dir.path(),
        &format!(
            "{}{}\n[[route]]\nalias = \"bench-gemma\"\napi_base = \"http://127.0.0.1:{port}/v1\"\n",
            seat("a", "bench", port),
            seat("b", "bench", port)
        ),
    );
    let (code, out, err) = bakeoff(&["seat", "up", "--fleet", &f, "a", "--silence-timeout", "60"]);
    let cleanup = |names: &[&str]| {
        for n in names {
            let _ = bakeoff(&["seat", "down", "--fleet", &f, n]);
        }
    };
    if code != 0 {
        cleanup(&["a", "b"]);
    }
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("a: READY in"), "{out}");
    // Up again: said to be already up, and still confirmed ready by a real completion.
    let (code, out, err) = bakeoff(&["seat", "up", "--fleet", &f, "a"]);
    if code != 0 {
        cleanup(&["a", "b"]);
    }
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("a: already up, READY in"), "{out}");
    let (_, out, _) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"][0]["aliases"], serde_json::json!(["bench-gemma"]));
    // b shares the port: refused while a is up.
    let (code, _, err) = bakeoff(&["seat", "up", "--fleet", &f, "b"]);
    assert_eq!(code, 1);
    assert!(err.contains("seat swap a b"), "{err}");
    let (code, out, err) = bakeoff(&["seat", "swap", "--fleet", &f, "a", "b", "--json"]);
    if code != 0 {
        cleanup(&["a", "b"]);
    }
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["new_outcome"]["state"], "ready");
    assert!(v["rollback"].is_null());
    // The progress went to stderr, labelled with NEW's name; stdout stayed pure JSON.
    assert!(
        err.contains("[b] starting\n") && err.contains("[b] ready after "),
        "{err}"
    );
    assert_eq!(v["old_was_running"], true);
    let (code, out, _) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"][0]["state"], "down");
    assert_eq!(v["seats"][1]["state"], "running");
    // The alias moved with the swap: it sits under the seat that now serves the port.
    assert_eq!(v["seats"][0]["aliases"], serde_json::json!([]));
    assert_eq!(v["seats"][1]["aliases"], serde_json::json!(["bench-gemma"]));
    let (code, out, _) = bakeoff(&["seat", "logs", "--fleet", &f, "b", "--tail", "500"]);
    assert_eq!(code, 0);
    assert!(out.contains("listening on"), "{out}");
    let (code, _, err) = bakeoff(&["seat", "down", "--fleet", &f, "b"]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"][1]["state"], "down");
    // A swap from a seat that is not running says so (it stopped nothing).
    let (code, out, err) = bakeoff(&["seat", "swap", "--fleet", &f, "a", "b"]);
    cleanup(&["a", "b"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("swap a -> b: a was not running"), "{out}");
    assert!(out.contains("b: READY in"), "{out}");
}

/// `seat up`'s progress off a terminal (docs/reports.md): one plain line per step on stderr — the
/// watch's start, each phase with its time, the load progress — all before the result on
/// stdout. Both streams share one pipe here, so the order read is the order written.
#[test]
fn seat_up_progress_lines_come_in_order_before_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), &seat("one", "bench", free_port()));
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = util::bakeoff_cmd()
        .args([
            "seat",
            "up",
            "--fleet",
            &f,
            "one",
            "--silence-timeout",
            "60",
        ])
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    // The command (and its ends of the pipe) is gone: the read ends when the binary exits.
    let mut both = String::new();
    std::io::Read::read_to_string(&mut reader, &mut both).unwrap();
    let status = child.wait().unwrap();
    let _ = bakeoff(&["seat", "down", "--fleet", &f, "one"]);
    assert_eq!(status.code(), Some(0), "{both}");
    let lines: Vec<&str> = both.lines().collect();
    let result = lines
        .iter()
        .position(|l| l.starts_with("one: READY in"))
        .unwrap_or_else(|| panic!("no result line: {both}"));
    let progress: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("[one] "))
        .collect();
    assert!(
        lines[result + 1..].iter().all(|l| !l.starts_with("[one] ")),
        "progress after the result: {both}"
    );
    // The silence timer (from 10 s without a log line) depends on the machine's speed.
    for l in progress.iter().filter(|l| l.contains("silent for")) {
        assert!(l.contains("(init-wedge at 60 s)"), "{l}");
    }
    let steady: Vec<&str> = progress
        .into_iter()
        .filter(|l| !l.contains("silent for"))
        .collect();
    insta::with_settings!({filters => vec![(r"\d+\.\d s", "<t> s")]}, {
        insta::assert_snapshot!(steady.join("\n"));
    });
}

/// A key in a seat's arguments never reaches what the binary prints or writes (docs/failure-classes.md):
/// the `--confirm` refusal that says what it would run, `seat up` (text and `--json`), the
/// failure artifact, `seat status` and `seat logs`. The real llama-server takes `--api-key`;
/// the failing seat's model path does not exist, so it exits at once.
#[test]
fn a_seat_key_is_never_printed_or_written() {
    let dir = tempfile::tempdir().unwrap();
    let key = "sk-test-0a1b2c3d4e5f60718293";
    let keyed = |name: &str, role: &str, port: u16| {
        seat(name, role, port).replace(
            "\"--alias\"",
            &format!("\"--api-key\", \"{key}\", \"--alias\""),
        )
    };
    let toml = format!(
        "{}{}",
        keyed("prod", "production", free_port()),
        keyed("broken", "bench", free_port()).replace(
            &bakeoff_testkit::model_path().display().to_string(),
            "/nonexistent/m.gguf"
        )
    );
    let f = write(dir.path(), &toml);
    let out_dir = dir.path().join("out");
    let out_arg = out_dir.display().to_string();
    let mut printed = String::new();

    let (code, out, err) = bakeoff(&["seat", "up", "--fleet", &f, "prod"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("Would: start seat prod") && out.contains("--api-key <redacted>"),
        "{out}"
    );
    printed += &(out + &err);

    for json in [false, true] {
        let mut args = vec!["seat", "up", "--fleet", &f, "broken", "--out", &out_arg];
        if json {
            args.push("--json");
        }
        let (code, out, err) = bakeoff(&args);
        assert_eq!(code, 1, "{out}{err}");
        assert!(out.contains("broken"), "{out}");
        printed += &(out + &err);
    }
    for args in [
        vec!["seat", "status", "--fleet", &f],
        vec!["seat", "status", "--fleet", &f, "--json"],
        vec!["seat", "logs", "--fleet", &f, "broken", "--tail", "1000"],
    ] {
        let (code, out, err) = bakeoff(&args);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        printed += &(out + &err);
    }
    assert!(!printed.contains(key), "the key was printed: {printed}");

    let written: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".failure.json"))
        .collect();
    assert_eq!(written.len(), 2, "{written:?}");
    for p in written {
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains(key), "{}: {text}", p.display());
        assert!(text.contains("<redacted>"), "{}: {text}", p.display());
    }
}

/// Without `--out`, failure artifacts go to `results/` in the working directory (as
/// `eval run --out results`), never beside the fleet file: the README's example fleet lives
/// in the source tree (docs/failure-classes.md).
#[test]
fn failure_artifacts_default_to_results_in_the_working_directory() {
    let cwd = tempfile::tempdir().unwrap();
    let fleet_dir = cwd.path().join("fleets");
    std::fs::create_dir(&fleet_dir).unwrap();
    let toml = seat("broken", "bench", free_port()).replace(
        &bakeoff_testkit::model_path().display().to_string(),
        "/nonexistent/m.gguf",
    );
    write(&fleet_dir, &toml);
    let out = util::bakeoff_cmd()
        .args(["seat", "up", "--fleet", "fleets/fleet.toml", "broken"])
        .current_dir(cwd.path())
        .output_bounded()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("evidence: results/broken"), "{text}");
    let results: Vec<_> = std::fs::read_dir(cwd.path().join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        results
            .iter()
            .any(|n| n.starts_with("broken") && n.ends_with(".failure.json")),
        "{results:?}"
    );
    assert!(
        !fleet_dir.join("results").exists(),
        "written beside the fleet file"
    );
}

/// Standard output closed before the binary writes (`bakeoff schema | head -1` once `head`
/// has gone): a quiet exit with the command's own code, never a panic (exit 101).
#[test]
fn a_closed_stdout_is_a_quiet_exit() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), &seat("one", "bench", free_port()));
    for args in [vec!["schema"], vec!["seat", "status", "--fleet", &f]] {
        let (reader, writer) = std::io::pipe().unwrap();
        // The reader is gone before the first write: every write gets EPIPE.
        drop(reader);
        let out = util::bakeoff_cmd()
            .args(&args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output_bounded()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

/// `seat status --probe` of a real llama-server seat with a 35-character name and
/// aliases, through the binary at the widths an operator has — piped (120), and `COLUMNS` 60,
/// 80, 100 and 250. The key columns (seat, state, model) show at every width; the name is
/// shortened with `…` where the table is narrow, never broken; the `header: value` form keeps
/// every field (uptime, model, aliases); a probe's figure never wraps apart from its unit; and
/// `--json` keeps the full text.
#[test]
fn seat_status_keeps_its_key_columns_at_every_width() {
    let dir = tempfile::tempdir().unwrap();
    let _guard = bakeoff_testkit::fleet::SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let port = free_port();
    let name = "qwen3-coder-30b-a3b-instruct-bench1";
    assert_eq!(name.len(), 35);
    let f = write(
        dir.path(),
        &format!(
            "{}\n[[route]]\nalias = \"team-default-coder\"\nseat = \"{name}\"\n\n[[route]]\nalias = \"coder-large-reasoning\"\nseat = \"{name}\"\n",
            seat(name, "bench", port)
        ),
    );
    let (code, out, err) = bakeoff(&["seat", "up", "--fleet", &f, name, "--silence-timeout", "60"]);
    if code != 0 {
        let _ = bakeoff(&["seat", "down", "--fleet", &f, name]);
    }
    assert_eq!(code, 0, "{out}{err}");
    let status = |columns: Option<&str>| {
        let mut c = util::bakeoff_cmd();
        c.args(["seat", "status", "--fleet", &f, "--probe"]);
        if let Some(w) = columns {
            c.env("COLUMNS", w);
        }
        let o = c.output_bounded().unwrap();
        assert_eq!(code_of(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        stdout(&o)
    };
    let mut seen = Vec::new();
    for (w, columns) in [
        (120, None),
        (60, Some("60")),
        (80, Some("80")),
        (100, Some("100")),
        (250, Some("250")),
    ] {
        let text = status(columns);
        eprintln!("--- {w} columns\n{text}");
        let list = text.starts_with("seat:");
        if list {
            for field in [
                "seat:",
                "state: running",
                "uptime: ",
                "model: gemma-3-270m",
                "aliases: ",
                "probe: serving",
            ] {
                assert!(text.contains(field), "{field} at {w}: {text}");
            }
            assert!(text.contains("team-default-coder"), "{w}: {text}");
        } else {
            let header = text.lines().nth(1).unwrap_or_default();
            for key in ["seat", "state", "model"] {
                assert!(header.contains(key), "{key} at {w}: {text}");
            }
            assert!(text.contains("running"), "{w}: {text}");
            // The name whole, or shortened in the middle with its two ends — never broken.
            let row = text
                .lines()
                .find(|l| l.contains("qwen3-") && l.contains("running"))
                .unwrap_or_else(|| panic!("no seat row at {w}: {text}"));
            assert!(
                row.contains(name) || (row.contains('…') && row.contains("qwen3-")),
                "{w}: {text}"
            );
            assert!(
                !text
                    .lines()
                    .any(|l| l.contains("┆ ms ") || l.contains("│ ms ")),
                "{w}: {text}"
            );
            if w <= 120 {
                assert!(!row.contains(name), "the name is shortened at {w}: {text}");
                // A column left out is said under the table, never dropped unannounced.
                let notes = bakeoff_testkit::screen::left_out_notes(&text, w as u16);
                assert!(!notes.is_empty(), "no left-out line at {w}: {text}");
                assert!(notes.iter().any(|n| n.contains("aliases")), "{w}: {text}");
            } else {
                assert!(!text.contains("not shown at"), "{w}: {text}");
            }
        }
        for l in text
            .lines()
            .filter(|l| l.starts_with('│') || l.starts_with('┌'))
        {
            assert!(l.chars().count() <= w, "a line past {w} columns: {l}");
        }
        seen.push(list);
    }
    assert!(
        seen.contains(&true) && seen.contains(&false),
        "a table and a list among the widths"
    );
    let (_, json, _) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["seats"][0]["seat"], name, "the full name in --json");
    let (code, out, err) = bakeoff(&["seat", "down", "--fleet", &f, name]);
    assert_eq!(code, 0, "{out}{err}");
}

/// `seat status --probe` is a cron check: a production seat that is down fails it (exit 1),
/// though only running seats are sent a completion. Without `--probe` it is a listing (0), and
/// a bench seat that is down is no outage.
#[test]
fn a_probing_status_fails_while_a_production_seat_is_down() {
    let dir = tempfile::tempdir().unwrap();
    let header = |name: &str, role: &str| {
        bakeoff_testkit::fleet::seat_header(name, "llama.cpp", role, free_port(), "m")
    };
    let body = "[seat.process]\ncommand = \"llama-server\"\nargs = [\"--port\", \"{port}\"]\n";
    let prod = format!("{}{body}", header("prod", "production"));
    let bench = format!("{}{body}", header("spare", "bench"));
    let f = write(dir.path(), &format!("{prod}{bench}"));
    let (code, out, err) = bakeoff(&["seat", "status", "--fleet", &f, "--probe"]);
    assert_eq!(code, 1, "{out}{err}");
    let (code, _, err) = bakeoff(&["seat", "status", "--fleet", &f]);
    assert_eq!(code, 0, "{err}");
    // A seat that never started has no log: said, with the fix, never an empty success.
    let (code, out, err) = bakeoff(&["seat", "logs", "--fleet", &f, "spare"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("spare has no log to show") && err.contains("fix: "),
        "{err}"
    );
    let f = write(dir.path(), &bench);
    let (code, _, err) = bakeoff(&["seat", "status", "--fleet", &f, "--probe"]);
    assert_eq!(code, 0, "{err}");
}
