//! Host PIDs from the driver, mapped to seats through `/proc`.
//!
//! NVML and nvidia-smi report host-namespace PIDs (nvml-wrapper 0.12.1
//! `running_compute_processes`: the driver does not know PID namespaces). A containerised engine
//! is found through the container id in the host's `/proc/<pid>/cgroup` (cgroup v2:
//! `0::/system.slice/docker-<64 hex>.scope`; v1: `…:/docker/<64 hex>`); a process seat through
//! the `--port N` on its command line or an ancestor's (vLLM's GPU memory is held by its
//! `VLLM::EngineCore` child, whose command line has no port). Read through a
//! [`ProcRoot`], so tests can point it at a fake `/proc`.

use crate::proc::ProcRoot;
pub use crate::proc::container_id;

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

impl ProcRoot {
    /// Everything the plan can learn about `pid`.
    pub fn facts(&self, pid: u32) -> ProcFacts {
        let mut ports = Vec::new();
        let mut cur = Some(pid);
        for _ in 0..MAX_ANCESTORS {
            let Some(p) = cur.filter(|p| *p > 1) else {
                break;
            };
            if let Some(args) = self.cmdline_args(p) {
                ports.extend(ports_in_args(&args));
            }
            cur = self.entry(p).map(|e| e.ppid);
        }
        ports.dedup();
        ProcFacts {
            container_id: self.container_of(pid),
            ports,
            uptime_s: self.age_s(pid),
            cmdline: self
                .cmdline_args(pid)
                .filter(|a| !a.is_empty())
                .map(|a| a.join(" ")),
        }
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::proc::fake;

    #[test]
    fn pids_map_to_containers_and_ports_through_proc() {
        let id = "4f1c0e0b9a7d3e2c1b0a99887766554433221100ffeeddccbbaa998877665544";
        let v2 = format!("/system.slice/docker-{id}.scope");
        let v1 = format!("/docker/{id}");
        assert_eq!(container_id(&v2).as_deref(), Some(id));
        assert_eq!(container_id(&v1).as_deref(), Some(id));
        assert_eq!(
            container_id("/user.slice/user-0.slice/session-3.scope"),
            None
        );

        // A fake /proc: 200 is `vllm serve --port 8016`, 201 its EngineCore child (holds the
        // GPU) in a container.
        let root = tempfile::tempdir().unwrap();
        let p = fake::Proc::new(root.path());
        p.process(200, 1, 1000, &["vllm", "serve", "/m", "--port", "8016"]);
        p.process(201, 200, 1500, &["VLLM::EngineCore"]);
        p.cgroup(201, &format!("0::{v2}\n"));
        std::fs::write(root.path().join("uptime"), "260000.00 1000.00\n").unwrap();
        let f = ProcRoot::new(root.path()).facts(201);
        assert_eq!(f.ports, vec![8016]);
        assert_eq!(f.container_id.as_deref(), Some(id));
        assert_eq!(f.cmdline.as_deref(), Some("VLLM::EngineCore"));
        // 260000 s up, started at 1500 ticks / 100 Hz = 15 s after boot.
        assert_eq!(f.uptime_s, Some(259_985));
    }
}
