//! SIGTERM / Ctrl-C mid-variant, through the library with the real llama-server: the stop flag
//! flips while the variant is being measured; the variant's seat is stopped, the displaced seat
//! is restored and answers a real completion, the row says `interrupted`; the next run re-runs
//! that variant and only that one.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bakeoff_artifact::campaign::OutcomeKind;
use bakeoff_campaign::Campaign;
use bakeoff_campaign::run::{Progress, Reporter, RunOptions, run};
use bakeoff_seats::Seats;
use bakeoff_testkit::fleet::seat_header;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn process_seat(name: &str, role: &str, port: u16) -> String {
    let e = bakeoff_testkit::engine();
    format!(
        "{}[seat.process]\ncommand = \"{}\"\nargs = [\"-m\", \"{}\", \"--host\", \"127.0.0.1\", \"--port\", \"{{port}}\", \"-c\", \"1024\", \"-np\", \"1\", \"--alias\", \"gemma-3-270m\"]\n",
        seat_header(name, "llama.cpp", role, port, "gemma-3-270m"),
        e.llama_server.display(),
        e.model.display()
    )
}

fn options() -> RunOptions {
    let mut watch = bakeoff_seats::WatchOptions {
        silence_timeout: Duration::from_secs(20),
        ready_timeout: Duration::from_secs(120),
        ..Default::default()
    };
    watch.probe_interval = Duration::from_millis(300);
    RunOptions {
        confirm: true,
        fresh: false,
        only: vec![],
        watch,
        suite_options: Default::default(),
        nvidia_smi: "/nonexistent/nvidia-smi".into(),
        allow_contaminated: false,
        ceilings: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_mid_variant_restores_the_displaced_seat_and_the_variant_runs_again() {
    let _serial = bakeoff_testkit::serial().await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let fleet = format!(
        "[hosts.local]\ngpus = 0\n{}{}",
        process_seat("gen", "production", port),
        process_seat("trial", "bench", port)
    );
    std::fs::write(dir.path().join("fleet.toml"), fleet).unwrap();
    std::fs::write(
        dir.path().join("campaign.toml"),
        "[campaign]\nname = \"stop\"\nfleet = \"fleet.toml\"\nsuites = [\"smoke\"]\nlimit = 1\n[[candidate]]\nname = \"t\"\nseat = \"trial\"\n[candidate.window]\ndisplaces = [\"gen\"]\nidle_for_s = 1\nidle_timeout_s = 30\n",
    )
    .unwrap();
    let c = Campaign::load(&dir.path().join("campaign.toml")).unwrap();
    let _guard = bakeoff_testkit::fleet::SeatProcessGuard {
        state: c.fleet.state_dir.clone(),
    };
    let seats = Seats::new(c.fleet.clone(), c.out.clone(), options().watch);
    assert!(seats.up("gen", true, false).await.unwrap().ok());

    // Flip the stop flag as soon as the variant is being measured.
    let (tx, rx) = tokio::sync::watch::channel(false);
    let tx = Arc::new(Mutex::new(Some(tx)));
    let flip = tx.clone();
    let reporter = Reporter::new(move |p| {
        if let Progress::Phase { text, .. } = &p
            && text.contains("measuring")
            && let Some(tx) = flip.lock().unwrap().as_ref()
        {
            let _ = tx.send(true);
        }
    });
    let s = run(&c, &options(), rx, &reporter).await.unwrap();
    assert!(s.interrupted);
    let row = &s.record.variants[0];
    assert_eq!(row.outcome.kind, OutcomeKind::Interrupted, "{row:?}");
    let d = &row.displaced[0];
    assert_eq!(
        (d.seat.as_str(), d.was_up, d.restored),
        ("gen", true, Some(true)),
        "{d:?}"
    );
    assert!(d.down_ms.is_some());
    // gen is serving again; the variant's seat is down.
    let gen_status = seats.status(true).await;
    let gen_row = gen_status.iter().find(|s| s.seat == "gen").unwrap();
    assert_eq!(gen_row.serving, Some(true), "{gen_row:?}");
    assert!(!c.out.join("../.bakeoff-seats/t.process.json").exists());
    let journal = std::fs::read_to_string(c.out.join("campaign.journal.jsonl")).unwrap();
    assert!(journal.contains("\"event\":\"seat-stopped\""), "{journal}");

    // The next run re-runs the interrupted variant (attempt 2) to an outcome.
    let (_tx2, rx2) = tokio::sync::watch::channel(false);
    let s = run(&c, &options(), rx2, &Reporter::silent()).await.unwrap();
    let row = &s.record.variants[0];
    assert!(!s.interrupted);
    assert_eq!(row.attempts, 2, "{row:?}");
    assert_eq!(row.outcome.kind, OutcomeKind::Completed, "{row:?}");
    assert_eq!(row.displaced[0].restored, Some(true));
    // The stop came during the first attempt's preflight: nothing was measured then, so the
    // only artifact is the second attempt's.
    assert_eq!(row.artifacts, ["t.bakeoff.json"]);
    seats.down("gen", true).await.unwrap();
    drop(tx);
}
