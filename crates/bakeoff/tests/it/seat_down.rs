//! `bakeoff seat down` and the zombie-loader refusal through the real binary: a process seat that
//! ignores SIGTERM is killed after its grace and the output says so; `seat up` refuses (exit 1,
//! one line naming the pid and the fix) while a recorded zombie loader — here a live process
//! this test started — is alive, and goes ahead once it is gone.

use std::path::Path;

use crate::util::{self, code, free_port, stdout};

fn bakeoff(args: &[&str]) -> (i32, String, String) {
    let o = util::bakeoff(args);
    (
        code(&o),
        stdout(&o),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A process seat running `sh -c SCRIPT` with a 1 s stop grace.
fn shell_seat(name: &str, port: u16, script: &str) -> String {
    let header = bakeoff_testkit::fleet::seat_header(name, "generic", "bench", port, "x");
    format!(
        "{header}stop_timeout_s = 1\n[seat.process]\ncommand = \"/bin/sh\"\nargs = [\"-c\", {script:?}]\n"
    )
}

fn write(dir: &Path, toml: &str) -> String {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, toml).unwrap();
    p.display().to_string()
}

/// The process's start time, clock ticks after boot (its identity with the pid).
fn start_ticks(pid: u32) -> u64 {
    bakeoff_host::ProcRoot::system()
        .entry(pid)
        .unwrap()
        .start_ticks
}

#[tokio::test]
async fn seat_down_says_it_escalated_and_up_refuses_while_a_zombie_lives() {
    let _g = bakeoff_testkit::serial().await;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let f = write(
        dir.path(),
        &shell_seat(
            "deaf",
            port,
            &format!("trap '' TERM; exec python3 -m http.server {port} --bind 127.0.0.1"),
        ),
    );
    // Start it without a watch (it is not an engine): `seat up` would wait for a completion.
    let fleet = bakeoff_seats::Fleet::load(Path::new(&f)).unwrap();
    let seat = fleet.seat("deaf").unwrap().clone();
    let mut b = bakeoff_seats::backend::Backend::for_seat(&fleet, &seat)
        .await
        .unwrap();
    b.start().await.unwrap();
    let mut listening = false;
    for _ in 0..600 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            listening = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(listening, "{:?}", b.tail(20).await);

    let (c, out, err) = bakeoff(&["seat", "down", "--fleet", &f, "deaf"]);
    assert_eq!(c, 0, "{out}{err}");
    assert!(
        out.contains("deaf: down; stopped (escalated: SIGKILL to process group"),
        "{out}"
    );
    assert!(out.contains(&format!("port {port} released")), "{out}");

    // A zombie record naming a live process: `seat up` refuses, in one line.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let pid = sleeper.id();
    let rec = serde_json::json!({
        "seat": "deaf", "port": port, "recorded_at": "2026-01-01T00:00:00Z",
        "processes": [{"pid": pid, "start_ticks": start_ticks(pid), "state": "D",
                       "cmdline": "sleep 600", "rss_bytes": null, "gpu_bytes": null}]
    });
    let path = dir.path().join(".bakeoff-seats/deaf.zombie.json");
    std::fs::write(&path, rec.to_string()).unwrap();
    let (c, out, err) = bakeoff(&["seat", "up", "--fleet", &f, "deaf"]);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert_eq!(c, 1, "{out}{err}");
    assert!(
        err.contains(&format!("bakeoff seat up refuses until pid {pid} is gone")),
        "{err}"
    );
    assert!(path.exists());
    // Gone: the next `seat down` is a no-op and the stale record goes at the next start check.
    let (c, out, _) = bakeoff(&["seat", "down", "--fleet", &f, "deaf"]);
    assert_eq!(c, 0);
    assert!(out.contains("deaf: down; nothing was running"), "{out}");
}
