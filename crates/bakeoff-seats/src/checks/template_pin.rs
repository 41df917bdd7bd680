//! A seat's pinned chat template (`chat_template = "path"` in the fleet file).
//!
//! docs/field-cases.md F4: three derivative checkpoints carried the identical stale template, found only
//! by hashing every build; serving a mismatched template renders a different prompt, and both
//! serving and training go wrong silently. The fix there was a pin per seat — a no-op for the
//! weights it was written for, and a template that must move with the checkpoint. So:
//!
//! - before a start the pin's normalized hash is compared with the checkpoint's own template
//!   (`template-pin-no-op`, `template-override`, or `template-pin-unchecked` when the model is
//!   not local or carries none), the launch must hand the pin to the engine
//!   (`template-pin-not-passed`), and a checkpoint whose template changed since the last good
//!   start while the pin did not is `template-pin-stale`;
//! - once ready, the template the engine serves (llama.cpp `/props`) must be the pin's
//!   (`template-mismatch`, an error that fails the operation; `template-served-unknown` when
//!   the engine does not expose it).
//!
//! Each good start records the pin's and the checkpoint's hashes in
//! `<state_dir>/<seat>.template.json`: that record is what "the checkpoint moved" is measured
//! against.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bakeoff_artifact::{FindingSeverity, SeatFinding, TemplateFingerprint};
use bakeoff_client::discovery::{DiscoveryOptions, discover};
use bakeoff_model::args::flag_value;
use bakeoff_text::{
    ExtractedTemplate, extract_templates, fingerprint, fixed_conversation, render_diff,
    template_table,
};
use serde::{Deserialize, Serialize};

use super::hub_model::args_of;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Engine, Fleet, Seat};

/// How long the served-template check may wait on the engine.
const SERVED_TIMEOUT: Duration = Duration::from_secs(10);

/// Diff lines kept in a `template-mismatch` finding.
const DIFF_LINES: usize = 20;

/// The largest pin read: a chat template is kilobytes; anything this size is the wrong file.
const MAX_PIN_BYTES: u64 = 4 * 1024 * 1024;

/// What is wrong with a pin file; the text follows its path (`the pin P is empty`).
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot be read: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("is not a regular file")]
    NotAFile,
    #[error("is {0} bytes, too large for a chat template")]
    TooLarge(u64),
    #[error("is not UTF-8 text")]
    NotUtf8,
    #[error("is empty")]
    Empty,
}

/// A seat's `chat_template` that does not name a readable template file.
#[derive(Debug, thiserror::Error)]
#[error(
    "seat {seat:?}: chat_template {written:?} ({}) {why}; fix: point chat_template at the template file (a .jinja text file), relative to the fleet file's directory",
    path.display()
)]
pub struct BadPin {
    pub seat: String,
    /// As the fleet file wrote it.
    pub written: String,
    /// Resolved against the fleet file's directory.
    pub path: PathBuf,
    #[source]
    pub why: PinError,
}

/// Why the checkpoint's own template is not there to compare a pin with.
#[derive(Debug, thiserror::Error)]
pub enum NoCheckpointTemplate {
    #[error(
        "the model is not a local path here (a hub id, or a container path outside the mounts)"
    )]
    NotLocal,
    #[error("{} is not on this machine", .0.display())]
    NotHere(PathBuf),
    #[error(transparent)]
    Unreadable(#[from] bakeoff_text::TemplateSourceError),
    #[error("{} carries no chat template", .0.display())]
    NoTemplate(PathBuf),
}

/// Resolve every seat's `chat_template` against the fleet file's directory `dir` and check
/// that it is a readable text file. The message names the seat, the path and the fix.
pub fn resolve_pins(mut seats: Vec<Seat>, dir: &Path) -> Result<Vec<Seat>, BadPin> {
    for seat in &mut seats {
        let Some(written) = seat.chat_template.take() else {
            continue;
        };
        let path = dir.join(&written);
        if let Err(why) = read_pin(&path) {
            return Err(BadPin {
                seat: seat.name.clone(),
                written: written.display().to_string(),
                path,
                why,
            });
        }
        seat.chat_template = Some(path);
    }
    Ok(seats)
}

/// The pin's text; the error says what is wrong with the file (`cannot be read: …`).
pub fn read_pin(path: &Path) -> Result<String, PinError> {
    let meta = std::fs::metadata(path).map_err(PinError::Unreadable)?;
    if !meta.is_file() {
        return Err(PinError::NotAFile);
    }
    if meta.len() > MAX_PIN_BYTES {
        return Err(PinError::TooLarge(meta.len()));
    }
    let bytes = std::fs::read(path).map_err(PinError::Unreadable)?;
    let text = String::from_utf8(bytes).map_err(|_| PinError::NotUtf8)?;
    if text.trim().is_empty() {
        return Err(PinError::Empty);
    }
    Ok(text)
}

/// The checkpoint's own template (its default), or why there is none to compare with.
pub fn checkpoint_template(
    seat: &Seat,
) -> Result<(PathBuf, ExtractedTemplate), NoCheckpointTemplate> {
    let Some((path, _)) = crate::checks::model_path::model_and_quantization(seat) else {
        return Err(NoCheckpointTemplate::NotLocal);
    };
    // Only regular files and directories: a FIFO or device would block the read.
    if !std::fs::metadata(&path).is_ok_and(|m| m.is_dir() || m.is_file()) {
        return Err(NoCheckpointTemplate::NotHere(path));
    }
    let mut found = extract_templates(&path)?;
    if found.is_empty() {
        return Err(NoCheckpointTemplate::NoTemplate(path));
    }
    Ok((path, found.swap_remove(0)))
}

/// What the last good start recorded (`<state_dir>/<seat>.template.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinRecord {
    pub pin: PathBuf,
    pub pin_sha256: String,
    /// The checkpoint's own template then (`None`: it had none, or was not local).
    #[serde(default)]
    pub checkpoint_sha256: Option<String>,
    /// The template the engine served then (`None`: not exposed).
    #[serde(default)]
    pub served_sha256: Option<String>,
    pub recorded_at: String,
}

pub fn record_path(fleet: &Fleet, seat: &Seat) -> PathBuf {
    fleet.state_dir.join(format!("{}.template.json", seat.name))
}

fn read_record(fleet: &Fleet, seat: &Seat) -> Option<PinRecord> {
    let text = std::fs::read_to_string(record_path(fleet, seat)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The findings before `seat` starts (none without a pin).
pub fn before_start(fleet: &Fleet, seat: &Seat) -> Vec<SeatFinding> {
    let Some(pin) = &seat.chat_template else {
        return Vec::new();
    };
    let pin_fp = match read_pin(pin) {
        Ok(t) => fingerprint(&t),
        Err(why) => {
            return vec![
                SeatFinding::new(
                    "template-pin-unchecked",
                    FindingSeverity::Warning,
                    format!("the pin {} {why}", pin.display()),
                )
                .with_fix("restore the file, or point chat_template at it"),
            ];
        }
    };
    let first = against_checkpoint(seat, pin, &pin_fp);
    let no_op = first.code == "template-pin-no-op";
    let mut findings = vec![first];
    findings.extend(not_passed(seat, pin, &pin_fp, no_op));
    findings.extend(stale(fleet, seat, &pin_fp));
    findings
}

/// `template-pin-no-op`, `template-override` or `template-pin-unchecked`.
fn against_checkpoint(seat: &Seat, pin: &Path, pin_fp: &TemplateFingerprint) -> SeatFinding {
    match checkpoint_template(seat) {
        Ok((path, t)) => {
            let ck = fingerprint(&t.text);
            if ck.sha256 == pin_fp.sha256 {
                SeatFinding::new(
                    "template-pin-no-op",
                    FindingSeverity::Note,
                    format!(
                        "the pin {} is the checkpoint's own template ({} {}, sha256 {}): a no-op for these weights, kept so the template moves with the seat (docs/field-cases.md F4)",
                        pin.display(),
                        path.display(),
                        t.source,
                        ck.short
                    ),
                )
            } else {
                SeatFinding::new(
                    "template-override",
                    FindingSeverity::Note,
                    format!(
                        "the pin {} (sha256 {}) overrides the checkpoint's template ({} {}, sha256 {}): a deliberate override",
                        pin.display(),
                        pin_fp.short,
                        path.display(),
                        t.source,
                        ck.short
                    ),
                )
                .with_evidence(format!("pin sha256 {}", pin_fp.sha256))
                .with_evidence(format!("checkpoint sha256 {}", ck.sha256))
            }
        }
        Err(why) => SeatFinding::new(
            "template-pin-unchecked",
            FindingSeverity::Note,
            format!(
                "the pin {} (sha256 {}) is not compared with the checkpoint: {why}",
                pin.display(),
                pin_fp.short
            ),
        ),
    }
}

/// The flag that hands a template file to `engine` (`None`: not known for a generic engine).
fn template_flag(engine: Engine) -> Option<&'static str> {
    match engine {
        Engine::LlamaCpp => Some("--chat-template-file"),
        Engine::Vllm | Engine::Sglang => Some("--chat-template"),
        Engine::Generic => None,
    }
}

/// The pin as the engine sees it: a process seat's host path, or a Docker seat's container
/// path through the mount that holds it.
fn engine_path(seat: &Seat, pin: &Path) -> Option<PathBuf> {
    match &seat.launch {
        Launch::Process(_) => Some(pin.to_path_buf()),
        Launch::Docker(d) => d.mounts.iter().find_map(|m| {
            let mut parts = m.splitn(3, ':');
            let (host, container) = (parts.next()?, parts.next()?);
            let rest = pin.strip_prefix(host).ok()?;
            Some(Path::new(container).join(rest))
        }),
    }
}

/// What to add to the launch so the engine serves the pin.
pub fn pass_fix(seat: &Seat, pin: &Path) -> String {
    let Some(flag) = template_flag(seat.engine) else {
        return format!("pass {} to the engine as its chat template", pin.display());
    };
    let table = match seat.launch {
        Launch::Process(_) => "[seat.process] args",
        Launch::Docker(_) => "[seat.docker] command",
    };
    let jinja = if seat.engine == Engine::LlamaCpp {
        "\"--jinja\", "
    } else {
        ""
    };
    match engine_path(seat, pin) {
        Some(p) => format!("add {jinja}\"{flag}\", \"{}\" to {table}", p.display()),
        None => format!(
            "mount the pin's directory ({}) into the container and add {jinja}\"{flag}\", \"<its container path>\" to {table}",
            pin.parent().unwrap_or(pin).display()
        ),
    }
}

/// `template-pin-not-passed` when the launch does not give the engine the pin.
/// `no_op`: the checkpoint carries the pin's template today.
fn not_passed(
    seat: &Seat,
    pin: &Path,
    pin_fp: &TemplateFingerprint,
    no_op: bool,
) -> Option<SeatFinding> {
    let flag = template_flag(seat.engine)?;
    let given = flag_value(args_of(seat), &[flag]);
    let message = match given {
        None if no_op => format!(
            "the launch has no {flag}: the engine serves the checkpoint's template, which is the pin {} only as long as the checkpoint does not move (docs/field-cases.md F4)",
            pin.display()
        ),
        None => format!(
            "the launch has no {flag}: the engine serves the checkpoint's template or its own default, not the pin {}; after ready this is a template-mismatch",
            pin.display()
        ),
        Some(v) => {
            let host = match &seat.launch {
                Launch::Process(_) => Some(PathBuf::from(v)),
                Launch::Docker(d) => crate::checks::model_path::host_path(Path::new(v), &d.mounts),
            };
            // vLLM also takes the template inline; a file is compared by its content, so a
            // copy of the pin counts as the pin.
            let text = match host {
                Some(h) if h.is_file() => read_pin(&h).ok(),
                Some(_) if seat.engine != Engine::LlamaCpp => Some(v.to_string()),
                // A container path outside the mounts (baked into the image): the served
                // check after ready decides.
                _ => None,
            }?;
            if fingerprint(&text).sha256 == pin_fp.sha256 {
                return None;
            }
            format!(
                "the launch passes {flag} {v}, which is not the pin {} (sha256 {}): the engine will serve another template",
                pin.display(),
                pin_fp.short
            )
        }
    };
    Some(
        SeatFinding::new("template-pin-not-passed", FindingSeverity::Warning, message)
            .with_fix(pass_fix(seat, pin)),
    )
}

/// `template-pin-stale`: the checkpoint's template changed since the last good start while the
/// pin did not.
fn stale(fleet: &Fleet, seat: &Seat, pin_fp: &TemplateFingerprint) -> Option<SeatFinding> {
    let rec = read_record(fleet, seat)?;
    let was = rec.checkpoint_sha256?;
    let (_, now) = checkpoint_template(seat).ok()?;
    let now = fingerprint(&now.text);
    if rec.pin_sha256 != pin_fp.sha256 || was == now.sha256 {
        return None;
    }
    Some(
        SeatFinding::new(
            "template-pin-stale",
            FindingSeverity::Warning,
            format!(
                "the checkpoint moved, the pin did not: the checkpoint's template was {} at the last good start ({}) and is {} now, while the pin is still {} (docs/field-cases.md F4: the template must move with the checkpoint)",
                short(&was),
                rec.recorded_at,
                now.short,
                pin_fp.short
            ),
        )
        .with_fix(format!(
            "compare them (bakeoff audit template {} MODEL), then update chat_template or keep it on purpose",
            seat.chat_template
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )),
    )
}

fn short(sha: &str) -> &str {
    sha.get(..16).unwrap_or(sha)
}

/// The checks once `seat` is ready at `url`: the served template against the pin. A good
/// start (no mismatch) is recorded for the stale check.
pub async fn after_ready(fleet: &Fleet, seat: &Seat, url: &str) -> Vec<SeatFinding> {
    let Some(pin) = &seat.chat_template else {
        return Vec::new();
    };
    // An unreadable pin was reported before the start.
    let Ok(pin_text) = read_pin(pin) else {
        return Vec::new();
    };
    let pin_fp = fingerprint(&pin_text);
    let served = served_template(url, seat.api_key(), &seat.tls_options()).await;
    let mut findings = Vec::new();
    let served_sha = match &served {
        Err(why) => {
            findings.push(SeatFinding::new(
                "template-served-unknown",
                FindingSeverity::Note,
                format!(
                    "the served template cannot be compared with the pin {}: {why}",
                    pin.display()
                ),
            ));
            None
        }
        Ok(text) => {
            let fp = fingerprint(text);
            if fp.sha256 != pin_fp.sha256 {
                findings.push(mismatch(seat, pin, &pin_text, text, &pin_fp, &fp));
                return findings;
            }
            Some(fp.sha256)
        }
    };
    record(fleet, seat, pin, &pin_fp, served_sha, &mut findings);
    findings
}

/// Why the served template is not there to compare with the pin (a note, never a failure).
#[derive(Debug, thiserror::Error)]
enum ServedUnknown {
    #[error("{0} is not a URL, or its [seat.tls] could not be built")]
    NoClient(String),
    #[error(
        "the engine ({0}) does not expose the template it serves (llama.cpp's /props does; vLLM and SGLang do not)"
    )]
    NotExposed(bakeoff_artifact::EngineKind),
}

/// The template the engine at `url` serves (llama.cpp `/props`), within [`SERVED_TIMEOUT`].
async fn served_template(
    url: &str,
    api_key: Option<bakeoff_client::ApiKey>,
    tls: &bakeoff_client::tls::TlsOptions,
) -> Result<String, ServedUnknown> {
    let client = crate::watchdog::probe_client_for(url, api_key, tls)
        .ok_or_else(|| ServedUnknown::NoClient(url.to_string()))?;
    let d = discover(
        &client,
        &DiscoveryOptions {
            probe_timeout: SERVED_TIMEOUT,
            deadline: Some(Instant::now() + SERVED_TIMEOUT),
            ..DiscoveryOptions::default()
        },
    )
    .await;
    d.chat_template
        .ok_or(ServedUnknown::NotExposed(d.facts.engine))
}

/// `template-mismatch`: the served template is not the pin; the evidence is the diff of the
/// fixed conversation rendered through each (as `bakeoff audit template`).
fn mismatch(
    seat: &Seat,
    pin: &Path,
    pin_text: &str,
    served: &str,
    pin_fp: &TemplateFingerprint,
    served_fp: &TemplateFingerprint,
) -> SeatFinding {
    let as_template = |label: String, source: &str, text: &str| ExtractedTemplate {
        label,
        source: source.into(),
        text: text.into(),
        bos_token: None,
        eos_token: None,
    };
    let pinned = as_template(pin.display().to_string(), "pin", pin_text);
    let serving = as_template("served".into(), "engine", served);
    // The fixed conversation first (as `audit template`); templates that differ only in what
    // they add without a system message (a default system prompt, as ChatML builds often
    // carry) render it the same, so the conversation without its system message comes next.
    let full = fixed_conversation();
    let mut bare = full.clone();
    if let Some(list) = bare.messages.as_array_mut() {
        list.retain(|m| m["role"] != "system");
    }
    let diff = [
        ("the fixed conversation", full),
        ("the fixed conversation without its system message", bare),
    ]
    .into_iter()
    .find_map(|(what, input)| {
        let (reference, rows) =
            template_table(std::slice::from_ref(&serving), Some(&pinned), &input);
        match (reference.as_ref(), rows.first()) {
            (Some(a), Some(b)) => render_diff(a, b).map(|d| (what, d)),
            _ => None,
        }
    });
    let mut f = SeatFinding::new(
        "template-mismatch",
        FindingSeverity::Error,
        format!(
            "the engine serves another chat template than the pin {}: served sha256 {} ({} lines), pin {} ({} lines); prompts are rendered differently than pinned (docs/field-cases.md F4)",
            pin.display(),
            served_fp.short,
            served_fp.lines,
            pin_fp.short,
            pin_fp.lines
        ),
    )
    .with_fix(pass_fix(seat, pin));
    match diff {
        Some((what, d)) => {
            f = f.with_evidence(format!("{what}, rendered through the pin (-) and the served template (+):"));
            for l in d.lines().take(DIFF_LINES - 1) {
                f = f.with_evidence(l);
            }
        }
        None => {
            f = f.with_evidence(
                "the fixed conversation renders the same through both, with and without its system message; the template text differs",
            )
        }
    }
    f
}

/// Write the record of a good start; a record that cannot be written is a note (the start
/// itself is fine).
fn record(
    fleet: &Fleet,
    seat: &Seat,
    pin: &Path,
    pin_fp: &TemplateFingerprint,
    served_sha256: Option<String>,
    findings: &mut Vec<SeatFinding>,
) {
    let rec = PinRecord {
        pin: pin.to_path_buf(),
        pin_sha256: pin_fp.sha256.clone(),
        checkpoint_sha256: checkpoint_template(seat)
            .ok()
            .map(|(_, t)| fingerprint(&t.text).sha256),
        served_sha256,
        recorded_at: chrono::Utc::now().to_rfc3339(),
    };
    let path = record_path(fleet, seat);
    if let Err(e) = bakeoff_artifact::store::write_atomic(&path, &rec) {
        findings.push(SeatFinding::new(
            "template-pin-unrecorded",
            FindingSeverity::Note,
            format!(
                "the pin's hashes were not recorded ({e}): the next start cannot tell whether the checkpoint moved"
            ),
        ));
    }
}

/// Why a good start could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("seat {0:?} has no chat_template")]
    NoPin(String),
    #[error(transparent)]
    Pin(#[from] PinError),
    /// The record's finding (the state file could not be written).
    #[error("{0}")]
    NotRecorded(String),
}

/// Record a good start of `seat` now (as `after_ready` does), for tests and `audit seat`'s
/// callers that started the seat themselves.
pub fn record_good_start(fleet: &Fleet, seat: &Seat) -> Result<(), RecordError> {
    let pin = seat
        .chat_template
        .as_deref()
        .ok_or_else(|| RecordError::NoPin(seat.name.clone()))?;
    let pin_fp = fingerprint(&read_pin(pin)?);
    let mut findings = Vec::new();
    record(fleet, seat, pin, &pin_fp, None, &mut findings);
    match findings.first() {
        Some(f) => Err(RecordError::NotRecorded(f.message.clone())),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
