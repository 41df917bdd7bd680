//! The `/proc` readings: per-process CPU ticks and parentage, the host's busy ticks, the load
//! average and `/proc/meminfo`. Plain parsers over text, so tests feed them strings; the root
//! is a parameter so a test can point it at a fake `/proc`.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use bakeoff_artifact::MemSnapshot;

/// One process as `/proc/[pid]/stat` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcStat {
    pub pid: u32,
    pub comm: String,
    pub ppid: u32,
    /// utime + stime, clock ticks (all threads).
    pub ticks: u64,
    /// Start time after boot, clock ticks: tells a reused pid from the process seen before.
    pub start: u64,
}

/// Parses `/proc/[pid]/stat`. The command name sits in parentheses and may hold spaces and
/// parentheses itself, so fields are counted after the last `)` (proc(5)).
pub fn parse_stat(pid: u32, text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // After the comm: state(0) ppid(1) … utime(11) stime(12) … starttime(19).
    let n = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
    Some(ProcStat {
        pid,
        comm,
        ppid: u32::try_from(n(1)?).ok()?,
        ticks: n(11)?.checked_add(n(12)?)?,
        start: n(19)?,
    })
}

/// Every process under `root` (normally `/proc`); processes that vanish mid-scan are skipped.
pub fn read_all(root: &Path) -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let text = std::fs::read_to_string(e.path().join("stat")).ok()?;
        parse_stat(pid, &text)
    })
    .collect()
}

/// The roots and every process descended from them.
pub fn descendants(all: &[ProcStat], roots: &[u32]) -> HashSet<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for p in all {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut out: HashSet<u32> = HashSet::new();
    let mut todo: Vec<u32> = roots.to_vec();
    while let Some(pid) = todo.pop() {
        if out.insert(pid)
            && let Some(c) = children.get(&pid)
        {
            todo.extend(c);
        }
    }
    out
}

/// The host's busy ticks from `/proc/stat`'s `cpu` line: user + nice + system + irq + softirq
/// (idle, iowait and steal left out; guest time is already inside user). Counting the host's
/// total rather than summing processes also catches the short-lived ones (a build's compiler
/// runs) that start and exit between two samples.
pub fn parse_host_busy(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal …
    let get = |i: usize| f.get(i).copied().unwrap_or(0);
    Some(get(0) + get(1) + get(2) + get(5) + get(6))
}

/// `/proc/loadavg`: the 1-, 5- and 15-minute figures.
pub fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut f = text.split_whitespace().map(|s| s.parse::<f64>().ok());
    Some([f.next()??, f.next()??, f.next()??])
}

/// `/proc/meminfo`: MemFree, MemAvailable and Cached (kB there, bytes here).
pub fn parse_meminfo(text: &str) -> Option<MemSnapshot> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let rest = l.strip_prefix(name)?.strip_prefix(':')?;
            rest.split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()?
                .checked_mul(1024)
        })
    };
    Some(MemSnapshot {
        free_bytes: field("MemFree")?,
        available_bytes: field("MemAvailable")?,
        cached_bytes: field("Cached")?,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_hostile_comm_parses_after_the_last_paren() {
        let text =
            "4242 (a) b (c)) R 17 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 9000 0 0";
        let s = parse_stat(4242, text).unwrap();
        assert_eq!(s.comm, "a) b (c)");
        assert_eq!((s.ppid, s.ticks, s.start), (17, 300, 9000));
        assert_eq!(parse_stat(1, "garbage"), None);
    }

    #[test]
    fn descendants_walk_the_tree_from_each_root() {
        let p = |pid, ppid| ProcStat {
            pid,
            comm: String::new(),
            ppid,
            ticks: 0,
            start: 0,
        };
        let all = [p(1, 0), p(10, 1), p(11, 10), p(12, 11), p(20, 1), p(30, 20)];
        let d = descendants(&all, &[10, 30]);
        let mut v: Vec<u32> = d.into_iter().collect();
        v.sort();
        assert_eq!(v, [10, 11, 12, 30]);
    }

    #[test]
    fn host_busy_loadavg_and_meminfo() {
        let stat = "cpu  100 5 50 9000 30 7 3 11 0 0\ncpu0 50 2 25 4500 15 3 1 5 0 0\n";
        assert_eq!(parse_host_busy(stat), Some(165));
        assert_eq!(
            parse_loadavg("2.50 1.25 0.75 3/412 9999\n"),
            Some([2.5, 1.25, 0.75])
        );
        let mem = "MemTotal: 8000000 kB\nMemFree: 1000 kB\nMemAvailable: 3000 kB\nBuffers: 5 kB\nCached: 2000 kB\nSwapCached: 0 kB\n";
        assert_eq!(
            parse_meminfo(mem),
            Some(MemSnapshot {
                free_bytes: 1000 * 1024,
                available_bytes: 3000 * 1024,
                cached_bytes: 2000 * 1024
            })
        );
    }
}
