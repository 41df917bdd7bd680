//! Checks that run after the gate and the port check, right before a seat is started.
//!
//! The checkpoint audit (docs/plan.md): a seat whose model is a local path is inspected before it
//! starts — its `quantization_config` against the seat's `--quantization` flag — so the crash
//! loop of docs/field-cases.md F7 (`--quantization compressed-tensors` hard-coded over
//! unquantized BF16 weights, 35 restarts) is refused with the reason before anything runs. An
//! `Err(reason)` refuses the start with a one-line reason (the command exits 1) and nothing is
//! started.

use bakeoff_artifact::SeatFinding;

pub use crate::checks::model_path::host_path;
use crate::checks::model_path::model_and_quantization;
use crate::fleet::types::{Fleet, Seat};

/// Why a start is refused before anything runs (the command exits 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreStartRefusal {
    /// The local checkpoint's quantization config against the seat's flag: `code (path):
    /// message[; fix: …]` of the first error finding.
    #[error("checkpoint audit refused the start: {0}")]
    CheckpointAudit(String),
    /// The engine's own registry does not know the checkpoint: `code: message (evidence);
    /// fix: …` of its finding.
    #[error("{0}")]
    Unsupported(String),
    /// A process seat's command is not a file here, nor found on its `PATH`: the start could
    /// only fail.
    #[error(
        "the seat's command {command:?} does not exist ({looked}); fix: install the engine, or give its full path as command under [seat.process]"
    )]
    NoCommand { command: String, looked: String },
}

/// Called by `Seats::up` (and so by `restart` and `swap`) and by a campaign before the backend
/// starts `seat`. `Ok(findings)`: the start may go ahead, and these findings go into the seat
/// record; `Err(reason)`: the start is refused.
///
/// The checks block: the engine-registry probe runs the engine's own Python for seconds (it
/// imports vLLM), and the checkpoint audit reads the model's files. They run on tokio's blocking
/// pool so no runtime thread waits on them (the monitor, the watchdog and Ctrl-C stay live).
pub async fn before_start(fleet: &Fleet, seat: &Seat) -> Result<Vec<SeatFinding>, PreStartRefusal> {
    let (fleet, seat) = (fleet.clone(), seat.clone());
    bakeoff_host::blocking::off_runtime(move || before_start_blocking(&fleet, &seat)).await
}

/// [`before_start`] for callers outside a runtime (`audit seat`): it blocks.
pub fn before_start_blocking(
    fleet: &Fleet,
    seat: &Seat,
) -> Result<Vec<SeatFinding>, PreStartRefusal> {
    checkpoint_audit(fleet, seat)?;
    command_exists(seat)?;
    let findings = crate::checks::pre_start(fleet, seat);
    // The engine's own registry said it does not know the checkpoint: refused before anything
    // runs, citing what was checked.
    if let Some(f) = findings
        .iter()
        .find(|f| f.code == crate::checks::engine_support::UNSUPPORTED)
    {
        return Err(PreStartRefusal::Unsupported(format!(
            "{}: {}{}{}",
            f.code,
            f.message,
            f.evidence
                .first()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default(),
            f.fix
                .as_deref()
                .map(|x| format!("; fix: {x}"))
                .unwrap_or_default()
        )));
    }
    Ok(findings)
}

/// The checks that run once the watchdog says the seat is ready (the served chat template
/// against a pinned one); their findings join the seat record.
pub async fn after_ready(fleet: &Fleet, seat: &Seat, url: &str) -> Vec<SeatFinding> {
    crate::checks::template_pin::after_ready(fleet, seat, url).await
}

/// A process seat's command, placeholders filled in, as the process would be spawned: a path
/// names a file, a bare name is looked up on the seat's `PATH` (its env's, else this one's).
fn command_exists(seat: &Seat) -> Result<(), PreStartRefusal> {
    let crate::fleet::launch::Launch::Process(p) = &seat.launch else {
        return Ok(());
    };
    let command = crate::fleet::substitute(&p.command, seat);
    let path = p
        .env
        .get("PATH")
        .map(|v| crate::fleet::substitute(v, seat))
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    let (found, looked) = if command.contains('/') {
        (
            std::path::Path::new(&command).is_file(),
            "no such file".to_string(),
        )
    } else {
        (
            std::env::split_paths(&path).any(|d| d.join(&command).is_file()),
            "not found on PATH".to_string(),
        )
    };
    if found {
        Ok(())
    } else {
        Err(PreStartRefusal::NoCommand { command, looked })
    }
}

/// The checkpoint audit: a local model's quantization config against the seat's flag.
fn checkpoint_audit(_fleet: &Fleet, seat: &Seat) -> Result<(), PreStartRefusal> {
    let Some((path, quant)) = model_and_quantization(seat) else {
        return Ok(());
    };
    // Only regular files and directories are inspected: a FIFO or device would block the read,
    // and a path that does not exist here is the engine's to report.
    let inspectable = std::fs::metadata(&path).is_ok_and(|m| m.is_dir() || m.is_file());
    if !inspectable {
        return Ok(());
    }
    let findings = bakeoff_model::audit_seat_checkpoint(&path, quant.as_deref());
    if bakeoff_model::blocks_start(&findings) {
        let first = findings
            .iter()
            .find(|f| f.severity == bakeoff_model::quant::Severity::Error)
            .map(|f| match &f.fix {
                Some(fix) => format!("{} ({}): {}; fix: {fix}", f.code, path.display(), f.message),
                None => format!("{} ({}): {}", f.code, path.display(), f.message),
            })
            .unwrap_or_default();
        return Err(PreStartRefusal::CheckpointAudit(first));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod audit_tests {
    use std::path::Path;

    use super::*;
    use crate::checks::model_path::quantization_flag;

    /// The crash loop of field case F7, refused before anything starts: a hard-coded
    /// `--quantization compressed-tensors` over unquantized BF16 weights (docs/field-cases.md F7).
    #[test]
    fn quantization_flag_over_unquantized_weights_is_refused() {
        let ckpt = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../bakeoff-model/tests/fixtures/checkpoints/gemma-3-27b-it-bf16");
        let dir = tempfile::tempdir().unwrap();
        let fleet_path = dir.path().join("fleet.toml");
        let text = format!(
            r#"
[hosts.local]
gpus = 0

[[seat]]
name = "trainee"
engine = "vllm"
role = "bench"
port = 18999
[seat.process]
command = "/bin/sh"
args = ["serve", "{ckpt}", "--quantization", "compressed-tensors"]

[[seat]]
name = "trainee-ok"
engine = "vllm"
role = "bench"
port = 18998
[seat.process]
command = "/bin/sh"
args = ["serve", "{ckpt}"]
"#,
            ckpt = ckpt.display()
        );
        let fleet = Fleet::parse(&text, &fleet_path).unwrap();
        let bad = fleet.seats.iter().find(|s| s.name == "trainee").unwrap();
        let err = before_start_blocking(&fleet, bad).unwrap_err().to_string();
        assert!(err.contains("quantization-mismatch"), "{err}");
        assert!(err.contains("CompressedTensorsConfig"), "{err}");
        let ok = fleet.seats.iter().find(|s| s.name == "trainee-ok").unwrap();
        assert!(before_start_blocking(&fleet, ok).is_ok());
    }

    /// A process seat whose command does not exist is refused before the start, with the fix,
    /// never "the start would go ahead".
    #[test]
    fn a_command_that_does_not_exist_refuses_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"
[[seat]]
name = "gone"
engine = "llama.cpp"
role = "bench"
port = 18994
[seat.process]
command = "/opt/none/llama-server"
args = ["--port", "{port}"]

[[seat]]
name = "bare"
engine = "llama.cpp"
role = "bench"
port = 18993
[seat.process]
command = "no-such-engine-anywhere"
"#;
        let fleet = Fleet::parse(text, &dir.path().join("fleet.toml")).unwrap();
        let err = before_start_blocking(&fleet, &fleet.seats[0])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "the seat's command \"/opt/none/llama-server\" does not exist (no such file); fix: install the engine, or give its full path as command under [seat.process]"
        );
        let err = before_start_blocking(&fleet, &fleet.seats[1])
            .unwrap_err()
            .to_string();
        assert!(err.contains("(not found on PATH)"), "{err}");
    }

    /// A hub id is not audited, but its `--quantization` is still the seat's (the failure
    /// artifact scopes a negative result by it).
    #[test]
    fn the_quantization_flag_is_read_without_a_local_model() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"
[[seat]]
name = "hub"
engine = "vllm"
role = "bench"
port = 18997
[seat.process]
command = "vllm"
args = ["serve", "Qwen/Qwen3-8B", "--quantization=fp8"]
"#;
        let fleet = Fleet::parse(text, &dir.path().join("fleet.toml")).unwrap();
        let seat = &fleet.seats[0];
        assert_eq!(model_and_quantization(seat), None);
        assert_eq!(quantization_flag(seat).as_deref(), Some("fp8"));
        let r = crate::ops::error_report("exited");
        let art = crate::ops::failure_artifact(&fleet, seat, &r);
        assert_eq!(art.candidate.quantization.as_deref(), Some("fp8"));
    }

    /// The model path behind a placeholder or a Python module flag: `{cache}` is filled in, and
    /// `python -m vllm.entrypoints.openai.api_server --model DIR` names the directory.
    #[test]
    fn placeholders_and_python_module_flags_still_name_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let model_dir = dir.path().join("smol-hf");
        let text = format!(
            r#"
[[seat]]
name = "cached"
engine = "llama.cpp"
role = "bench"
port = 18996
[seat.process]
command = "{{cache}}/llama.cpp-b11434/bin/llama-server"
args = ["-m", "{{cache}}/models/m.gguf", "--port", "{{port}}"]

[[seat]]
name = "vllm-dir"
engine = "vllm"
role = "bench"
port = 18995
[seat.process]
command = "python"
args = ["-m", "vllm.entrypoints.openai.api_server", "--model", "{model}", "--quantization", "fp8"]
"#,
            model = model_dir.display()
        );
        let fleet = Fleet::parse(&text, &dir.path().join("fleet.toml")).unwrap();
        let (p, _) = model_and_quantization(&fleet.seats[0]).unwrap();
        assert_eq!(p, bakeoff_local::cache_dir().join("models/m.gguf"));
        let (p, q) = model_and_quantization(&fleet.seats[1]).unwrap();
        assert_eq!(p, model_dir);
        assert_eq!(q.as_deref(), Some("fp8"));
    }
}
