//! Lock holders: a real `flock(1)` holding a hub blob lock, stalled, exited, partially killed,
//! and holding while the blob grows.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bakeoff_cache::audit::{Activity, Severity};
use bakeoff_cache::locks::LockState;

use crate::common::{HfHome, Holder, audit, fake_sha};

#[test]
fn a_held_lock_on_a_blob_that_does_not_grow_names_the_pid_to_end() {
    let home = HfHome::new();
    let (blob, lock) = home.add_incomplete(
        "org/model",
        &fake_sha("x", 1),
        1000,
        Duration::from_secs(600),
    );
    let holder = Holder::start(&lock);
    let report = audit(&[home.home()]);
    assert!(!report.ok);
    let l = &report.locks[0];
    let LockState::Held { holders } = &l.state else {
        panic!("{:?}", l.state)
    };
    assert_eq!(holders[0].pid, holder.pid());
    assert!(
        holders[0].cmdline.starts_with("flock "),
        "{}",
        holders[0].cmdline
    );
    assert!(
        holders[0].cmdline.ends_with("sleep 30"),
        "{}",
        holders[0].cmdline
    );
    assert!(!l.progressing);
    let d = &report.downloads[0];
    assert_eq!(d.path, blob);
    assert_eq!(d.activity, Activity::Stalled);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "stalled_download")
        .unwrap();
    assert_eq!(f.severity, Severity::Problem);
    assert_eq!(f.pids, vec![holder.pid()]);
    assert!(
        f.message.contains(&format!("pid {}", holder.pid())),
        "{}",
        f.message
    );
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains(&format!("kill {}", holder.pid())), "{fix}");
    assert!(fix.contains("stale pull loop holds the blob lock"), "{fix}");
}

#[test]
fn the_same_lock_after_its_holder_exited_is_stale() {
    let home = HfHome::new();
    let (_blob, lock) = home.add_incomplete(
        "org/model",
        &fake_sha("x", 2),
        1000,
        Duration::from_secs(600),
    );
    let mut holder = Holder::start(&lock);
    holder.kill_all();
    let report = audit(&[home.home()]);
    assert_eq!(report.locks[0].state, LockState::Stale);
    assert_eq!(report.downloads[0].activity, Activity::Interrupted);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "stale_lock")
        .unwrap();
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains(&format!("rm '{}'", lock.display()))
    );
    // The blob is still incomplete: that alone fails the audit.
    assert!(!report.ok);
}

#[test]
fn a_child_that_survived_a_partial_kill_is_named_as_the_holder() {
    let home = HfHome::new();
    let (_blob, lock) = home.add_incomplete(
        "org/model",
        &fake_sha("x", 3),
        1000,
        Duration::from_secs(600),
    );
    let mut holder = Holder::start(&lock);
    let leader = holder.pid();
    holder.kill_leader_only();
    let report = audit(&[home.home()]);
    let LockState::Held { holders } = &report.locks[0].state else {
        panic!("{:?}", report.locks[0].state)
    };
    // flock's `sleep 30` child inherited the descriptor: it holds the lock now.
    assert_eq!(holders.len(), 1, "{holders:?}");
    assert_ne!(holders[0].pid, leader);
    assert_eq!(holders[0].cmdline, "sleep 30");
    assert!(!report.ok);
}

#[test]
fn a_held_lock_whose_blob_grows_is_a_download_in_progress() {
    let home = HfHome::new();
    let (blob, lock) =
        home.add_incomplete("org/model", &fake_sha("x", 4), 1000, Duration::from_secs(0));
    let _holder = Holder::start(&lock);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = Arc::clone(&stop);
        let blob = blob.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&blob)
                .unwrap();
            while !stop.load(Ordering::Relaxed) {
                f.write_all(&[1u8; 4096]).unwrap();
                f.flush().unwrap();
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let report = audit(&[home.home()]);
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    assert!(report.ok, "{:#?}", report.findings);
    assert_eq!(report.downloads[0].activity, Activity::InProgress);
    assert!(report.downloads[0].grew_bytes > 0);
    assert!(report.locks[0].progressing);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "download_in_progress")
        .unwrap();
    assert_eq!(f.severity, Severity::Note);
}

#[test]
fn a_held_lock_with_no_blob_growing_is_a_problem() {
    let home = HfHome::new();
    home.add_repo("org/model", &[("config.json", b"{}")]);
    let lock_dir = home.hub().join(".locks/models--org--model");
    std::fs::create_dir_all(&lock_dir).unwrap();
    let lock = lock_dir.join(format!("{}.lock", fake_sha("x", 5)));
    std::fs::write(&lock, b"").unwrap();
    let holder = Holder::start(&lock);
    let report = audit(&[home.home()]);
    assert!(!report.ok);
    let f = report
        .findings
        .iter()
        .find(|f| f.code == "lock_held_idle")
        .unwrap();
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains(&format!("kill {}", holder.pid()))
    );
}

#[test]
fn a_token_on_the_holders_command_line_is_redacted() {
    let home = HfHome::new();
    let (_blob, lock) =
        home.add_incomplete("org/model", &fake_sha("x", 6), 10, Duration::from_secs(60));
    let _holder = Holder::start_with(
        &lock,
        &[
            "sh",
            "-c",
            "sleep 30",
            "sh",
            "--token",
            "abcdef",
            "hf_ABCDEFGHIJKLMNOP",
        ],
    );
    let report = audit(&[home.home()]);
    let json = serde_json::to_string(&report).unwrap();
    assert!(!json.contains("abcdef"), "{json}");
    assert!(!json.contains("hf_ABCDEFGHIJKLMNOP"), "{json}");
    assert!(json.contains("--token <redacted>"), "{json}");
}
