//! Benchmark: what one sample of the conditions sampler's `/proc` reads costs through procfs
//! (`bakeoff_host::proc`, what the sampler runs) against the hand parser it replaced. The
//! sampler takes one such sample a second for the whole of every bench step and eval suite,
//! so this is the one `/proc` reading on a measurement's hot path.
//!
//! One sample: `/proc/stat`'s cpu line, `/proc/loadavg`, `/proc/meminfo`, and every process's
//! `/proc/<pid>/stat` (pid, comm, state, ppid, CPU ticks, start time). Both sides read the same
//! files in alternating rounds; a second pair of figures parses text read once beforehand, to
//! show the parsers apart from the system calls. Prints one JSON object.
//!
//! Run: `cargo run --release -p bakeoff-host --example proc-sample [ROUNDS]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use bakeoff_host::ProcRoot;
use procfs::prelude::*;

/// The hand parser the conditions sampler used before procfs: a copy kept here only as the
/// reference this benchmark measures against.
mod hand {
    use std::path::Path;

    pub struct Stat {
        pub pid: u32,
        pub comm: String,
        pub ppid: u32,
        pub ticks: u64,
        pub start: u64,
    }

    pub fn parse_stat(pid: u32, text: &str) -> Option<Stat> {
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text.get(open + 1..close)?.to_owned();
        let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
        Some(Stat {
            pid,
            comm,
            ppid: u32::try_from(n(1)?).ok()?,
            ticks: n(11)?.checked_add(n(12)?)?,
            start: n(19)?,
        })
    }

    pub fn read_all(root: &Path) -> Vec<Stat> {
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

    pub fn host_busy(text: &str) -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with("cpu "))?;
        let f: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|s| s.parse().unwrap_or(0))
            .collect();
        let get = |i: usize| f.get(i).copied().unwrap_or(0);
        Some(get(0) + get(1) + get(2) + get(5) + get(6))
    }

    pub fn loadavg(text: &str) -> Option<[f64; 3]> {
        let mut f = text.split_whitespace().map(|s| s.parse::<f64>().ok());
        Some([f.next()??, f.next()??, f.next()??])
    }

    pub fn meminfo(text: &str) -> Option<[u64; 3]> {
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
        Some([field("MemFree")?, field("MemAvailable")?, field("Cached")?])
    }

    /// One sample, as the sampler took it.
    pub fn sample(root: &Path) -> usize {
        let read = |f: &str| std::fs::read_to_string(root.join(f)).ok();
        let busy = read("stat").as_deref().and_then(host_busy);
        let load = read("loadavg").as_deref().and_then(loadavg);
        let mem = read("meminfo").as_deref().and_then(meminfo);
        let all = read_all(root);
        std::hint::black_box((busy, load, mem));
        // Every field used, as the sampler uses them, so none is optimised away.
        all.iter()
            .map(|s| std::hint::black_box((s.pid, s.comm.len(), s.ppid, s.ticks, s.start)))
            .fold(0, |n, _| n + 1)
    }
}

/// One sample through `bakeoff_host::proc`, as the sampler takes it now.
fn procfs_sample(proc: &ProcRoot) -> usize {
    let busy = proc.host_busy_ticks();
    let load = proc.loadavg();
    let mem = proc.memory();
    black_box((busy, load, mem));
    proc.all().len()
}

/// Microseconds of each round.
fn time(rounds: usize, mut f: impl FnMut() -> usize) -> Vec<f64> {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect()
}

fn summary(mut us: Vec<f64>) -> serde_json::Value {
    us.sort_by(f64::total_cmp);
    let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
    serde_json::json!({
        "median_us": at(0.5),
        "p90_us": at(0.9),
        "min_us": at(0.0),
        "mean_us": us.iter().sum::<f64>() / us.len() as f64,
    })
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("ROUNDS is a count"))
        .unwrap_or(300);
    let root = Path::new("/proc");
    let proc = ProcRoot::system();
    let processes = proc.all().len();

    // Warm both (page cache of the binary, the dentry cache of /proc).
    for _ in 0..20 {
        black_box(hand::sample(root));
        black_box(procfs_sample(&proc));
    }
    // Alternate the two in blocks, so a burst of other load hits both alike.
    let (mut by_hand, mut by_procfs) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        by_hand.extend(time(rounds / 10, || hand::sample(root)));
        by_procfs.extend(time(rounds / 10, || procfs_sample(&proc)));
    }

    // The parsers alone, over every process's stat text read once.
    let texts: Vec<(u32, String)> = std::fs::read_dir(root)
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((pid, std::fs::read_to_string(e.path().join("stat")).ok()?))
        })
        .collect();
    let parse_hand = time(rounds, || {
        texts
            .iter()
            .filter_map(|(pid, t)| hand::parse_stat(*pid, t))
            .count()
    });
    let parse_procfs = time(rounds, || {
        texts
            .iter()
            .filter_map(|(_, t)| procfs::process::Stat::from_read(t.as_bytes()).ok())
            .count()
    });

    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let out = serde_json::json!({
        "bench": "conditions sampler: one /proc sample (stat, loadavg, meminfo, every process's stat)",
        "machine": {
            "available_parallelism": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "processes": processes,
        },
        "rounds": by_hand.len(),
        "sample": {
            "procfs": summary(by_procfs.clone()),
            "hand": summary(by_hand.clone()),
            "procfs_over_hand_median": median(&by_procfs) / median(&by_hand),
            "procfs_extra_us_per_process_median":
                (median(&by_procfs) - median(&by_hand)) / processes.max(1) as f64,
        },
        "parse_only_every_stat_line": {
            "lines": texts.len(),
            "procfs": summary(parse_procfs.clone()),
            "hand": summary(parse_hand.clone()),
            "procfs_over_hand_median": median(&parse_procfs) / median(&parse_hand),
        },
        "sampler_interval_s": 1.0,
        "procfs_share_of_one_core_at_1_hz": median(&by_procfs) / 1e6,
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
}
