use super::fake::{FakeProcess, Proc};
use super::*;
use procfs::prelude::*;

fn fake_tree() -> (tempfile::TempDir, ProcRoot) {
    let dir = tempfile::tempdir().unwrap();
    let p = Proc::new(dir.path());
    // 10 leads group 10; 11 its child in the group, stuck in D; 12 a grandchild that exited;
    // 20 unrelated.
    let mk = |pid, ppid, pgrp, state, comm, args: &[&str]| {
        p.write(&FakeProcess {
            pid,
            comm,
            state,
            ppid,
            pgrp,
            utime: 250,
            stime: 50,
            start_ticks: 9000 + u64::from(pid),
            args,
            rss_kib: 2048,
        })
        .unwrap();
    };
    mk(10, 1, 10, 'S', "vllm serve", &["python3", "-m", "vllm"]);
    mk(11, 10, 10, 'D', "a) b (c)", &["python3"]);
    mk(12, 11, 10, 'Z', "worker", &[]);
    mk(20, 1, 20, 'R', "kworker/0:1", &[]);
    let root = ProcRoot::new(dir.path());
    (dir, root)
}

#[test]
fn a_stat_line_with_a_hostile_comm_is_read_after_the_last_paren() {
    let (_d, proc) = fake_tree();
    let e = proc.entry(11).unwrap();
    assert_eq!(
        e,
        ProcStat {
            pid: 11,
            comm: "a) b (c)".into(),
            state: 'D',
            ppid: 10,
            pgrp: 10,
            cpu_ticks: 300,
            start_ticks: 9011,
        }
    );
    assert!(proc.alive(11, 9011).is_some());
    assert!(
        proc.alive(11, 1).is_none(),
        "another start is another process"
    );
    assert!(proc.alive(12, 9012).is_none(), "a zombie holds nothing");
    assert!(!proc.is_alive(12) && proc.is_alive(20) && !proc.is_alive(99));
}

#[test]
fn groups_and_trees_leave_out_what_has_exited() {
    let (_d, proc) = fake_tree();
    let pids = |v: Vec<ProcStat>| v.into_iter().map(|e| e.pid).collect::<Vec<_>>();
    let mut members = pids(proc.group_members(10));
    members.sort();
    assert_eq!(members, [10, 11]);
    assert_eq!(pids(proc.with_descendants(10))[0], 10);
    assert_eq!(proc.with_descendants(10).len(), 2);
    let mut d: Vec<u32> = descendants(&proc.all(), &[11, 20]).into_iter().collect();
    d.sort();
    assert_eq!(d, [11, 12, 20]);
}

#[test]
fn a_command_line_is_joined_and_a_kernel_thread_named_by_its_comm() {
    let (dir, proc) = fake_tree();
    assert_eq!(proc.cmdline(10).as_deref(), Some("python3 -m vllm"));
    assert_eq!(proc.cmdline(20).as_deref(), Some("[kworker/0:1]"));
    assert_eq!(proc.rss_bytes(10), Some(2048 * 1024));
    let long = "x".repeat(400);
    Proc::new(dir.path()).process(30, 1, 1, &["python3", long.as_str()]);
    let shown = proc.cmdline(30).unwrap();
    assert_eq!(shown.chars().count(), CMDLINE_MAX + 1);
    assert!(shown.ends_with('…'));
}

#[test]
fn only_held_locks_are_read_and_an_odd_line_hides_no_other() {
    let text = "1: FLOCK  ADVISORY  WRITE 1234 08:1a:5678 0 EOF\n\
                1: -> FLOCK  ADVISORY  WRITE 1235 08:1a:5678 0 EOF\n\
                2: OFDLCK ADVISORY  READ  -1 00:2f:99 0 EOF\n\
                garbage\n\
                3: POSIX  ADVISORY  WRITE 0 fd:00:396528 0 100\n";
    let locks = parse_locks(text);
    assert_eq!(
        locks,
        [
            FileLock {
                kind: "FLOCK".into(),
                pid: Some(1234),
                major: 8,
                minor: 0x1a,
                inode: 5678
            },
            FileLock {
                kind: "OFDLCK".into(),
                pid: None,
                major: 0,
                minor: 0x2f,
                inode: 99
            },
            FileLock {
                kind: "POSIX".into(),
                pid: Some(0),
                major: 0xfd,
                minor: 0,
                inode: 396_528
            },
        ]
    );
}

#[test]
fn listening_sockets_are_found_by_port_and_state() {
    let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5551 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 5552 1 0000000000000000 20 4 30 10 -1\n\
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5553 1 0000000000000000 100 0 0 10 0\n";
    let procfs::net::TcpNetEntries(t) =
        procfs::net::TcpNetEntries::from_read(table.as_bytes(), procfs::current_system_info())
            .unwrap();
    assert_eq!(listening_in(&t, 8080), [5551]);
    assert_eq!(listening_in(&t, 8081), [5553]);
    assert!(listening_in(&t, 9).is_empty());
}
