//! The few facts a stop needs from `/proc`: a process's state, parent, process group and start
//! time; a process group's members; a process's descendants; its command line and resident
//! memory; which sockets listen on a port and which processes hold them. The root is a
//! parameter (as `bakeoff_gpu::procinfo`'s), so the zombie-loader logic is tested against a
//! fake `/proc` — a real process stuck in `D` cannot be made in a test without root tricks.

use std::path::{Path, PathBuf};

/// One line of `/proc/PID/stat`, the fields a stop needs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcEntry {
    pub pid: u32,
    /// `R`, `S`, `D` (uninterruptible sleep), `Z` (exited, not reaped), `T`, …
    pub state: char,
    pub ppid: u32,
    pub pgrp: u32,
    /// Field 22 (clock ticks since boot): with the pid, the process's identity.
    pub start_ticks: u64,
}

impl ProcEntry {
    /// Exited (a zombie waiting for its parent, or dead): holds nothing any more.
    pub fn is_gone(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// What a process's state letter means, for messages.
pub fn state_words(state: char) -> &'static str {
    match state {
        'D' => "uninterruptible sleep (D)",
        'R' => "running (R)",
        'S' => "sleeping (S)",
        'T' | 't' => "stopped (T)",
        'Z' => "zombie, not reaped (Z)",
        _ => "alive",
    }
}

/// A `/proc` to read from.
#[derive(Debug, Clone)]
pub struct ProcRoot {
    root: PathBuf,
}

/// The longest command line kept: enough to recognise an engine, short enough for one line.
const CMDLINE_MAX: usize = 300;

impl ProcRoot {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// This machine's `/proc`.
    pub fn system() -> Self {
        Self::new("/proc")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn read(&self, pid: u32, file: &str) -> Option<String> {
        std::fs::read(self.root.join(pid.to_string()).join(file))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// `/proc/PID/stat`. The command name may hold spaces and parentheses, so fields are
    /// counted after the last `)`.
    pub fn entry(&self, pid: u32) -> Option<ProcEntry> {
        parse_stat(pid, &self.read(pid, "stat")?)
    }

    /// The same process (pid and start time), still holding what it holds (not exited).
    pub fn alive(&self, pid: u32, start_ticks: u64) -> Option<ProcEntry> {
        self.entry(pid)
            .filter(|e| e.start_ticks == start_ticks && !e.is_gone())
    }

    /// Every process's stat line (those that vanish while being read are skipped).
    pub fn all(&self) -> Vec<ProcEntry> {
        let Ok(dir) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        dir.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| self.entry(pid))
            .collect()
    }

    /// The members of process group `pgid` that have not exited.
    pub fn group_members(&self, pgid: u32) -> Vec<ProcEntry> {
        self.all()
            .into_iter()
            .filter(|e| e.pgrp == pgid && !e.is_gone())
            .collect()
    }

    /// `pid` and every process below it (a parent chain read from one snapshot), not exited.
    pub fn with_descendants(&self, pid: u32) -> Vec<ProcEntry> {
        let all = self.all();
        let mut out: Vec<ProcEntry> = all.iter().filter(|e| e.pid == pid).cloned().collect();
        let mut frontier = vec![pid];
        while let Some(p) = frontier.pop() {
            for e in all.iter().filter(|e| e.ppid == p && e.pid != pid) {
                if !out.iter().any(|o| o.pid == e.pid) {
                    out.push(e.clone());
                    frontier.push(e.pid);
                }
            }
        }
        out.retain(|e| !e.is_gone());
        out
    }

    /// The command line, space-joined, cut to a length that fits a line.
    pub fn cmdline(&self, pid: u32) -> Option<String> {
        let raw = self.read(pid, "cmdline")?;
        let s = raw
            .split('\0')
            .filter(|a| !a.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if s.is_empty() {
            // A kernel thread, or a process whose memory is being torn down: its name.
            return self.read(pid, "comm").map(|c| format!("[{}]", c.trim()));
        }
        Some(match s.char_indices().nth(CMDLINE_MAX) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s,
        })
    }

    /// Resident memory (`VmRSS` of `/proc/PID/status`), in bytes.
    pub fn rss_bytes(&self, pid: u32) -> Option<u64> {
        let status = self.read(pid, "status")?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kb: u64 = line
            .trim_start_matches("VmRSS:")
            .split_whitespace()
            .next()?
            .parse()
            .ok()?;
        Some(kb.saturating_mul(1024))
    }

    /// The Docker container a process belongs to (its cgroup), when it is in one.
    pub fn container_of(&self, pid: u32) -> Option<String> {
        bakeoff_gpu::procinfo::container_id(&self.read(pid, "cgroup")?)
    }

    /// The inodes of the sockets listening on `port` (`/proc/net/tcp` and `tcp6`, state
    /// `0A` = LISTEN), in this process's network namespace.
    pub fn listening_inodes(&self, port: u16) -> Vec<u64> {
        let mut out = Vec::new();
        for file in ["tcp", "tcp6"] {
            if let Ok(text) = std::fs::read_to_string(self.root.join("net").join(file)) {
                out.extend(parse_listeners(&text, port));
            }
        }
        out
    }

    /// The processes holding any of the socket `inodes` (a `socket:[N]` link in
    /// `/proc/PID/fd`). Other users' processes cannot be read without privileges: they are
    /// missing from the answer, never guessed.
    pub fn socket_holders(&self, inodes: &[u64]) -> Vec<u32> {
        if inodes.is_empty() {
            return Vec::new();
        }
        let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
        let mut out = Vec::new();
        for e in self.all() {
            let Ok(fds) = std::fs::read_dir(self.root.join(e.pid.to_string()).join("fd")) else {
                continue;
            };
            let holds = fds.flatten().any(|fd| {
                std::fs::read_link(fd.path())
                    .is_ok_and(|t| wanted.iter().any(|w| t.as_os_str() == w.as_str()))
            });
            if holds {
                out.push(e.pid);
            }
        }
        out
    }
}

/// Parses one `/proc/PID/stat`. After the comm: state(3) ppid(4) pgrp(5) … starttime(22) are
/// indices 0, 1, 2 and 19.
pub fn parse_stat(pid: u32, text: &str) -> Option<ProcEntry> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(ProcEntry {
        pid,
        state: f.first()?.chars().next()?,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        start_ticks: f.get(19)?.parse().ok()?,
    })
}

/// The inodes of LISTEN sockets on `port` in a `/proc/net/tcp{,6}` table: `sl local_address
/// rem_address st … uid timeout inode`, the local address `HEXADDR:HEXPORT`.
pub fn parse_listeners(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let local_port = u16::from_str_radix(f.get(1)?.rsplit(':').next()?, 16).ok()?;
            let listening = *f.get(3)? == "0A";
            let inode: u64 = f.get(9)?.parse().ok()?;
            (listening && local_port == port && inode != 0).then_some(inode)
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_last_parenthesis() {
        let e = parse_stat(
            42,
            "42 (python3 (x) y) D 1 40 40 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0",
        )
        .unwrap();
        assert_eq!(
            e,
            ProcEntry {
                pid: 42,
                state: 'D',
                ppid: 1,
                pgrp: 40,
                start_ticks: 12345
            }
        );
    }

    #[test]
    fn only_listen_entries_on_the_port_count() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5551 1 0 100 0 0 10 0\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 5552 1 0 100 0 0 10 0\n\
   2: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5553 1 0 100 0 0 10 0\n";
        assert_eq!(parse_listeners(table, 8080), vec![5551]);
        assert_eq!(parse_listeners(table, 8081), vec![5553]);
        assert!(parse_listeners(table, 9).is_empty());
    }
}
