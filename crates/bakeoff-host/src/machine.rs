//! What this machine says about its GPUs, read once: NVML and nvidia-smi, the `/proc` facts of
//! every PID the source measured from lists, and container names when one of them runs in a
//! container. `bakeoff plan` and a campaign's memory check read the machine this one way.
//!
//! [`MachineReadings::read`] blocks (nvidia-smi for up to 15 s, `docker ps` for up to 10 s, NVML's
//! initialisation, `/proc`); async code calls [`MachineReadings::read_off_runtime`], which
//! runs it on tokio's blocking pool so no runtime thread waits on a wedged driver.

use std::collections::BTreeMap;

use crate::proc::ProcRoot;
use crate::procinfo::ProcFacts;
use crate::readings::Readings;

/// What this machine says, read once (the module's doc says what and why).
#[derive(Debug, Clone)]
pub struct MachineReadings {
    pub nvml: Readings,
    pub nvidia_smi: Readings,
    /// `nvml` when NVML read a GPU, else `nvidia-smi` when it did; `None` when neither did.
    pub measured_from: Option<String>,
    /// `/proc` facts by PID, for the PIDs of the source measured from.
    pub facts: BTreeMap<u32, ProcFacts>,
    /// `docker ps` id → name (asked only when some PID runs in a container).
    pub container_names: BTreeMap<String, String>,
}

impl MachineReadings {
    /// Reads NVML, then nvidia-smi (`nvidia_smi`: the binary; tests point it elsewhere), then
    /// `/proc` and Docker. No GPU is not an error: the readings say why they are unavailable.
    pub fn read(nvidia_smi: &str) -> Self {
        let nvml = crate::nvml::read();
        let smi = crate::nvidia_smi::read(nvidia_smi);
        let measured_from = if !nvml.gpus.is_empty() {
            Some("nvml".to_owned())
        } else if !smi.gpus.is_empty() {
            Some("nvidia-smi".to_owned())
        } else {
            None
        };
        let mut m = Self {
            nvml,
            nvidia_smi: smi,
            measured_from,
            facts: BTreeMap::new(),
            container_names: BTreeMap::new(),
        };
        let proc = ProcRoot::system();
        m.facts = m
            .primary()
            .gpus
            .iter()
            .flat_map(|g| g.processes.iter().map(|p| p.pid))
            .map(|pid| (pid, proc.facts(pid)))
            .collect();
        if m.facts.values().any(|f| f.container_id.is_some()) {
            m.container_names = docker_names();
        }
        m
    }

    /// [`MachineReadings::read`] on tokio's blocking pool ([`crate::blocking::off_runtime`]),
    /// for async callers.
    pub async fn read_off_runtime(nvidia_smi: &str) -> Self {
        let bin = nvidia_smi.to_owned();
        crate::blocking::off_runtime(move || Self::read(&bin)).await
    }

    /// The readings the plan measures from: NVML's when it read a GPU, else nvidia-smi's when
    /// it did, else NVML's (empty, with why).
    pub fn primary(&self) -> &Readings {
        match self.measured_from.as_deref() {
            Some("nvidia-smi") => &self.nvidia_smi,
            _ => &self.nvml,
        }
    }

    /// The `/proc` facts of `pid` (empty when it was not read).
    pub fn facts_of(&self, pid: u32) -> ProcFacts {
        self.facts.get(&pid).cloned().unwrap_or_default()
    }
}

/// How long `docker ps` may take: the daemon answers a local socket in well under a second; a
/// wedged daemon must not hold a GPU reading for nvidia-smi's own, longer limit.
const DOCKER_PS_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// `docker ps` id → name, only asked when some GPU process lives in a container. Empty when
/// Docker is missing, refuses or does not answer in time: the processes are then named by PID.
fn docker_names() -> BTreeMap<String, String> {
    let mut cmd = std::process::Command::new("docker");
    cmd.args(["ps", "--no-trunc", "--format", "{{.ID}}\t{{.Names}}"]);
    match crate::bounded::run_bounded(&mut cmd, DOCKER_PS_LIMIT) {
        Ok(out) if out.status.success() => out
            .stdout
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(id, n)| (id.trim().to_owned(), n.trim().to_owned()))
            .collect(),
        _ => BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Off the runtime, a reading still says why it is missing, in the words of an inline one.
    #[tokio::test]
    async fn a_missing_nvidia_smi_read_off_the_runtime_says_why() {
        let m = MachineReadings::read_off_runtime("/nonexistent/nvidia-smi").await;
        assert!(m.nvidia_smi.gpus.is_empty());
        let why = m.nvidia_smi.unavailable.unwrap_or_default();
        assert!(
            why.starts_with("cannot run /nonexistent/nvidia-smi ("),
            "{why}"
        );
    }
}
