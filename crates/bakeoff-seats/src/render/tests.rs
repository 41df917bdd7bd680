//! Snapshots of every rendering: a failed start of each class of the failure table, a
//! ready start, a dormant seat, a swap whose rollback failed, and `seat status` in text and
//! JSON.

use std::path::PathBuf;

use bakeoff_artifact::{FailureClass, SeatPhase};

use super::*;
use crate::classify;
use crate::fleet::types::Role;
use crate::watchdog::{State, WatchReport};

fn phase(state: &str, at_ms: u64) -> SeatPhase {
    SeatPhase {
        state: state.into(),
        at_ms,
        line: None,
    }
}

fn report(state: State, class: Option<FailureClass>, message: &str) -> WatchReport {
    WatchReport {
        phases: vec![phase("starting", 0), phase("loading", 1200)],
        elapsed_ms: 7400,
        ..WatchReport::decided(state, State::Loading, class, message.into())
    }
}

fn failed(seat: &str, class: FailureClass) -> UpOutcome {
    UpOutcome {
        seat: seat.into(),
        report: Some(report(
            State::Failed,
            Some(class),
            &format!("exited with code 1 while loading: a line that names {class}"),
        )),
        failure_path: Some(PathBuf::from(format!("results/{seat}.failure.json"))),
        created_only: false,
        already_up: false,
        elapsed_ms: 7400,
        page_cache: None,
        conditions: None,
    }
}

fn ready(seat: &str) -> UpOutcome {
    let mut r = report(
        State::Ready,
        None,
        "ready in 7.4 s (a real completion succeeded)",
    );
    r.phases
        .extend([phase("warming", 5300), phase("ready", 7400)]);
    r.notes = vec!["weight loading has taken 4.1 s, over the --load-budget of 3.0 s".into()];
    UpOutcome {
        seat: seat.into(),
        report: Some(r),
        failure_path: None,
        created_only: false,
        already_up: false,
        elapsed_ms: 7400,
        page_cache: None,
        conditions: None,
    }
}

/// Every class of the failure table, once, in the table's order.
fn table_classes() -> Vec<FailureClass> {
    let mut classes: Vec<FailureClass> = Vec::new();
    for row in classify::TABLE {
        if !classes.contains(&row.class) {
            classes.push(row.class);
        }
    }
    classes
}

#[test]
fn a_failed_start_of_each_class() {
    let classes = table_classes();
    assert!(classes.contains(&FailureClass::InitWedge), "{classes:?}");
    for class in classes {
        let o = failed("bench-a", class);
        let text = up_lines(&o).join("\n");
        assert!(text.contains(&format!("FAILED [{class}]")), "{text}");
        insta::assert_snapshot!(format!("failed_start__{class}"), text);
    }
}

#[test]
fn a_failed_start_as_json() {
    let mut o = failed("bench-a", FailureClass::CudaOom);
    if let Some(r) = o.report.as_mut() {
        // Untrusted text in JSON is escaped by serde, never cut.
        r.message = "exited with code 1 while loading: CUDA out of memory\u{1b}[2J".into();
    }
    insta::assert_snapshot!(pretty(&up_json(&o)));
}

#[test]
fn an_escaped_failure_message() {
    let mut o = failed("bench-a", FailureClass::Exited);
    if let Some(r) = o.report.as_mut() {
        r.message = "exited while loading; last line: \u{1b}[31mred\rgone\nnext".into();
        r.notes = vec![
            "the seat's state could not be read at +1.0 s (timeout); the watch went on".into(),
        ];
    }
    insta::assert_snapshot!(up_lines(&o).join("\n"));
}

/// A started seat's lines say whether its weights were cached before the start, and end
/// with the load's conditions line.
#[test]
fn a_started_seat_says_cold_or_warm_and_ends_with_its_conditions() {
    use bakeoff_artifact::{
        Conditions, Excluded, GpuConditions, PageCacheMethod, PageCacheState, SeatPageCache,
        SeatWarmRead,
    };
    let mib = 1024 * 1024;
    let mut pc = SeatPageCache {
        state: PageCacheState::Cold,
        method: PageCacheMethod::Fincore,
        why: None,
        files: vec!["/models/m.gguf".into()],
        weight_bytes: Some(200 * mib),
        resident_before_bytes: Some(4 * mib),
        cached_before_bytes: None,
        cached_after_bytes: None,
        cache_growth_bytes: None,
        warmed: None,
    };
    assert_eq!(
        page_cache_line(&pc),
        "page cache before the start: cold (2 % of 200 MiB resident, fincore)"
    );
    let mut o = ready("bench-a");
    o.page_cache = Some(pc.clone());
    o.conditions = Some(Conditions {
        source: "/proc".into(),
        samples: 3,
        wall_s: 7.4,
        host_cores: 2,
        excluded: Excluded {
            bakeoff_pid: 1,
            engine_pid: Some(2),
            engine: "pid 2: the seat's process, spawned".into(),
        },
        load_avg: None,
        other_cpu_cores: Some(0.1),
        top_others: vec![],
        memory: None,
        gpu: GpuConditions::unavailable("nvidia-smi", "not on PATH"),
        unavailable: vec![],
        findings: vec![],
    });
    let lines = up_lines(&o);
    assert!(
        lines.contains(
            &"    page cache before the start: cold (2 % of 200 MiB resident, fincore)".to_string()
        ),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some("    conditions: clean (1 step(s) sampled; others used at most 0.10 cores)")
    );
    pc.state = PageCacheState::Warm;
    pc.resident_before_bytes = Some(200 * mib);
    pc.warmed = Some(SeatWarmRead {
        bytes: 200 * mib,
        seconds: 0.5,
        errors: vec![],
    });
    assert_eq!(
        page_cache_line(&pc),
        "page cache before the start: warm (--warm-cache read 200 MiB in 0.5 s first; 100 % of 200 MiB resident, fincore)"
    );
}

#[test]
fn a_ready_start() {
    let o = ready("bench-a");
    insta::assert_snapshot!(up_lines(&o).join("\n"));
    insta::assert_snapshot!(pretty(&up_json(&o)));
}

#[test]
fn a_dormant_seat_created_only() {
    let o = UpOutcome {
        seat: "spare".into(),
        report: None,
        failure_path: None,
        created_only: true,
        already_up: false,
        elapsed_ms: 120,
        page_cache: None,
        conditions: None,
    };
    insta::assert_snapshot!(up_lines(&o).join("\n"));
    insta::assert_snapshot!(pretty(&up_json(&o)));
}

/// `seat up` on a seat that was already up: said so, and still confirmed ready by the
/// watch (or found failing).
#[test]
fn a_seat_already_up() {
    let mut o = ready("bench-a");
    o.already_up = true;
    o.elapsed_ms = 300;
    if let Some(r) = o.report.as_mut() {
        r.phases = vec![phase("ready", 300)];
        r.notes.clear();
    }
    let text = up_lines(&o).join("\n");
    assert!(
        text.starts_with("bench-a: already up, READY in 0.3 s"),
        "{text}"
    );
    insta::assert_snapshot!(text);
    assert_eq!(up_json(&o)["already_up"], true);
    let mut f = failed("bench-a", FailureClass::InferenceFailing);
    f.already_up = true;
    let text = up_lines(&f).join("\n");
    assert!(
        text.starts_with("bench-a: already up, FAILED [inference-failing]"),
        "{text}"
    );
}

#[test]
fn a_swap_whose_rollback_failed() {
    let o = SwapOutcome {
        old: "prod-a".into(),
        new: "prod-b".into(),
        new_outcome: failed("prod-b", FailureClass::KvCacheBudget),
        old_was_running: true,
        new_stop_error: Some("could not signal pid 4242:\u{7} operation not permitted".into()),
        rollback: Some(failed("prod-a", FailureClass::PortInUse)),
    };
    insta::assert_snapshot!(swap_lines(&o).join("\n"));
    insta::assert_snapshot!(pretty(&swap_json(&o)));
}

#[test]
fn a_swap_rolled_back() {
    let o = SwapOutcome {
        old: "prod-a".into(),
        new: "prod-b".into(),
        new_outcome: failed("prod-b", FailureClass::CudaOom),
        old_was_running: true,
        new_stop_error: None,
        rollback: Some(ready("prod-a")),
    };
    insta::assert_snapshot!(swap_lines(&o).join("\n"));
}

/// A swap from a seat that was not running says so: it claims neither to have stopped OLD
/// nor, when NEW fails, to have brought it "back".
#[test]
fn a_swap_from_a_seat_that_was_not_running() {
    let o = SwapOutcome {
        old: "bench-a".into(),
        new: "bench-b".into(),
        new_outcome: ready("bench-b"),
        old_was_running: false,
        new_stop_error: None,
        rollback: None,
    };
    let text = swap_lines(&o).join("\n");
    assert!(
        text.starts_with("swap bench-a -> bench-b: bench-a was not running"),
        "{text}"
    );
    assert!(!text.contains("stopped bench-a"), "{text}");
    insta::assert_snapshot!(text);
    assert_eq!(swap_json(&o)["old_was_running"], false);
    let failed_swap = SwapOutcome {
        new_outcome: failed("bench-b", FailureClass::CudaOom),
        rollback: Some(ready("bench-a")),
        ..o
    };
    let text = swap_lines(&failed_swap).join("\n");
    assert!(
        text.contains("stopped bench-b; started bench-a (it was not running before the swap)"),
        "{text}"
    );
    assert!(!text.contains("brought bench-a back"), "{text}");
}

fn fleet_status() -> (Vec<SeatStatus>, Vec<Route>) {
    let seat = |name: &str, role, backend, observed, serving| SeatStatus {
        seat: String::from(name),
        role,
        backend,
        url: format!("http://127.0.0.1:{}/v1", 8000 + name.len()),
        observed,
        restart_count: None,
        id: None,
        aliases: vec![],
        serving,
        probe_ms: serving.map(|_| 840),
        detail: None,
        started_at: None,
        model: Some("gemma-3-270m".into()),
        gpus: vec![],
        last_load_ms: None,
    };
    let mut serving = seat(
        "prod-a",
        Role::Production,
        "docker",
        Observed::Running,
        Some(true),
    );
    serving.restart_count = Some(2);
    serving.id = Some("3f2a9c".into());
    serving.aliases = vec!["gpt-4o".into(), "default".into()];
    serving.started_at = Some(clock() - chrono::Duration::seconds(3 * 86_400 + 4 * 3600));
    serving.gpus = vec!["0".into(), "1".into()];
    serving.last_load_ms = Some(42_100);
    let mut failing = seat(
        "bench-b",
        Role::Bench,
        "process",
        Observed::Running,
        Some(false),
    );
    failing.id = Some("4242".into());
    failing.detail = Some("inference-failing: every completion failed\n(HTTP 500)".into());
    let unknown = seat(
        "bench-c",
        Role::Bench,
        "docker",
        Observed::Unknown {
            reason: "Docker: \u{1b}[31mconnection reset\r\u{7}".into(),
        },
        None,
    );
    let dormant = seat("spare", Role::Dormant, "docker", Observed::Created, None);
    let exited = seat(
        "bench-d",
        Role::Bench,
        "process",
        Observed::Exited {
            code: Some(137),
            oom_killed: None,
        },
        None,
    );
    // A 35-character name, a long model id and aliases past any column.
    let mut long = seat(
        "qwen3-coder-30b-a3b-instruct-bench1",
        Role::Bench,
        "process",
        Observed::Running,
        Some(true),
    );
    long.model = Some("/models/Qwen3-Coder-30B-A3B-Instruct-Q4_K_M.gguf".into());
    long.aliases = vec![
        "qwen-coder".into(),
        "coder-large".into(),
        "team-default-coder".into(),
        "gpt-4o-mini".into(),
    ];
    long.started_at = Some(clock() - chrono::Duration::seconds(17 * 60 + 5));
    long.last_load_ms = Some(104_000);
    long.probe_ms = Some(104);
    let routes = vec![
        Route {
            alias: "gpt-4o".into(),
            seat: Some("prod-a".into()),
            api_base: Some("http://127.0.0.1:8006/v1".into()),
            model: None,
            from: "fleet.toml".into(),
        },
        Route {
            alias: "claude-proxy".into(),
            seat: None,
            api_base: Some("http://10.0.0.9:4000".into()),
            model: Some("claude".into()),
            from: "litellm.yaml".into(),
        },
        Route {
            alias: "orphan".into(),
            seat: None,
            api_base: None,
            model: None,
            from: "fleet.toml".into(),
        },
    ];
    (
        vec![serving, failing, unknown, dormant, exited, long],
        routes,
    )
}

#[test]
fn seat_status_text() {
    let (list, routes) = fleet_status();
    // 60: the compact layout; 120: what a terminal reporting 0 columns gets.
    let zero = term::width_from(None, Some(0));
    for (w, name) in [
        (60, "60"),
        (80, "80"),
        (100, "100"),
        (120, "120"),
        (200, "200"),
        (250, "250"),
        (zero, "reported_0"),
    ] {
        let text = status_lines_now(&list, &routes, w, clock()).join("\n");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.contains("bench-c [bench docker]: unknown ("), "{text}");
        // Every line fits; the key columns show at every width; the list form
        // keeps every field; a figure and its unit never wrap apart.
        assert!(
            text.lines().all(|l| l.chars().count() <= usize::from(w)
                || l.starts_with("alias ")
                || l.contains(": ")),
            "{w}: {text}"
        );
        let list_form = text.starts_with("seat: ");
        for key in ["seat", "state", "model"] {
            let shown = if list_form {
                text.contains(&format!("{key}: "))
            } else {
                text.lines().nth(1).is_some_and(|h| h.contains(key))
            };
            assert!(shown, "{key} at {w}: {text}");
        }
        if list_form {
            for field in ["uptime: 3\u{a0}d", "model: gemma-3-270m", "aliases: gpt-4o"] {
                assert!(text.contains(field), "{field} at {w}: {text}");
            }
        } else {
            assert!(
                !text.contains("qwen3-coder-30b-a3b-instruct-bench1") || w >= 200,
                "{w}: {text}"
            );
            assert!(
                text.lines().all(|l| l
                    .split(['│', '┆'])
                    .all(|c| !matches!(c.trim(), "ms" | "s" | "min" | "h" | "d"))),
                "a figure wrapped apart from its unit at {w}: {text}"
            );
        }
        insta::assert_snapshot!(format!("seat_status_text_{name}"), text);
    }
}

/// The fixed clock the snapshots' uptimes are read against.
fn clock() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_796_000_000, 0).unwrap_or_default()
}

#[test]
fn uptimes_read_at_a_glance() {
    assert_eq!(uptime(42), "42 s");
    assert_eq!(uptime(17 * 60 + 5), "17 min");
    assert_eq!(uptime(3 * 3600 + 5 * 60), "3 h 05 min");
    assert_eq!(uptime(2 * 86_400 + 4 * 3600), "2 d 04 h");
}

#[test]
fn seat_status_json() {
    let (list, routes) = fleet_status();
    insta::assert_snapshot!(pretty(&status_json(&list, &routes)));
}

/// As the binary prints `--json`.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// `seat status` and `audit seat` as a terminal of 60, 80 and 120 columns gets them (fitted by
/// `term::fit_text`, as the binary prints them when `COLUMNS` is set or stdout is a terminal):
/// a seat's long detail, the left-out note and the routes under the table, and a finding with
/// a long message, its fix and evidence naming a path, all within the width (a word longer than
/// the room whole on its own line), every left-out column named.
#[test]
fn seat_status_and_findings_fit_every_width() {
    use bakeoff_testkit::screen::{WIDTHS, every_column_shown_or_named, fits_every_line, flat};
    let (mut list, routes) = fleet_status();
    list[1].detail = Some(
        "inference-failing: every completion failed with HTTP 500 from /v1/chat/completions; the engine log at /var/lib/bakeoff/seats/bench-b/engine.log ends with a CUDA error".into(),
    );
    let mut finding = bakeoff_artifact::SeatFinding::new(
        "download-in-writable-layer",
        bakeoff_artifact::FindingSeverity::Error,
        "the container writes the model download into its writable layer: 14.2 GiB in 3 min 10 s, and the layer is lost when the container is removed",
    );
    finding.fix = Some(
        "mount the host's Hugging Face cache at /root/.cache/huggingface (docker.volumes = [\"/srv/hf-cache:/root/.cache/huggingface\"]) and start again".into(),
    );
    finding.evidence = vec![
        "/var/lib/docker/overlay2/3f2a9c7d1e5b/diff/root/.cache/huggingface/hub grew 14.2 GiB"
            .into(),
    ];
    for w in WIDTHS {
        let text = term::fit_text(&status_lines_now(&list, &routes, w, clock()).join("\n"), w);
        fits_every_line(&text, w, "seat status");
        every_column_shown_or_named(&text, w, &["GPU", "uptime", "load", "restarts", "aliases"]);
        assert!(
            flat(&text).contains(&flat(list[1].detail.as_deref().unwrap_or_default())),
            "{w}: {text}"
        );
        let lines = term::fit_text(&finding_lines(std::slice::from_ref(&finding)).join("\n"), w);
        fits_every_line(&lines, w, "audit seat");
        assert!(
            flat(&lines).contains(&flat(&finding.message)),
            "{w}: {lines}"
        );
        assert!(
            lines.lines().skip(1).all(|l| l.starts_with("    ")),
            "{w}: {lines}"
        );
    }
}
