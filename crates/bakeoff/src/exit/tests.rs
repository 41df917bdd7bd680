use super::*;
use bakeoff_load::invalid::{Missing, NotPositive};
use bakeoff_load::sweep_input::SweepInputError;
use bakeoff_measure::damage::PromptsError;
use bakeoff_report::registry::NoArtifactFor;
use bakeoff_seats::hooks::PreStartRefusal;
use bakeoff_suites::{intelligence, refusal};

fn io() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied")
}

#[test]
fn writing_an_output_is_io_reading_an_input_is_usage() {
    let p = PathBuf::from("results/x.bakeoff.json");
    let write = Error::from(StoreError::Write {
        path: p.clone(),
        source: io(),
    });
    assert_eq!(write.exit_code(), exit_codes::IO);
    let read = Error::from(StoreError::Read {
        path: p.clone(),
        source: io(),
    });
    assert_eq!(read.exit_code(), exit_codes::USAGE);
    let journal = Error::from(EvidenceError::Store(StoreError::CreateDir {
        path: p,
        source: io(),
    }));
    assert_eq!(journal.exit_code(), exit_codes::IO);
}

#[test]
fn adapter_and_bench_errors_keep_their_codes() {
    let listing = AdapterRunError::Route(AdapterError::Listing {
        path: "/v1/models".into(),
        message: "timed out".into(),
    });
    assert_eq!(Error::from(listing).exit_code(), exit_codes::FAILED);
    let missing = AdapterRunError::Route(AdapterError::NoLoraLoaded);
    assert_eq!(Error::from(missing).exit_code(), exit_codes::USAGE);
    let e = Error::from(AdapterRunError::InterruptedInPreflight);
    assert_eq!(e.exit_code(), exit_codes::FAILED);
    assert_eq!(
        e.to_string(),
        "interrupted by the operator during preflight; nothing was measured"
    );
    let target = Error::from(BenchError::from(CeilingError::Target(io())));
    assert_eq!(target.exit_code(), exit_codes::INTERNAL);
    assert_eq!(
        target.to_string(),
        "cannot start the loopback calibration target: denied"
    );
    let plan = Error::from(BenchError::Load(LoadError::from(NotPositive::Repeat)));
    assert_eq!(plan.exit_code(), exit_codes::USAGE);
    assert_eq!(
        plan.to_string(),
        "--repeat must be 1 or more (1 measures each level once)"
    );
}

#[test]
fn each_kind_has_its_code() {
    assert_eq!(Error::from(FlagError::invalid("x")).exit_code(), 2);
    assert_eq!(Error::failed("x").exit_code(), 1);
    assert_eq!(Error::internal("x").exit_code(), 4);
    assert_eq!(Exit::Ok.code(), 0);
    assert_eq!(Exit::Failed.code(), 1);
    let e = Error::from(EvalError::InterruptedInPreflight);
    assert_eq!(e.exit_code(), exit_codes::FAILED);
    assert_eq!(
        e.to_string(),
        "interrupted by the operator during preflight; nothing was measured"
    );
    let e = Error::from(LoadError::from(Missing::StepBound));
    assert_eq!(e.exit_code(), exit_codes::USAGE);
    assert_eq!(
        e.to_string(),
        "each step needs a bound: --requests N and/or --duration SECS"
    );
}

#[test]
fn gateway_and_cache_errors_keep_their_text_and_their_code() {
    let exists = Error::from(GatewayError::Exists {
        path: PathBuf::from("litellm.yaml"),
    });
    assert_eq!(exists.exit_code(), exit_codes::USAGE);
    assert!(
        exists
            .to_string()
            .starts_with("litellm.yaml already exists")
    );
    let key = Error::from(GatewayError::KeyEnv { name: "1x".into() });
    assert_eq!(key.exit_code(), exit_codes::USAGE);
    let write = Error::from(GatewayError::Write {
        path: PathBuf::from("litellm.yaml"),
        source: io(),
    });
    assert_eq!(write.exit_code(), exit_codes::IO);
    assert_eq!(write.to_string(), "cannot write litellm.yaml: denied");
    assert!(std::error::Error::source(&write).is_some());
    assert_eq!(
        Error::from(GatewayError::Render("x".into())).exit_code(),
        exit_codes::IO
    );
    let cache = Error::from(CacheError::Missing {
        path: PathBuf::from("/nope"),
    });
    assert_eq!(cache.exit_code(), exit_codes::USAGE);
    assert!(cache.to_string().starts_with("/nope: does not exist"));
}

fn unknown_seat() -> UnknownSeat {
    UnknownSeat {
        name: "b".into(),
        fleet: PathBuf::from("fleet.toml"),
        known: "a".into(),
    }
}

fn ops(e: OpsError) -> Error {
    Error::Ops {
        message: e.to_string(),
        source: Box::new(e),
    }
}

#[test]
fn a_seat_operation_is_classified_by_its_variant() {
    assert_eq!(Error::from(unknown_seat()).exit_code(), exit_codes::USAGE);
    assert_eq!(
        ops(OpsError::UnknownSeat(unknown_seat())).exit_code(),
        exit_codes::USAGE
    );
    assert_eq!(
        ops(OpsError::SameSeat("a".into())).exit_code(),
        exit_codes::USAGE
    );
    assert_eq!(
        ops(OpsError::PreStart(PreStartRefusal::Unsupported("x".into()))).exit_code(),
        exit_codes::FAILED
    );
    assert_eq!(
        ops(OpsError::Artifact(StoreError::Write {
            path: "x".into(),
            source: std::io::Error::other("full"),
        }))
        .exit_code(),
        exit_codes::IO
    );
    let confirm = Error::Ops {
        message: "nothing was done".into(),
        source: Box::new(OpsError::NeedsConfirm {
            seat: "a".into(),
            would: "vllm serve".into(),
        }),
    };
    assert_eq!(confirm.exit_code(), exit_codes::FAILED);
    assert_eq!(confirm.to_string(), "nothing was done");
    assert!(std::error::Error::source(&confirm).is_some());
}

#[test]
fn an_export_and_a_monitor_are_classified_by_their_variant() {
    let kube = |e: KubeError| Error::Kube {
        message: e.to_string(),
        source: Box::new(e),
    };
    assert_eq!(
        kube(KubeError::Yaml("x".into())).exit_code(),
        exit_codes::INTERNAL
    );
    assert_eq!(
        kube(KubeError::NothingToExport).exit_code(),
        exit_codes::USAGE
    );
    assert_eq!(
        kube(KubeError::ProcessSeat("a".into())).exit_code(),
        exit_codes::USAGE
    );
    let monitor = |e: MonitorError| Error::Monitor {
        message: e.to_string(),
        source: Box::new(e),
    };
    assert_eq!(
        monitor(MonitorError::NoSeats).exit_code(),
        exit_codes::USAGE
    );
    let write = monitor(MonitorError::Store(StoreError::Write {
        path: PathBuf::from("results/s.json"),
        source: io(),
    }));
    assert_eq!(write.exit_code(), exit_codes::IO);
}

#[test]
fn operator_input_a_library_refuses_is_usage() {
    let slug = Error::from(FlagError::from(
        bakeoff_artifact::slug::validate_slug("Upper").unwrap_err(),
    ));
    assert_eq!(slug.exit_code(), exit_codes::USAGE);
    assert_eq!(
        slug.to_string(),
        "slug \"Upper\" must be lower-case letters, digits and single dashes (e.g. \"upper\")"
    );
    let depth = Error::from(FlagError::from(
        bakeoff_suites::context::parse_depths("120").unwrap_err(),
    ));
    assert_eq!(depth.exit_code(), exit_codes::USAGE);
    assert_eq!(
        depth.to_string(),
        "context depth \"120\" is not a percentage 0–100"
    );
    let battery = Error::from(FlagError::from(intelligence::battery::BatteryError::Empty(
        "b.jsonl".into(),
    )));
    assert_eq!(battery.exit_code(), exit_codes::USAGE);
    let refusal = Error::from(FlagError::from(refusal::battery::BatteryError::Empty(
        "r.jsonl".into(),
    )));
    assert_eq!(refusal.exit_code(), exit_codes::USAGE);
    let prompts = Error::from(FlagError::from(PromptsError("p".into())));
    assert_eq!(prompts.exit_code(), exit_codes::USAGE);
}

#[test]
fn a_url_or_tls_flag_is_usage_and_the_embedded_default_failed() {
    let url = Error::from(FlagError::from(
        bakeoff_client::EndpointUrl::parse("ftp://x").unwrap_err(),
    ));
    assert_eq!(url.exit_code(), exit_codes::USAGE);
    let local = Error::from(LocalError::Provision("no network".into()));
    assert_eq!(local.exit_code(), exit_codes::FAILED);
    assert_eq!(local.to_string(), "no network");
}

#[test]
fn inputs_named_on_the_command_line_are_usage() {
    let body = Error::from(FlagError::BodyFile {
        path: PathBuf::from("notes.md"),
        source: io(),
    });
    assert_eq!(body.exit_code(), exit_codes::USAGE);
    assert!(
        body.to_string()
            .starts_with("cannot read --body-file notes.md ("),
        "{body}"
    );
    let sweep = Error::from(SweepInputError::NoSweep {
        path: PathBuf::from("a.json"),
        suite: "throughput".into(),
    });
    assert_eq!(sweep.exit_code(), exit_codes::USAGE);
    let unreadable = Error::from(SweepInputError::Store(StoreError::Read {
        path: PathBuf::from("a.json"),
        source: io(),
    }));
    assert_eq!(unreadable.exit_code(), exit_codes::USAGE);
    // A sweep whose details do not read is the operator's file to replace, as a missing one.
    let summary: bakeoff_artifact::SuiteSummary = serde_json::from_value(serde_json::json!({
        "planned": 1, "finished": 1, "outcomes": {}, "passed": 0, "scored": 0,
        "details": {"steps": 3}
    }))
    .unwrap();
    let garbled = Error::from(SweepInputError::Unreadable {
        path: PathBuf::from("a.json"),
        suite: "throughput".into(),
        source: summary
            .details_as::<bakeoff_artifact::LoadReport>()
            .unwrap_err(),
    });
    assert_eq!(garbled.exit_code(), exit_codes::USAGE);
    let none = Error::from(NoArtifactFor {
        slug: "gone".into(),
        dir: PathBuf::from("results"),
        candidates: vec!["a".into(), "b\u{1b}[2J".into()],
    });
    assert_eq!(none.exit_code(), exit_codes::USAGE);
    assert_eq!(
        none.to_string(),
        "no artifact for candidate \"gone\" under results (candidates there: a, b\\u{1b}[2J); give the slug of an artifact there, or --out DIR"
    );
    let client = Error::from(FlagError::EngineLog {
        path: PathBuf::from("engine.log"),
        source: io(),
    });
    assert_eq!(client.exit_code(), exit_codes::USAGE);
}
