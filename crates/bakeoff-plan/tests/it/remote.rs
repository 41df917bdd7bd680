//! Another host's readings in the plan: its processes mapped to seats through the PIDs of
//! that host's containers (never through this machine's `/proc`), every figure labelled with
//! the channel, and a host without readings planned by claims with the reason.

use std::collections::BTreeMap;

use bakeoff_host::nvidia_smi::{join, parse_compute_apps, parse_query_gpu};
use bakeoff_host::procinfo::ProcFacts;
use bakeoff_host::{ReadingSource, Readings};
use bakeoff_plan::fleet::{Engine, LaunchSpec, SeatSpec, StrOrList};
use bakeoff_plan::{FleetView, HostReadings, PlanOptions, build_plan_hosts};

const LABEL: &str = "nvidia-smi over ssh ops@gpu2";

fn llama_seat(name: &str, host: &str, container: &str) -> SeatSpec {
    SeatSpec {
        name: name.into(),
        host: Some(host.into()),
        engine: Engine::LlamaCpp,
        port: Some(8080),
        docker: Some(LaunchSpec {
            image: Some("ghcr.io/ggml-org/llama.cpp:server-cuda".into()),
            command: Some(StrOrList::Many(vec!["-m".into(), "/m.gguf".into()])),
            name: Some(container.into()),
            gpus: Some(vec![0]),
            ..LaunchSpec::default()
        }),
        ..SeatSpec::default()
    }
}

/// The lead's H200 figures (docs/plan.md, "Result (2026-12-02, H200 …)"): total 143,771 MiB,
/// used 1,625 MiB, llama-server PID 5159 holding 1,616 MiB.
fn h200() -> Readings {
    let (gpus, _) = parse_query_gpu("0, GPU-x, NVIDIA H200, 143771, 1625, 142146\n");
    let (apps, _) = parse_compute_apps("GPU-x, 5159, 1616, llama-server\n");
    Readings {
        source: ReadingSource::NvidiaSmi,
        gpus: join(gpus, apps),
        unavailable: None,
    }
}

#[test]
fn a_remote_process_maps_to_its_seat_through_the_containers_pids_there() {
    let view = FleetView {
        seats: vec![
            llama_seat("there", "gpu2", "bakeoff-there").to_plan_seat("gpu2"),
            llama_seat("dark", "gpu3", "bakeoff-dark").to_plan_seat("gpu3"),
        ],
        gpu_memory: BTreeMap::new(),
        local_hosts: vec!["local".into()],
    };
    let remote = BTreeMap::from([
        (
            "gpu2".to_owned(),
            HostReadings {
                host: "gpu2".into(),
                source: LABEL.into(),
                readings: h200(),
                container_pids: BTreeMap::from([("bakeoff-there".to_owned(), vec![5159])]),
                notes: vec![],
            },
        ),
        ("gpu3".to_owned(), HostReadings::not_over("gpu3", "tcp")),
    ]);
    let local = Readings {
        source: ReadingSource::Nvml,
        gpus: vec![],
        unavailable: Some("NVML did not initialize".into()),
    };
    // This machine's /proc must never be asked about a remote PID.
    let plans = build_plan_hosts(
        &view,
        &local,
        &remote,
        &|pid: u32| -> ProcFacts { panic!("local /proc asked about remote pid {pid}") },
        &BTreeMap::new(),
        &PlanOptions::default(),
    );
    let g = plans.iter().find(|g| g.host == "gpu2").unwrap();
    assert_eq!(g.total_source.as_deref(), Some(LABEL));
    assert_eq!(g.measured_source.as_deref(), Some(LABEL));
    let m = g.seats[0].measured.as_ref().unwrap();
    assert_eq!(m.pids, vec![5159]);
    assert_eq!(m.bytes, 1616 * 1024 * 1024);
    assert_eq!(m.matched_by, "container bakeoff-there");
    assert!(g.other_processes.is_empty());

    let d = plans.iter().find(|g| g.host == "gpu3").unwrap();
    assert!(d.measured_source.is_none());
    assert!(
        d.notes
            .iter()
            .any(|n| n == "not available over tcp:// (claims only)"),
        "{:?}",
        d.notes
    );
    assert_eq!(
        remote["gpu3"].summary(),
        "GPU readings on gpu3: not available over tcp:// (claims only)"
    );
}
