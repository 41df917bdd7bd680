//! The sampler around real busy loops.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bakeoff_artifact::FlagCode;
use bakeoff_conditions::{Exclude, Sampler};
use bakeoff_host::proc::ProcRoot;

use crate::{Hog, ticks};

/// How many other processes `top_others` lists at most.
const TOP: usize = 8;

/// A proc root that shows the host's own files and only the given processes, each a link to
/// its real `/proc/<pid>`: what else the machine runs cannot crowd them out of the top.
struct ProcView(tempfile::TempDir);

impl ProcView {
    fn of(pids: &[u32]) -> Self {
        let root = tempfile::tempdir().unwrap();
        let proc = Path::new("/proc");
        for file in ["stat", "loadavg", "meminfo"] {
            std::os::unix::fs::symlink(proc.join(file), root.path().join(file)).unwrap();
        }
        for pid in pids {
            let pid = pid.to_string();
            std::os::unix::fs::symlink(proc.join(&pid), root.path().join(&pid)).unwrap();
        }
        Self(root)
    }

    fn path(&self) -> PathBuf {
        self.0.path().to_path_buf()
    }
}

/// Sampling with no bakeoff to leave out: the loops are this test's children, so a pid that
/// does not exist stands in for bakeoff.
fn exclude_nothing(proc_root: PathBuf) -> Exclude {
    let mut ex = Exclude::for_endpoint("127.0.0.1", None);
    ex.interval = Duration::from_millis(200);
    ex.proc_root = ProcRoot::new(&proc_root);
    ex.bakeoff_pid = u32::MAX;
    ex
}

/// Real busy loops, sampled with nothing of theirs left out: their CPU counts as others', and
/// they are named in the host-contended evidence. Enough loops to pass the contention limit on
/// this host (a quarter of its cores, at least half a core). The test waits until each loop
/// has had CPU since the first sample, then ends the sampling: the first and last samples
/// bound what is counted, so no interval has to pass.
#[test]
fn real_busy_loops_are_others_and_named() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let hogs: Vec<Hog> = (0..cores / 4 + 2).map(|_| Hog::start()).collect();
    let pids: Vec<u32> = hogs.iter().map(Hog::pid).collect();
    let view = ProcView::of(&pids);
    let s = Sampler::start(exclude_nothing(view.path()));
    // A tenth of a second of CPU each: enough ticks (at 100 a second) that the share of
    // the host they add up to is read well above the contention limit.
    for h in &hogs {
        h.until_ran(ticks(h.pid()), 10);
    }
    let c = s.finish();
    drop(hogs);
    assert!(c.samples >= 2, "{c:?}");
    // Every process listed is a loop, and every loop is listed (as far as the list goes),
    // with the CPU it used.
    let listed: Vec<u32> = c.top_others.iter().map(|o| o.pid).collect();
    assert!(listed.iter().all(|p| pids.contains(p)), "{listed:?}");
    assert_eq!(listed.len(), pids.len().min(TOP), "{listed:?}");
    assert!(c.top_others.iter().all(|o| o.cpu_seconds > 0.0), "{c:?}");
    assert!(c.other_cpu_cores.unwrap() > 0.0, "{c:?}");
    let f = c
        .findings
        .iter()
        .find(|f| f.code == FlagCode::HostContended)
        .unwrap_or_else(|| panic!("no host-contended finding: {c:?}"));
    for p in listed.iter().take(5) {
        assert!(f.message.contains(&p.to_string()), "{}", f.message);
    }
    // Nothing to read a GPU with here: said, not guessed.
    assert!(c.gpu.unavailable.is_some());
}

/// A busy loop seen as another process at the first sample, then named as the engine (as a
/// seat load names the engine it spawned), is left out from its start: not another process,
/// not contention.
#[test]
fn an_engine_named_late_is_left_out() {
    let hog = Hog::start();
    hog.until_ran(ticks(hog.pid()), 2);
    let view = ProcView::of(&[hog.pid()]);
    let mut ex = Exclude::for_seat_load();
    ex.interval = Duration::from_millis(200);
    ex.bakeoff_pid = u32::MAX;
    ex.proc_root = ProcRoot::new(view.path());
    let s = Sampler::start(ex);
    let named = ticks(hog.pid());
    s.exclude_engine(
        hog.pid(),
        format!("pid {} was spawned as the engine", hog.pid()),
    );
    // It keeps running after it was named: CPU that would count as others' if it were not
    // left out.
    hog.until_ran(named, 2);
    let c = s.finish();
    assert_eq!(c.excluded.engine_pid, Some(hog.pid()));
    assert!(c.excluded.engine.contains("spawned as the engine"), "{c:?}");
    assert!(c.top_others.is_empty(), "{:?}", c.top_others);
}
