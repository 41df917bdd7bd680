//! The host-wide files: CPU ticks, load, memory, uptime.

use bakeoff_host::ProcRoot;
use bakeoff_host::proc::ticks_per_second;

#[test]
fn the_host_counters_are_read_and_move_forward() {
    let proc = ProcRoot::system();
    let before = proc.host_busy_ticks().unwrap();
    // Burn some CPU in this process: the host's busy ticks can only grow.
    let me = std::process::id();
    let mine = proc.entry(me).unwrap().cpu_ticks;
    let mut x = 0u64;
    let t0 = std::time::Instant::now();
    while proc.entry(me).unwrap().cpu_ticks < mine + 2 {
        assert!(t0.elapsed().as_secs() < 60, "no CPU time in 60 s");
        for i in 0..100_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
    let after = proc.host_busy_ticks().unwrap();
    assert!(after > before, "{before} → {after}");
    assert!(ticks_per_second() >= 100);

    let load = proc.loadavg().unwrap();
    assert!(load.iter().all(|l| l.is_finite() && *l >= 0.0), "{load:?}");
    // Two decimals, as the kernel prints them.
    assert!(
        load.iter()
            .all(|l| (l * 100.0 - (l * 100.0).round()).abs() < 1e-6),
        "{load:?}"
    );

    let m = proc.memory().unwrap();
    assert!(m.free_bytes > 0 && m.cached_bytes > 0, "{m:?}");
    assert!(m.available_bytes.is_some(), "{m:?}");
    assert!(proc.uptime_s().unwrap() > 0.0);
}

#[test]
fn a_root_that_is_not_proc_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let proc = ProcRoot::new(dir.path());
    assert_eq!(proc.host_busy_ticks(), None);
    assert_eq!(proc.loadavg(), None);
    assert_eq!(proc.memory(), None);
    assert!(proc.all().is_empty() && proc.locks().is_empty());
    assert!(proc.listening_inodes(80).is_empty());
    let gone = ProcRoot::new(dir.path().join("missing"));
    assert!(gone.all().is_empty() && gone.entry(1).is_none());
}
