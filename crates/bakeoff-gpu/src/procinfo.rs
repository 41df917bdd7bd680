//! Host PIDs from the driver, mapped to seats through `/proc`.
//!
//! NVML and nvidia-smi report host-namespace PIDs (nvml-wrapper 0.12.1
//! `running_compute_processes`: the driver does not know PID namespaces). A containerised engine
//! is found through the container id in the host's `/proc/<pid>/cgroup` (cgroup v2:
//! `0::/system.slice/docker-<64 hex>.scope`; v1: `…:/docker/<64 hex>`); a process seat through
//! the `--port N` on its command line or an ancestor's (vLLM's GPU memory is held by its
//! `VLLM::EngineCore` child, whose command line has no port). The root is a parameter so tests
//! can point it at a fake `/proc`.

use std::path::{Path, PathBuf};

/// Linux reports `/proc/<pid>/stat` start times in clock ticks of `USER_HZ`, which is 100 on
/// every mainstream architecture (proc(5), `sysconf(_SC_CLK_TCK)`).
const USER_HZ: u64 = 100;

/// Ancestors walked when looking for the seat's command line.
const MAX_ANCESTORS: usize = 8;

/// What `/proc` says about one PID.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProcFacts {
    /// Docker container id (64 hex) from the cgroup file, when in a container.
    pub container_id: Option<String>,
    /// `--port` values found on the command line of the process or its ancestors.
    pub ports: Vec<u16>,
    /// Seconds since the process started.
    pub uptime_s: Option<u64>,
    /// The process's own command line, space-joined, for display.
    pub cmdline: Option<String>,
}

/// A `/proc` to read from.
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
}

impl Default for ProcFs {
    fn default() -> Self {
        Self::new("/proc")
    }
}

impl ProcFs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    fn read(&self, pid: u32, file: &str) -> Option<String> {
        std::fs::read(self.root.join(pid.to_string()).join(file))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    fn cmdline_args(&self, pid: u32) -> Option<Vec<String>> {
        let raw = self.read(pid, "cmdline")?;
        let args: Vec<String> = raw
            .split('\0')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        (!args.is_empty()).then_some(args)
    }

    /// `(ppid, starttime ticks)` from `/proc/<pid>/stat`; the command name in parentheses
    /// may hold spaces and parentheses, so fields are counted after the last `)`.
    fn stat(&self, pid: u32) -> Option<(u32, u64)> {
        let s = self.read(pid, "stat")?;
        let rest = &s[s.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the comm: state(3) ppid(4) … starttime(22) → indices 0, 1, 19.
        Some((f.get(1)?.parse().ok()?, f.get(19)?.parse().ok()?))
    }

    fn boot_uptime_s(&self) -> Option<f64> {
        std::fs::read_to_string(self.root.join("uptime"))
            .ok()?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    }

    /// Everything we can learn about `pid`.
    pub fn facts(&self, pid: u32) -> ProcFacts {
        let container_id = self.read(pid, "cgroup").and_then(|c| container_id(&c));
        let mut ports = Vec::new();
        let mut cur = Some(pid);
        for _ in 0..MAX_ANCESTORS {
            let Some(p) = cur.filter(|p| *p > 1) else {
                break;
            };
            if let Some(args) = self.cmdline_args(p) {
                ports.extend(ports_in_args(&args));
            }
            cur = self.stat(p).map(|(ppid, _)| ppid);
        }
        ports.dedup();
        let uptime_s = match (self.stat(pid), self.boot_uptime_s()) {
            (Some((_, start)), Some(up)) => {
                let started = start as f64 / USER_HZ as f64;
                (up >= started).then_some((up - started) as u64)
            }
            _ => None,
        };
        ProcFacts {
            container_id,
            ports,
            uptime_s,
            cmdline: self.cmdline_args(pid).map(|a| a.join(" ")),
        }
    }
}

/// The Docker container id in a `/proc/<pid>/cgroup` file, v1 or v2.
pub fn container_id(cgroup: &str) -> Option<String> {
    for line in cgroup.lines() {
        let path = line.rsplit(':').next().unwrap_or("");
        for seg in path.split('/').rev() {
            let seg = seg.strip_suffix(".scope").unwrap_or(seg);
            let id = seg.strip_prefix("docker-").unwrap_or(seg);
            if id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Some(id.to_owned());
            }
        }
    }
    None
}

/// `--port N` / `--port=N` in an argument list.
pub fn ports_in_args(args: &[String]) -> Vec<u16> {
    let mut out = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix("--port=") {
            out.extend(v.parse::<u16>().ok());
        } else if a == "--port"
            && let Some(v) = it.peek()
        {
            out.extend(v.parse::<u16>().ok());
        }
    }
    out
}

/// Whether `root` looks like a procfs (so a missing one is reported, not silently empty).
pub fn is_procfs(root: &Path) -> bool {
    root.join("uptime").is_file()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn pids_map_to_containers_and_ports_through_proc() {
        let v2 = "0::/system.slice/docker-4f1c0e0b9a7d3e2c1b0a99887766554433221100ffeeddccbbaa998877665544.scope\n";
        let v1 =
            "12:memory:/docker/4f1c0e0b9a7d3e2c1b0a99887766554433221100ffeeddccbbaa998877665544\n";
        assert_eq!(
            container_id(v2).as_deref(),
            Some("4f1c0e0b9a7d3e2c1b0a99887766554433221100ffeeddccbbaa998877665544")
        );
        assert_eq!(container_id(v1), container_id(v2));
        assert_eq!(
            container_id("0::/user.slice/user-0.slice/session-3.scope\n"),
            None
        );

        // A fake /proc: 200 is `vllm serve --port 8016`, 201 its EngineCore child (holds the GPU).
        let root = tempfile::tempdir().unwrap();
        let mk = |pid: u32, cmd: &[&str], ppid: u32, start: u64| {
            let d = root.path().join(pid.to_string());
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("cmdline"), cmd.join("\0") + "\0").unwrap();
            std::fs::write(d.join("stat"), format!("{pid} (VLLM::Engine Core) S {ppid} {pid} {pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 {start} 0 0\n")).unwrap();
            std::fs::write(d.join("cgroup"), "0::/user.slice\n").unwrap();
        };
        mk(200, &["vllm", "serve", "/m", "--port", "8016"], 1, 1000);
        mk(201, &["VLLM::EngineCore"], 200, 1500);
        std::fs::write(root.path().join("uptime"), "260000.00 1000.00\n").unwrap();
        let f = ProcFs::new(root.path()).facts(201);
        assert_eq!(f.ports, vec![8016]);
        // 260000 s up, started at 1500 ticks / 100 Hz = 15 s after boot.
        assert_eq!(f.uptime_s, Some(259_985));
    }
}
