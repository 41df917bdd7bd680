//! Processes as `/proc` shows them: this test process, a child that sleeps, a child that has
//! exited and is not reaped yet.

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use bakeoff_host::ProcRoot;
use bakeoff_host::proc::{self, descendants};

#[test]
fn this_process_is_read_as_it_is() {
    let proc = ProcRoot::system();
    let me = std::process::id();
    let e = proc.entry(me).unwrap();
    assert_eq!(e.pid, me);
    assert_eq!(e.ppid, std::os::unix::process::parent_id());
    assert!(matches!(e.state, 'R' | 'S'), "{e:?}");
    assert!(!e.is_gone() && proc.is_alive(me));
    // The kernel keeps the first 15 bytes of the executable's name as comm.
    let exe = std::env::current_exe().unwrap();
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&e.comm), "{name} / {}", e.comm);
    assert_eq!(proc.alive(me, e.start_ticks).map(|a| a.pid), Some(me));
    assert_eq!(proc.alive(me, e.start_ticks + 1), None);

    let args = proc.cmdline_args(me).unwrap();
    assert_eq!(args, std::env::args().collect::<Vec<_>>());
    assert!(proc.cmdline(me).unwrap().starts_with(&args[0]));

    let rss = proc.rss_bytes(me).unwrap();
    assert!(rss > 1 << 20, "{rss}");
    assert!(proc::own_peak_rss_bytes().unwrap() >= rss);

    let up = proc.uptime_s().unwrap();
    let age = proc.age_s(me).unwrap();
    assert!((age as f64) <= up, "{age} s old on a host up {up} s");
    // This machine runs the tests outside Docker's cgroups or inside a cgroup namespace: when
    // a container id is found at all, it is Docker's 64 hex digits.
    if let Some(id) = proc.container_of(me) {
        assert_eq!(id.len(), 64, "{id}");
    }
    let facts = proc.facts(me);
    assert_eq!(facts.cmdline.as_deref(), Some(args.join(" ").as_str()));
    assert_eq!(facts.uptime_s.map(|s| s.abs_diff(age) <= 1), Some(true));
}

#[test]
fn a_child_is_a_descendant_and_a_port_on_its_command_line_is_found() {
    let proc = ProcRoot::system();
    let me = std::process::id();
    // A shell waiting on its stdin (no child of its own), with a port among its arguments.
    let mut child = Command::new("sh")
        .args(["-c", "read line", "sh", "--port", "8016"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mine: Vec<u32> = proc.with_descendants(me).iter().map(|e| e.pid).collect();
    assert_eq!(mine[0], me);
    assert!(mine.contains(&pid), "{mine:?}");
    assert!(descendants(&proc.all(), &[me]).contains(&pid));
    let e = proc.entry(pid).unwrap();
    assert_eq!((e.ppid, e.comm.as_str()), (me, "sh"));
    // The test harness's process group, inherited.
    assert_eq!(e.pgrp, proc.entry(me).unwrap().pgrp);
    assert!(proc.group_members(e.pgrp).iter().any(|m| m.pid == pid));
    assert!(proc.facts(pid).ports.contains(&8016));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(proc.alive(pid, e.start_ticks), None);
}

#[test]
fn a_child_that_exited_unreaped_is_gone() {
    let proc = ProcRoot::system();
    let mut child = Command::new("true").stdin(Stdio::null()).spawn().unwrap();
    let pid = child.id();
    let start = proc.entry(pid).unwrap().start_ticks;
    // Wait for the exit without reaping it (WNOWAIT), on a thread, so the wait has a limit.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
        let r = rustix::process::waitid(
            rustix::process::WaitId::Pid(pid),
            rustix::process::WaitIdOptions::EXITED | rustix::process::WaitIdOptions::NOWAIT,
        );
        let _ = tx.send(r.is_ok());
    });
    assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok(true));
    let e = proc.entry(pid).unwrap();
    assert_eq!(e.state, 'Z', "{e:?}");
    assert!(e.is_gone() && !proc.is_alive(pid));
    assert_eq!(proc.alive(pid, start), None);
    assert!(!proc.group_members(e.pgrp).iter().any(|m| m.pid == pid));
    assert_eq!(proc.cmdline(pid).as_deref(), Some("[true]"));
    child.wait().unwrap();
}
