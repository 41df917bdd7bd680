//! The startup probe sized from a real start: the real llama-server with the real test model
//! brought up as seat `gemma-k8s` (a process seat, so no image is needed to start it), which
//! leaves its start record `<state_dir>/gemma-k8s.seat.json`; then the same seat, given a
//! `[seat.docker]` launch in a second fleet file over the same state directory, is exported and
//! its startup probe covers that record's time to ready.

use std::time::Duration;

use bakeoff_kube::{ExportOptions, MIN_STARTUP_BUDGET_S, PROBE_PERIOD_S, export};
use bakeoff_seats::{Fleet, Seats, WatchOptions};
use bakeoff_testkit::fleet::{SeatProcessGuard, seat_header};

use crate::common::container;

#[tokio::test]
async fn a_recorded_start_sizes_the_startup_probe() {
    let _g = bakeoff_testkit::serial().await;
    let dir = tempfile::tempdir().unwrap();
    let _kill = SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = bakeoff_testkit::engine();
    let header = seat_header("gemma-k8s", "llama.cpp", "bench", port, "gemma-3-270m");
    let process = format!(
        "{header}[seat.process]\ncommand = {:?}\nargs = [\"-m\", {:?}, \"--host\", \"127.0.0.1\", \"--port\", \"{{port}}\", \"-c\", \"1024\", \"-np\", \"1\", \"--alias\", \"gemma-3-270m\"]\n",
        e.llama_server.display().to_string(),
        e.model.display().to_string()
    );
    let p = dir.path().join("fleet.toml");
    std::fs::write(&p, &process).unwrap();
    let watch = WatchOptions {
        ready_timeout: Duration::from_secs(120),
        ..WatchOptions::default()
    };
    let seats = Seats::new(Fleet::load(&p).unwrap(), dir.path().join("results"), watch);
    let up = seats.up("gemma-k8s", false, false).await.unwrap();
    assert!(up.ok(), "{up:?}");
    seats.down("gemma-k8s", false).await.unwrap();
    let load_ms = bakeoff_seats::ops::last_load_ms(&seats.fleet, "gemma-k8s")
        .expect("a ready start leaves its time to ready");

    let docker = format!(
        "{header}[seat.docker]\nimage = \"bakeoff-llama:local\"\ncommand = [\"/opt/llama/bin/llama-server\", \"-m\", \"/models/model.gguf\", \"--host\", \"0.0.0.0\", \"--port\", \"8080\"]\ncontainer_port = 8080\n"
    );
    let p2 = dir.path().join("fleet-k8s.toml");
    std::fs::write(&p2, docker).unwrap();
    let fleet = Fleet::load(&p2).unwrap();
    let x = export(&fleet, &ExportOptions::default()).unwrap();
    let m = &x.seats[0];
    let want = (load_ms.div_ceil(1000) * 2).max(MIN_STARTUP_BUDGET_S);
    assert_eq!(m.startup.seconds, want, "{}", m.startup.source);
    assert!(
        m.startup.source.contains("gemma-k8s.seat.json"),
        "{}",
        m.startup.source
    );
    let probe = container(m).startup_probe.clone().unwrap();
    assert!(
        i64::from(probe.failure_threshold.unwrap()) * PROBE_PERIOD_S as i64 >= want as i64,
        "{probe:?}"
    );
}
