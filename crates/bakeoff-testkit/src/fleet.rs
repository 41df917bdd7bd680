//! Fleet files for tests: the one `[[seat]]` table every seat test starts from.

/// The `[[seat]]` header of a fleet file: `name`, `engine`, `role`, `port` and one served name.
/// The caller appends the seat's other keys and its `[seat.process]` or `[seat.docker]` table.
pub fn seat_header(name: &str, engine: &str, role: &str, port: u16, served: &str) -> String {
    format!(
        "\n[[seat]]\nname = \"{name}\"\nengine = \"{engine}\"\nrole = \"{role}\"\nport = {port}\nserved_model_names = [\"{served}\"]\n"
    )
}

/// Kills, on drop, every llama-server a fleet's state directory still records
/// (`<seat>.process.json`): a failing seat test leaves no engine behind. Only a process whose
/// command line is a llama-server or vLLM's OpenAI server is signalled, never a recycled pid.
pub struct SeatProcessGuard {
    pub state: std::path::PathBuf,
}

impl Drop for SeatProcessGuard {
    fn drop(&mut self) {
        for e in std::fs::read_dir(&self.state)
            .into_iter()
            .flatten()
            .flatten()
        {
            if !e.file_name().to_string_lossy().ends_with(".process.json") {
                continue;
            }
            let pid = std::fs::read_to_string(e.path())
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v["pid"].as_u64())
                .and_then(|p| u32::try_from(p).ok());
            let Some(pid) = pid.filter(|p| *p > 1) else {
                continue;
            };
            let cmdline = bakeoff_host::ProcRoot::system()
                .cmdline_args(pid)
                .unwrap_or_default()
                .join(" ");
            if cmdline.contains("llama-server") || cmdline.contains("vllm.entrypoints") {
                // The seat's process group first (engines fork), then the pid itself.
                for target in [format!("-{pid}"), pid.to_string()] {
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", "--", &target])
                        .output();
                }
            }
        }
    }
}
