//! `seat down` really frees the seat (docs/field-cases.md B5: a container that refused a normal stop — a
//! zombie loader under a huge mmap — and needed `docker rm -f`). Against real parts: a process
//! that ignores SIGTERM (a shell that ignores it, then `exec`s Python's http.server: SIG_IGN
//! survives exec) is killed after the grace and its port is free; the real llama-server stops
//! politely; a real container that ignores SIGTERM is killed by Docker and is gone. A process
//! stuck in `D` cannot be made without root tricks, so the zombie-loader logic is fed a fake
//! `/proc`; the refusal of `seat up` is checked with a zombie record naming a live process this
//! test started, and the stale record's removal once it is gone.

use std::path::Path;

use bakeoff_artifact::FindingSeverity;
use bakeoff_seats::OpsError;
use bakeoff_seats::backend::Observed;
use bakeoff_seats::release::{self, ProcRoot, Stopped, ZombieProcess, ZombieRecord};

use crate::common::*;

/// A process seat `name` on `port` running `sh -c SCRIPT`, with a 1 s stop grace.
fn shell_seat(name: &str, port: u16, script: &str) -> String {
    process_seat(
        name,
        "generic",
        port,
        "/bin/sh",
        &["-c".to_string(), script.to_string()],
        "x",
    )
    .replace("[seat.process]", "stop_timeout_s = 1\n[seat.process]")
}

/// Start `name` through its backend (no watch: the program is not an engine) and wait until
/// something listens on `port`. The bound only keeps a broken test from hanging.
async fn start_listening(seats: &bakeoff_seats::Seats, name: &str, port: u16) {
    let seat = seats.seat(name).unwrap().clone();
    let mut b = seats.backend(&seat).await.unwrap();
    b.start().await.unwrap();
    for _ in 0..600 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{name} never listened on {port}: {:?}", b.tail(20).await);
}

#[tokio::test]
async fn a_process_that_ignores_sigterm_is_killed_after_the_grace_and_its_port_freed() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let toml = shell_seat(
        "deaf",
        port,
        &format!("trap '' TERM; exec python3 -m http.server {port} --bind 127.0.0.1"),
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    start_listening(&seats, "deaf", port).await;
    let pid: u32 = seats.status(false).await[0]
        .id
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    assert!(!release::port_free(port), "the server holds its port");

    let r = seats.down("deaf", false).await.unwrap();
    assert!(r.was_running);
    assert_eq!(
        r.escalated,
        vec![format!(
            "SIGKILL to process group {pid} after the 1 s grace"
        )],
        "{r:?}"
    );
    assert_eq!(r.port_released, Some(true), "{r:?}");
    assert!(r.zombies.is_empty() && r.findings.is_empty(), "{r:?}");
    assert!(r.ok());
    assert!(
        r.summary().contains("escalated: SIGKILL"),
        "{}",
        r.summary()
    );
    assert!(release::port_free(port));
    assert!(ProcRoot::system().entry(pid).is_none_or(|e| e.is_gone()));
    assert!(!release::zombie_path(&seats.fleet.state_dir, "deaf").exists());
    assert_eq!(seats.status(false).await[0].observed, Observed::Missing);
}

#[tokio::test]
async fn the_real_llama_server_stops_politely_and_frees_its_port() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let seats = one_seat(dir.path(), "gemma", port, &model(), quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("gemma", false, false).await.unwrap();
    assert!(out.ok(), "{:?}", out.report.as_ref().map(|r| &r.message));

    let r = seats.down("gemma", false).await.unwrap();
    assert!(r.was_running);
    assert!(r.escalated.is_empty(), "{r:?}");
    assert_eq!(r.port_released, Some(true));
    assert!(r.ok(), "{r:?}");
    assert!(
        r.summary().contains("the polite stop sufficed"),
        "{}",
        r.summary()
    );
    assert!(release::port_free(port));

    // Nothing runs any more: a second down stops nothing, and claims nothing about the port.
    let again = seats.down("gemma", false).await.unwrap();
    assert!(!again.was_running && again.escalated.is_empty() && again.ok());
    assert_eq!(again.port_released, None);
    assert_eq!(again.summary(), "nothing was running");
}

#[tokio::test]
async fn a_container_that_ignores_sigterm_is_killed_by_docker_and_gone() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::shell();
    let dir = bakeoff_testkit::tempdir();
    let name = unique("bk-deaf");
    img.track(&name);
    let port = free_port();
    let toml = format!(
        r#"
[[seat]]
name = "{name}"
engine = "generic"
role = "bench"
port = {port}
stop_timeout_s = 1
[seat.docker]
image = "{image}"
command = ["/bin/sh", "-c", "trap '' TERM; while :; do /bin/sleep 1; done"]
container_name = "{name}"
restart = "no"
"#,
        image = img.tag
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let seat = seats.seat(&name).unwrap().clone();
    let mut b = seats.backend(&seat).await.unwrap();
    b.start().await.unwrap();
    assert_eq!(b.status().await.observed, Observed::Running);

    let r = seats.down(&name, false).await.unwrap();
    assert!(r.was_running);
    // tini forwards SIGTERM to the shell, which ignores it: Docker sends SIGKILL after 1 s.
    assert_eq!(
        r.escalated,
        vec!["Docker sent SIGKILL after the 1 s grace (the container ignored SIGTERM)".to_string()],
        "{r:?}"
    );
    assert_eq!(r.port_released, Some(true), "{r:?}");
    assert!(r.ok(), "{r:?}");
    eprintln!("{}", r.summary());
    let inspect = std::process::Command::new("docker")
        .args(["inspect", &name])
        .output()
        .unwrap();
    assert!(!inspect.status.success(), "the container is gone");
}

/// A fake `/proc` entry (`bakeoff_host`'s fake tree, in the kernel's formats): state, process
/// group, start ticks, command line, VmRSS.
fn fake_proc(root: &Path, pid: u32, state: char, pgrp: u32, ticks: u64, cmd: &[&str], rss_kb: u64) {
    bakeoff_host::proc::fake::Proc::new(root)
        .write(&bakeoff_host::proc::fake::FakeProcess {
            pid,
            comm: "vllm serve",
            state,
            ppid: 1,
            pgrp,
            utime: 0,
            stime: 0,
            start_ticks: ticks,
            args: cmd,
            rss_kib: rss_kb,
        })
        .unwrap();
}

fn stopped_with(procs: Vec<release::ProcStat>) -> Stopped {
    Stopped {
        seat: "heavy".into(),
        port: 8016,
        // Remote: the port and GPU checks stay out of the way of the fake /proc.
        local: false,
        was_running: true,
        escalated: vec!["SIGKILL to process group 4242 after the 10 s grace".into()],
        survivors: procs.clone(),
        procs,
        container_left: None,
    }
}

#[tokio::test]
async fn a_process_left_in_d_state_is_a_zombie_loader_recorded_until_it_is_gone() {
    let root = tempfile::tempdir().unwrap();
    let proc = ProcRoot::new(root.path());
    fake_proc(
        root.path(),
        4242,
        'D',
        4242,
        777,
        &["python3", "-m", "vllm", "serve"],
        12 << 20,
    );
    // Exited and not reaped: holds nothing, never a zombie loader.
    fake_proc(root.path(), 4243, 'Z', 4242, 778, &["python3"], 0);
    let members = proc.group_members(4242);
    assert_eq!(
        members.iter().map(|e| e.pid).collect::<Vec<_>>(),
        vec![4242]
    );
    let survivors = vec![proc.entry(4242).unwrap(), proc.entry(4243).unwrap()];

    let mut r = release::verify(stopped_with(survivors), &proc).await;
    assert_eq!(r.zombies.len(), 1, "{r:?}");
    assert!(!r.ok());
    let f = &r.findings[0];
    assert_eq!(f.code, "zombie-loader");
    assert_eq!(f.severity, FindingSeverity::Error);
    assert!(
        f.message.contains("pid 4242") && f.message.contains("uninterruptible sleep (D)"),
        "{}",
        f.message
    );
    assert!(f.message.contains("12.0 GiB RSS"), "{}", f.message);
    assert!(
        f.evidence[0].contains("python3 -m vllm serve"),
        "{:?}",
        f.evidence
    );
    let fix = f.fix.as_deref().unwrap();
    assert!(
        fix.contains("wait for its I/O to finish or reboot")
            && fix.contains("refuses until pid 4242 is gone"),
        "{fix}"
    );
    assert_eq!(r.port_released, None);
    assert!(
        r.summary().contains("not verified (remote host)"),
        "{}",
        r.summary()
    );

    let state = tempfile::tempdir().unwrap();
    release::persist(state.path(), &mut r);
    let path = release::zombie_path(state.path(), "heavy");
    let rec: ZombieRecord = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        (rec.port, rec.processes[0].pid, rec.processes[0].state),
        (8016, 4242, 'D')
    );

    let z = release::live_zombie(state.path(), "heavy", &proc).unwrap();
    assert_eq!((z.pid, z.state), (4242, 'D'));
    // Another process under the same pid (another start time) is not the zombie.
    fake_proc(root.path(), 4242, 'S', 4242, 999, &["bash"], 1);
    assert!(release::live_zombie(state.path(), "heavy", &proc).is_none());
    assert!(!path.exists(), "the stale record is removed");
}

/// Write a zombie record for `seat` naming the live process `pid`.
fn record(state_dir: &Path, seat: &str, port: u16, pid: u32) {
    let e = ProcRoot::system().entry(pid).unwrap();
    let rec = ZombieRecord {
        seat: seat.into(),
        port,
        processes: vec![ZombieProcess {
            pid,
            start_ticks: e.start_ticks,
            state: 'D',
            cmdline: Some("sleep 600".into()),
            rss_bytes: None,
            gpu_bytes: None,
        }],
        recorded_at: chrono::Utc::now(),
    };
    std::fs::create_dir_all(state_dir).unwrap();
    std::fs::write(
        release::zombie_path(state_dir, seat),
        serde_json::to_vec(&rec).unwrap(),
    )
    .unwrap();
}

#[tokio::test]
async fn seat_up_refuses_while_a_recorded_zombie_lives_and_forgets_it_once_gone() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let toml = format!(
        "{}{}",
        shell_seat("a", port, "exit 3"),
        shell_seat("b", port, "exit 3")
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let mut sleeper = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    let pid = sleeper.id();
    record(&seats.fleet.state_dir, "a", port, pid);

    for (name, left_by) in [("a", "a"), ("b", "a")] {
        let e = seats.up(name, false, false).await.unwrap_err();
        let msg = e.to_string();
        match e {
            OpsError::ZombieLoader {
                seat,
                left_by: l,
                pid: p,
                state,
                ..
            } => {
                assert_eq!((seat.as_str(), l.as_str(), p), (name, left_by, pid));
                // The state is read now (a sleeping `sleep`), not the recorded `D`.
                assert_ne!(state, 'D');
            }
            other => panic!("{other}"),
        }
        assert!(
            msg.contains(&format!("refuses until pid {pid} is gone")),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "one line: {msg}");
    }

    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    // The zombie is gone: the record is stale, removed, and the start goes ahead (the seat
    // itself exits at once: a classified failure, not a refusal).
    let out = seats.up("a", false, false).await.unwrap();
    assert!(!out.ok());
    assert!(!release::zombie_path(&seats.fleet.state_dir, "a").exists());
}

/// The driver's list (here as nvidia-smi prints it) is matched to the seat's processes by pid
/// and start time: a pid of the seat that was reused by another process is not the seat's.
#[test]
fn gpu_memory_is_held_only_by_the_seats_own_processes() {
    let root = tempfile::tempdir().unwrap();
    let proc = ProcRoot::new(root.path());
    fake_proc(root.path(), 4242, 'D', 4242, 777, &["python3"], 1);
    fake_proc(root.path(), 4300, 'S', 4300, 900, &["bash"], 1);
    let (gpus, _) = bakeoff_host::nvidia_smi::parse_query_gpu(
        "0, GPU-aaaa, NVIDIA H200, 143771, 40000, 103771\n",
    );
    let (apps, _) = bakeoff_host::nvidia_smi::parse_compute_apps(
        "GPU-aaaa, 4242, 39000, python3\nGPU-aaaa, 4300, 1000, other\nGPU-aaaa, 5000, 10, gone\n",
    );
    let readings = bakeoff_host::Readings {
        source: bakeoff_host::ReadingSource::NvidiaSmi,
        gpus: bakeoff_host::nvidia_smi::join(gpus, apps),
        unavailable: None,
    };
    // The seat had 4242 and (another start of) 4300.
    let mut reused = proc.entry(4300).unwrap();
    reused.start_ticks = 1;
    let procs = vec![proc.entry(4242).unwrap(), reused];
    let held = release::gpu_holders(&readings, &procs, &proc);
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!((held[0].pid, held[0].gpu), (4242, 0));
    assert_eq!(held[0].used_bytes, Some(39000 << 20));
}
