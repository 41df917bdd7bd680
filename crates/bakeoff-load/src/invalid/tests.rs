//! The plan's refusals, pinned word for word: the binary prints them after `error: ` (exit 2)
//! and its integration tests compare stderr, so a changed text is a changed interface.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::plan::{CapacitySearch, LoadPlan, Mode, Slo, StepBound, parse_levels, parse_rates};
use crate::schedule::Arrival;
use crate::workload::{MultiTurn, ShareGpt, Trace, TraceReplay, Workload};
use crate::{LengthSpec, LoadError};

fn text<T>(r: Result<T, LoadError>) -> String {
    match r {
        Ok(_) => "accepted".into(),
        Err(e) => e.to_string(),
    }
}

/// Got and wanted side by side, so one run shows every difference.
fn check(cases: Vec<(String, &str)>) {
    let (got, want): (Vec<String>, Vec<&str>) = cases.into_iter().unzip();
    assert_eq!(got, want);
}

fn open(rates: Vec<f64>) -> Mode {
    Mode::Open {
        rates,
        arrival: Arrival::Poisson,
        max_in_flight: None,
    }
}

fn multi_turn(turns: u32) -> Workload {
    Workload::MultiTurn(MultiTurn {
        turns,
        system_prompt_tokens: 0,
        sharegpt: None,
    })
}

fn trace(speedup: f64) -> Workload {
    let t = Trace::parse(
        "{\"offset_s\": 0, \"prompt_tokens\": 8, \"output_tokens\": 2}\n",
        "t.jsonl",
    )
    .unwrap();
    Workload::Trace(TraceReplay {
        trace: Arc::new(t),
        speedup,
    })
}

/// `LoadPlan::new("m")` changed by `f`, validated.
fn plan(f: impl FnOnce(&mut LoadPlan)) -> String {
    let mut p = LoadPlan::new("m");
    f(&mut p);
    text(p.validate())
}

#[test]
fn slo_texts() {
    check(vec![
        (
            text(Slo::parse("ttft")),
            "--slo \"ttft\": expected key=value, e.g. ttft=500ms",
        ),
        (
            text(Slo::parse("ttft=fast")),
            "--slo \"ttft=fast\": \"fast\" is not a duration like 500ms or 2s",
        ),
        (
            text(Slo::parse("foo=1s")),
            "--slo key \"foo\" is not one of ttft, tpot, e2e",
        ),
        (
            text(Slo::parse(" , ")),
            "--slo is empty; e.g. ttft=500ms,tpot=50ms",
        ),
    ]);
}

#[test]
fn level_and_rate_list_texts() {
    check(vec![
        (
            text(parse_levels("1, 0")),
            "concurrency level \"0\": each level must be a whole number from 1 to 4096; fix: e.g. 1,2,4,8",
        ),
        (
            text(parse_levels("2,x")),
            "concurrency level \"x\": each level must be a whole number from 1 to 4096; fix: e.g. 1,2,4,8",
        ),
        (
            text(parse_levels("1,,2")),
            "concurrency level \"\": each level must be a whole number from 1 to 4096; fix: e.g. 1,2,4,8",
        ),
        (
            text(parse_rates("2,x")),
            "rate \"x\": each rate must be a number of requests/s above 0 and at most 10000; fix: e.g. 2,5,10",
        ),
        (
            text(parse_rates("-1")),
            "rate \"-1\": each rate must be a number of requests/s above 0 and at most 10000; fix: e.g. 2,5,10",
        ),
    ]);
}

#[test]
fn step_and_level_texts() {
    check(vec![
        (
            plan(|p| {
                p.bound = StepBound {
                    requests: None,
                    duration: None,
                    completed: None,
                }
            }),
            "each step needs a bound: --requests N and/or --duration SECS",
        ),
        (
            plan(|p| p.bound.requests = Some(0)),
            "--requests and --duration must be positive",
        ),
        (
            plan(|p| p.bound.duration = Some(Duration::ZERO)),
            "--requests and --duration must be positive",
        ),
        (
            plan(|p| p.repeat = 0),
            "--repeat must be 1 or more (1 measures each level once)",
        ),
        (
            plan(|p| {
                p.bound = StepBound {
                    completed: Some(0),
                    duration: Some(Duration::from_secs(60)),
                    requests: None,
                }
            }),
            "--step-requests must be 1 or more completed requests per step, e.g. 200",
        ),
        (
            plan(|p| p.bound.completed = Some(200)),
            "--step-requests counts completed requests and --requests counts sent ones: give one of them (e.g. --step-requests 200 --duration 600)",
        ),
        (
            plan(|p| {
                p.bound = StepBound {
                    completed: Some(200),
                    ..StepBound::default()
                }
            }),
            "--step-requests needs --duration SECS as each step's upper bound, so a step that never completes N requests still ends (e.g. --step-requests 200 --duration 600)",
        ),
        (
            plan(|p| {
                p.bound = StepBound {
                    completed: Some(200),
                    duration: Some(Duration::from_secs(60)),
                    requests: None,
                };
                p.mode = open(vec![2.0]);
            }),
            "--step-requests applies to closed-loop steps of single requests (--concurrency): with --rate, --requests N schedules N arrivals and each completes; not with --trace or --multi-turn",
        ),
        (
            plan(|p| {
                p.bound = StepBound {
                    completed: Some(200),
                    duration: Some(Duration::from_secs(60)),
                    requests: None,
                };
                p.workload = multi_turn(2);
            }),
            "--step-requests applies to closed-loop steps of single requests (--concurrency): with --rate, --requests N schedules N arrivals and each completes; not with --trace or --multi-turn",
        ),
        (
            plan(|p| {
                p.bound = StepBound {
                    completed: Some(200),
                    duration: Some(Duration::from_secs(60)),
                    requests: None,
                }
            }),
            "accepted",
        ),
        (
            plan(|p| {
                p.mode = Mode::Closed {
                    concurrency: vec![],
                }
            }),
            "--concurrency needs positive levels, e.g. 1,2,4,8",
        ),
        (
            plan(|p| {
                p.mode = Mode::Closed {
                    concurrency: vec![1, 0],
                }
            }),
            "--concurrency needs positive levels, e.g. 1,2,4,8",
        ),
        (
            plan(|p| p.mode = open(vec![2.0, f64::NAN])),
            "--rate needs positive rates, e.g. 2,5,10",
        ),
        (
            plan(|p| p.mode = open(vec![])),
            "--rate needs positive rates, e.g. 2,5,10",
        ),
    ]);
}

#[test]
fn workload_and_capacity_texts() {
    check(vec![
        (
            plan(|p| p.workload = multi_turn(0)),
            "--multi-turn needs at least 1 turn per conversation",
        ),
        (
            plan(|p| p.workload = trace(0.0)),
            "--trace-speedup must be a positive number, e.g. 2",
        ),
        (
            plan(|p| {
                p.workload = trace(1.0);
                p.find_capacity = Some(CapacitySearch::default());
            }),
            "--trace replays the trace's own arrivals: it cannot be combined with --find-capacity",
        ),
        (
            plan(|p| {
                p.workload = multi_turn(2);
                p.mode = open(vec![1.0]);
            }),
            "--multi-turn runs whole conversations on closed-loop workers: give --concurrency, not --rate",
        ),
        (
            plan(|p| p.find_capacity = Some(CapacitySearch::default())),
            "--find-capacity searches arrival rates: give --rate START (open loop)",
        ),
        (
            plan(|p| {
                p.mode = open(vec![1.0]);
                p.find_capacity = Some(CapacitySearch::default());
            }),
            "--find-capacity needs the objectives to meet: add --slo, e.g. ttft=500ms,tpot=50ms",
        ),
        (
            plan(|p| {
                p.mode = open(vec![1.0]);
                p.find_capacity = Some(CapacitySearch::default());
                p.slo = Some(Slo::parse("ttft=1s").unwrap());
                p.repeat = 2;
            }),
            "--find-capacity and --repeat cannot be combined: search first, then repeat the found rates with --rate",
        ),
        (
            crate::runner::VERSUS_NO_SEARCH.to_string(),
            "--versus compares two endpoints at the same levels; --find-capacity searches each endpoint's own rates: search each first, then compare at fixed --rate",
        ),
    ]);
}

#[test]
fn load_shape_texts() {
    check(vec![
        (
            plan(|p| p.cancel_rate = 1.0),
            "--cancel-rate 1: a share from 0 up to (not including) 1, e.g. 0.2",
        ),
        (
            plan(|p| p.cancel_rate = -0.25),
            "--cancel-rate -0.25: a share from 0 up to (not including) 1, e.g. 0.2",
        ),
        (
            plan(|p| p.cancel_rate = f64::NAN),
            "--cancel-rate NaN: a share from 0 up to (not including) 1, e.g. 0.2",
        ),
        (
            plan(|p| p.ramp_up = Some(Duration::ZERO)),
            "--ramp-up must be a positive number of seconds",
        ),
        (
            plan(|p| p.gauge_interval = Some(Duration::from_millis(50))),
            "--gauge-interval must be at least 0.1 s (0 turns the gauges off)",
        ),
        (
            plan(|p| {
                p.workload = multi_turn(2);
                p.cancel_rate = 0.5;
            }),
            "--ramp-up and --cancel-rate apply to synthetic and ShareGPT prompts: not to --trace, --multi-turn, --sessions or --sessions-file",
        ),
        (
            plan(|p| {
                p.workload = trace(1.0);
                p.ramp_up = Some(Duration::from_secs(1));
            }),
            "--ramp-up and --cancel-rate apply to synthetic and ShareGPT prompts: not to --trace, --multi-turn, --sessions or --sessions-file",
        ),
    ]);
}

#[test]
fn arrival_texts() {
    check(vec![
        (
            text(Arrival::parse_with("burst", None)),
            "--arrival \"burst\": use poisson, constant or gamma (with --burstiness K)",
        ),
        (
            text(Arrival::parse_with("gamma", Some(0.0))),
            "--burstiness 0: must be a positive number (1 is Poisson, below 1 burstier)",
        ),
        (
            text(Arrival::parse_with("gamma", Some(-0.5))),
            "--burstiness -0.5: must be a positive number (1 is Poisson, below 1 burstier)",
        ),
        (
            text(Arrival::parse_with("poisson", Some(2.0))),
            "--burstiness is the shape of gamma arrivals: add --arrival gamma",
        ),
    ]);
}

#[test]
fn length_spec_texts() {
    let parse = |s: &str| text(LengthSpec::parse(s, "prompt_tokens"));
    check(vec![
        (
            parse("many"),
            "length \"many\": not a number; use N, A-B or @file.jsonl",
        ),
        (
            parse("a-3"),
            "length \"a-3\": not a number; use N, A-B or @file.jsonl",
        ),
        (
            parse("5-2"),
            "length \"5-2\": a range needs 1 <= A <= B; use N, A-B or @file.jsonl",
        ),
        (
            parse("0-2"),
            "length \"0-2\": a range needs 1 <= A <= B; use N, A-B or @file.jsonl",
        ),
        (
            parse(" 0 "),
            "length \"0\": must be at least 1; use N, A-B or @file.jsonl",
        ),
    ]);
}

/// A file of its own under the temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Self {
        let p = std::env::temp_dir().join(format!(
            "bakeoff-load-invalid-{}-{name}",
            std::process::id()
        ));
        std::fs::write(&p, text).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn length_file_texts() {
    let missing = Path::new("/nonexistent/bakeoff/l.jsonl");
    let not_json = Scratch::new("not-json.jsonl", "{\"prompt_tokens\": 3}\n\nnope\n");
    let zero = Scratch::new("zero.jsonl", "{\"prompt_tokens\": 0}\n");
    let empty = Scratch::new("empty.jsonl", "\n");
    let read = |s: &Scratch| text(LengthSpec::from_jsonl(&s.0, "prompt_tokens"));
    check(vec![
        (
            text(LengthSpec::parse("@/nonexistent/bakeoff/l.jsonl", "x")),
            "cannot read /nonexistent/bakeoff/l.jsonl (No such file or directory (os error 2)): pass an existing JSONL file",
        ),
        (
            text(LengthSpec::from_jsonl(missing, "x")),
            "cannot read /nonexistent/bakeoff/l.jsonl (No such file or directory (os error 2)): pass an existing JSONL file",
        ),
        (
            read(&not_json),
            &format!(
                "{} line 3: not JSON: expected ident at line 1 column 2",
                not_json.0.display()
            ),
        ),
        (
            read(&zero),
            &format!(
                "{} line 1: needs a field \"prompt_tokens\", an integer from 1 to 1048576",
                zero.0.display()
            ),
        ),
        (read(&empty), &format!("{} has no lines", empty.0.display())),
    ]);
}

#[test]
fn sharegpt_file_texts() {
    let parse = |t: &str| text(ShareGpt::parse(t, "f.json"));
    let expected = "expected {\"conversations\": [{\"from\": \"human\", \"value\": \"…\"}, …]}";
    check(vec![
        (
            text(ShareGpt::load(Path::new("/nonexistent/bakeoff/s.json"))),
            "--prompts-sharegpt /nonexistent/bakeoff/s.json: cannot read it (No such file or directory (os error 2)): pass an existing ShareGPT JSON or JSONL file",
        ),
        (
            parse("[1,"),
            "--prompts-sharegpt f.json: not a JSON array of conversations (EOF while parsing a value at line 1 column 3); give a ShareGPT JSON array or one conversation per line (JSONL)",
        ),
        (
            parse("\n{\"conversations\": []}\nnope SECRET\n"),
            "--prompts-sharegpt f.json line 3: not JSON (expected ident at line 1 column 2); each line must be one {\"conversations\": [{\"from\": \"human\", \"value\": …}]} object",
        ),
        (
            parse(
                "{\"conversations\": [{\"from\": \"gpt\", \"value\": \"x\"}]}\n{\"conversations\": []}",
            ),
            "--prompts-sharegpt f.json: no conversation has a human turn (2 skipped); each needs a {\"from\": \"human\", \"value\": \"…\"} turn",
        ),
        (
            parse(""),
            "--prompts-sharegpt f.json: no conversation has a human turn (0 skipped); each needs a {\"from\": \"human\", \"value\": \"…\"} turn",
        ),
        (
            parse("[{\"conversations\": []}, {\"id\": 1}]"),
            &format!("--prompts-sharegpt f.json element 2: no \"conversations\" field; {expected}"),
        ),
        (
            parse("{\"conversations\": 3}"),
            &format!(
                "--prompts-sharegpt f.json line 1: \"conversations\" is not an array; {expected}"
            ),
        ),
        (
            parse("{\"conversations\": [{\"value\": \"x\"}]}"),
            &format!("--prompts-sharegpt f.json line 1: a turn has no \"from\" string; {expected}"),
        ),
        (
            parse("[{\"conversations\": [{\"from\": \"human\", \"value\": 3}]}]"),
            &format!(
                "--prompts-sharegpt f.json element 1: a turn has no \"value\" string; {expected}"
            ),
        ),
    ]);
}

#[test]
fn endpoint_texts() {
    let client = |u: &str| {
        text(crate::calibrate::calib_client(
            u,
            bakeoff_client::tls::Tls::default(),
        ))
    };
    check(vec![
        (
            client("ftp://h"),
            "endpoint \"ftp://h\" uses scheme \"ftp\"; use http:// or https://",
        ),
        (
            client("not a url"),
            "endpoint \"not a url\" is not a URL; give one like http://127.0.0.1:8080",
        ),
    ]);
}

#[test]
fn guards_the_plan_cannot_reach_keep_their_texts() {
    use crate::invalid::{Conflict, Missing};
    check(vec![
        (
            LoadError::from(Conflict::VersusWithCapacity).to_string(),
            crate::runner::VERSUS_NO_SEARCH,
        ),
        (
            LoadError::from(Missing::CapacityStartRate).to_string(),
            "--find-capacity needs a start rate: --rate R",
        ),
    ]);
}

/// The refusals are data: the kind, the flag and the value at fault, and the reader's own
/// error as the source.
#[test]
fn refusals_hold_their_data() {
    use std::error::Error as _;

    use crate::invalid::{
        Conflict, LengthFileInvalid, LengthProblem, NotPositive, OutOfRange, Place, PlanInvalid,
        RecordProblem, ShareGptInvalid, SloInvalid, Unparsable,
    };
    let invalid = |e: LoadError| match e {
        LoadError::Config(p) => p,
        other => panic!("not a plan refusal: {other}"),
    };
    let e = invalid(Arrival::parse_with("gamma", Some(-0.5)).unwrap_err());
    assert!(matches!(e, PlanInvalid::NotPositive(NotPositive::Burstiness(k)) if k == -0.5));
    let e = invalid(Arrival::parse_with("poisson", Some(2.0)).unwrap_err());
    assert!(matches!(
        e,
        PlanInvalid::Conflict(Conflict::BurstinessWithoutGamma { arrival: "poisson" })
    ));
    let mut p = LoadPlan::new("m");
    p.gauge_interval = Some(Duration::from_millis(50));
    let e = invalid(p.validate().unwrap_err());
    assert!(
        matches!(e, PlanInvalid::OutOfRange(OutOfRange::GaugeInterval(d)) if d == Duration::from_millis(50))
    );
    p.gauge_interval = None;
    p.workload = multi_turn(2);
    p.cancel_rate = 0.5;
    let e = invalid(p.validate().unwrap_err());
    assert!(matches!(
        e,
        PlanInvalid::Conflict(Conflict::ShapesWithWorkload {
            workload: "multi-turn"
        })
    ));
    let e = invalid(parse_levels("1,x").unwrap_err());
    assert!(matches!(&e, PlanInvalid::Unparsable(Unparsable::Level(s)) if s == "x"));
    let e = invalid(LengthSpec::parse("5-2", "f").unwrap_err());
    assert!(matches!(
        &e,
        PlanInvalid::Unparsable(Unparsable::Length {
            spec,
            problem: LengthProblem::Range { min: 5, max: 2 },
        }) if spec == "5-2"
    ));
    assert_eq!(e.source().unwrap().to_string(), "a range needs 1 <= A <= B");
    let e = invalid(Slo::parse("foo=1s").unwrap_err());
    assert!(matches!(&e, PlanInvalid::Slo(SloInvalid::UnknownKey { key }) if key == "foo"));
    let e = invalid(LengthSpec::from_jsonl(Path::new("/nonexistent/l"), "f").unwrap_err());
    assert!(matches!(
        &e,
        PlanInvalid::LengthFile(LengthFileInvalid::Read { path, .. }) if path == Path::new("/nonexistent/l")
    ));
    assert!(e.source().unwrap().is::<std::io::Error>());
    let e = invalid(ShareGpt::parse("[{\"conversations\": 3}]", "f").unwrap_err());
    assert!(matches!(
        &e,
        PlanInvalid::ShareGpt(ShareGptInvalid::Record {
            place: Place::Element(1),
            problem: RecordProblem::ConversationsNotArray,
            ..
        })
    ));
    let e = invalid(ShareGpt::parse("[1,", "f").unwrap_err());
    assert!(e.source().unwrap().is::<serde_json::Error>());
}
