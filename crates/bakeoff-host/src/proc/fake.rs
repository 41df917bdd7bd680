//! A fake `/proc` tree in a directory, for tests of code that reads processes through a
//! [`ProcRoot`](super::ProcRoot): states no test can make for real (a process stuck in `D`, a
//! container's cgroup, a pid reused by another start). The files are written in the kernel's
//! own formats (proc(5)), complete, so the same parser reads them as it reads the real ones.

use std::io;
use std::path::{Path, PathBuf};

/// A directory laid out as `/proc`.
#[derive(Debug, Clone)]
pub struct Proc {
    root: PathBuf,
}

/// One process of the tree.
#[derive(Debug, Clone)]
pub struct FakeProcess<'a> {
    pub pid: u32,
    pub comm: &'a str,
    pub state: char,
    pub ppid: u32,
    pub pgrp: u32,
    pub utime: u64,
    pub stime: u64,
    pub start_ticks: u64,
    pub args: &'a [&'a str],
    pub rss_kib: u64,
}

impl Proc {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A sleeping process in a group of its own, with these arguments.
    pub fn process(&self, pid: u32, ppid: u32, start_ticks: u64, args: &[&str]) {
        let comm = args.first().copied().unwrap_or("");
        let _ = self.write(&FakeProcess {
            pid,
            comm,
            state: 'S',
            ppid,
            pgrp: pid,
            utime: 0,
            stime: 0,
            start_ticks,
            args,
            rss_kib: 1024,
        });
    }

    /// `p`'s `stat`, `status`, `cmdline` and a cgroup outside any container.
    pub fn write(&self, p: &FakeProcess) -> io::Result<()> {
        let d = self.root.join(p.pid.to_string());
        std::fs::create_dir_all(&d)?;
        std::fs::write(d.join("stat"), stat_line(p))?;
        std::fs::write(d.join("status"), status_text(p))?;
        let mut cmdline = p.args.join("\0");
        if !cmdline.is_empty() {
            cmdline.push('\0');
        }
        std::fs::write(d.join("cmdline"), cmdline)?;
        std::fs::write(d.join("cgroup"), "0::/user.slice\n")
    }

    /// Replaces `pid`'s cgroup file.
    pub fn cgroup(&self, pid: u32, text: &str) {
        let _ = std::fs::write(self.root.join(pid.to_string()).join("cgroup"), text);
    }
}

/// All 52 fields of a `stat` line (Linux 3.5 and later), in order.
fn stat_line(p: &FakeProcess) -> String {
    let mut f: Vec<String> = vec![
        p.pid.to_string(),
        format!("({})", p.comm),
        p.state.to_string(),
        p.ppid.to_string(),
        p.pgrp.to_string(),
        p.pgrp.to_string(), // session
        "0".into(),         // tty_nr
        "-1".into(),        // tpgid
        "4194560".into(),   // flags
        "100".into(),       // minflt
        "0".into(),         // cminflt
        "0".into(),         // majflt
        "0".into(),         // cmajflt
        p.utime.to_string(),
        p.stime.to_string(),
        "0".into(),  // cutime
        "0".into(),  // cstime
        "20".into(), // priority
        "0".into(),  // nice
        "1".into(),  // num_threads
        "0".into(),  // itrealvalue
        p.start_ticks.to_string(),
        (p.rss_kib * 1024 * 4).to_string(), // vsize, bytes
        (p.rss_kib / 4).to_string(),        // rss, pages
        u64::MAX.to_string(),               // rsslim
    ];
    // startcode … cnswap (12), exit_signal, processor, rt_priority, policy, delayacct, guest,
    // cguest, start_data … env_end (7), exit_code.
    f.extend(std::iter::repeat_n("0".to_owned(), 12));
    f.push("17".into());
    f.extend(std::iter::repeat_n("0".to_owned(), 14));
    f.join(" ") + "\n"
}

/// A `status` file with the fields the kernel always prints.
fn status_text(p: &FakeProcess) -> String {
    format!(
        "Name:\t{comm}\nUmask:\t0022\nState:\t{state} (sleeping)\nTgid:\t{pid}\nNgid:\t0\nPid:\t{pid}\n\
         PPid:\t{ppid}\nTracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t64\nGroups:\t0\n\
         VmPeak:\t{peak} kB\nVmSize:\t{peak} kB\nVmHWM:\t{rss} kB\nVmRSS:\t{rss} kB\nThreads:\t1\n\
         SigQ:\t0/31447\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n\
         SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n\
         CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\nCapEff:\t000001ffffffffff\n",
        comm = p.comm,
        state = p.state,
        pid = p.pid,
        ppid = p.ppid,
        peak = p.rss_kib * 4,
        rss = p.rss_kib,
    )
}
