//! The host's conditions around a seat load (docs/metrics.md "Conditions"), through the real binary and the real
//! llama-server: a scratch file of this test's is cached, then dropped from the page cache
//! (`posix_fadvise(DONTNEED)`) while a `seat up` load is in progress → the seat start record
//! carries `page-cache-dropped` with the evidence and `seat up` ends CONTAMINATED; the same
//! load without the drop → no such finding.
//!
//! No timing decides the outcome: the seat's command is a wrapper that holds the real
//! llama-server back until the test creates a `go` file. The sampler takes its first sample
//! before the start command; the wrapper's pid file (`<seat>.process.json`, written once it is
//! spawned) says the load has begun; the test drops the cache, checks `/proc/meminfo` saw it,
//! and only then lets the engine go, so the sample at the end of the load (at the latest) sees
//! the cache below its start.
//!
//! Limitation: the machine is shared; another process refilling the page cache by more than
//! the scratch file's size between the drop and the end of the load would hide the drop.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::campaign::wait_until;
use crate::util::{self, bakeoff_cmd, drop_from_cache, free_port, serial_tempdir, text};

const MIB: u64 = 1024 * 1024;

/// `/proc/meminfo` now.
fn memory() -> bakeoff_host::proc::Memory {
    bakeoff_host::ProcRoot::system().memory().unwrap()
}

/// Write `bytes` of data to `path` and flush it to the disk: its pages stay cached, clean.
fn write_scratch(path: &Path, bytes: u64) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5au8; 8 * MIB as usize];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
    f.sync_all().unwrap();
}

fn findings(rec: &Value) -> Vec<(String, String)> {
    rec["conditions"]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_string(),
                f["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_page_cache_drop_during_a_seat_load_is_recorded_and_a_quiet_load_is_not() {
    let (_g, dir) = serial_tempdir().await;
    let d = dir.path();
    // Large enough to be more than a fifth of the cache once it is in it (the finding's share,
    // docs/metrics.md "Conditions") and more than 256 MiB: a third of the cache now, at least
    // 1 GiB, within a third of the memory available.
    let cached = memory().cached_bytes;
    let avail = memory().available_bytes.unwrap();
    let scratch_bytes = (cached / 3).max(1024 * MIB).min(avail / 3);
    assert!(
        scratch_bytes > 300 * MIB,
        "too little memory for the test: {avail}"
    );
    let scratch = d.join("scratch.bin");
    write_scratch(&scratch, scratch_bytes);

    let go = d.join("go");
    let wrapper = d.join("hold-then-llama.sh");
    let e = bakeoff_testkit::engine();
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nwhile [ ! -e '{go}' ]; do sleep 0.1; done\nexec '{bin}' \"$@\"\n",
            go = go.display(),
            bin = e.llama_server.display()
        ),
    )
    .unwrap();
    let st = Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .unwrap();
    assert!(st.success());
    let header = bakeoff_testkit::fleet::seat_header("w", "llama.cpp", "bench", free_port(), "m");
    let fleet = d.join("fleet.toml");
    std::fs::write(
        &fleet,
        format!(
            r#"{header}[seat.process]
command = "{wrapper}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "512", "-np", "1", "--alias", "m"]
"#,
            wrapper = wrapper.display(),
            model = e.model.display()
        ),
    )
    .unwrap();
    let fleet = fleet.display().to_string();
    let state = d.join(".bakeoff-seats");
    let _cleanup = bakeoff_testkit::fleet::SeatProcessGuard {
        state: state.clone(),
    };
    let record = || util::read_json(&state.join("w.seat.json"));

    // 1. The drop during the load.
    let child = bakeoff_cmd()
        .args([
            "seat",
            "up",
            "--fleet",
            &fleet,
            "w",
            "--silence-timeout",
            "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the wrapper's pid file", Duration::from_secs(120), || {
        crate::campaign::pid_in(&state, "w").is_some()
    });
    let pid = crate::campaign::pid_in(&state, "w").unwrap();
    let before_drop = memory().cached_bytes;
    drop_from_cache(&scratch);
    let after_drop = memory().cached_bytes;
    eprintln!(
        "scratch {} MiB; Cached {} MiB before the drop, {} MiB after",
        scratch_bytes / MIB,
        before_drop / MIB,
        after_drop / MIB
    );
    std::fs::write(&go, "").unwrap();
    let o = crate::util::finish_within(child, crate::util::COMMAND_LIMIT, "seat up");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let down = util::bakeoff(&["seat", "down", "--fleet", &fleet, "w"]);
    assert_eq!(down.status.code(), Some(0), "{}", text(&down));
    let rec = record();
    eprintln!("with the drop: {:#}", rec["conditions"]);
    let c = &rec["conditions"];
    // The engine (the wrapper, exec'd into llama-server: the same pid) is left out.
    assert_eq!(c["excluded"]["engine_pid"], pid, "{c:#}");
    assert!(c["samples"].as_u64().unwrap() >= 2, "{c:#}");
    let f = findings(&rec);
    let dropped = f
        .iter()
        .find(|(code, _)| code == "page-cache-dropped")
        .unwrap_or_else(|| panic!("no page-cache-dropped in {c:#}"));
    assert!(dropped.1.contains("page cache fell from"), "{}", dropped.1);
    let start = c["memory"]["start"]["cached_bytes"].as_u64().unwrap();
    let min = c["memory"]["min"]["cached_bytes"].as_u64().unwrap();
    assert!(
        start - min > 256 * MIB && (start - min) * 5 > start,
        "{c:#}"
    );
    // `seat up` ends with the conditions line, naming the finding.
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.contains("conditions: CONTAMINATED")
            && last.contains("page-cache-dropped during seat load"),
        "{out}"
    );

    // 2. The same load, nothing dropped (the `go` file is there: no hold).
    let o = util::bakeoff(&[
        "seat",
        "up",
        "--fleet",
        &fleet,
        "w",
        "--silence-timeout",
        "60",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let down = util::bakeoff(&["seat", "down", "--fleet", &fleet, "w"]);
    assert_eq!(down.status.code(), Some(0), "{}", text(&down));
    let rec = record();
    eprintln!("without the drop: {:#}", rec["conditions"]);
    assert!(
        !findings(&rec)
            .iter()
            .any(|(code, _)| code == "page-cache-dropped"),
        "{:#}",
        rec["conditions"]
    );
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.trim_start().starts_with("conditions: ")),
        "{out}"
    );
}
