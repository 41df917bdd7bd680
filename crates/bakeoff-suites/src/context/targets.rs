//! What the context suite is asked to measure: the targets and depths, as options and parsed
//! from the command line, and how the targets are planned against the window.

use std::sync::Arc;

use bakeoff_text::LocalTokenizer;

/// Tokens reserved for the answer (a needle is a 36-character code).
pub const OUTPUT_BUDGET: u32 = 48;

/// One requested target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetSpec {
    Tokens(u64),
    /// Up to the window itself.
    Window,
}

impl TargetSpec {
    pub fn label(self) -> String {
        match self {
            TargetSpec::Tokens(n) => bakeoff_artifact::slug::window_label(n),
            TargetSpec::Window => "window".into(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// `None`: powers of two from 4k up to and including the window.
    pub targets: Option<Vec<TargetSpec>>,
    /// Needle depths in 0..=1.
    pub depths: Vec<f64>,
    /// Seed for needles, filler order and start offsets (reproducible runs).
    pub seed: u64,
    /// Send the one probe just past the window.
    pub overflow_probe: bool,
    /// `--tokenizer PATH`: cut and count with this `tokenizer.json` instead of the server's
    /// `/tokenize` (for endpoints that have none).
    pub tokenizer: Option<Arc<LocalTokenizer>>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self {
            targets: None,
            depths: vec![0.0, 0.25, 0.5, 0.75, 1.0],
            seed: 0x00C0_FFEE,
            overflow_probe: true,
            tokenizer: None,
        }
    }
}

/// Why `--context-targets` or `--context-depths` was refused (operator input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextFlagError {
    #[error("context target {0:?} is not a size like 4k, 8192 or window")]
    Target(String),
    #[error("--context-targets is empty; e.g. 4k,16k,window")]
    NoTargets,
    #[error("context depth {0:?} is not a percentage 0–100")]
    Depth(String),
    #[error("--context-depths is empty; e.g. 0,50,100")]
    NoDepths,
}

/// `4k,16k,window`, `8192`, `32K`.
pub fn parse_targets(s: &str) -> Result<Vec<TargetSpec>, ContextFlagError> {
    let mut out = Vec::new();
    for raw in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let lower = raw.to_ascii_lowercase();
        let t = if lower == "window" {
            TargetSpec::Window
        } else if let Some(k) = lower.strip_suffix('k') {
            TargetSpec::Tokens(
                k.parse::<u64>()
                    .ok()
                    .filter(|&k| k > 0)
                    .ok_or_else(|| ContextFlagError::Target(raw.to_string()))?
                    * 1024,
            )
        } else {
            TargetSpec::Tokens(
                lower
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| ContextFlagError::Target(raw.to_string()))?,
            )
        };
        out.push(t);
    }
    if out.is_empty() {
        return Err(ContextFlagError::NoTargets);
    }
    Ok(out)
}

/// `0,25,50,75,100` (percent).
pub fn parse_depths(s: &str) -> Result<Vec<f64>, ContextFlagError> {
    let mut out = Vec::new();
    for raw in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let v: f64 = raw
            .trim_end_matches('%')
            .parse()
            .map_err(|_| ContextFlagError::Depth(raw.to_string()))?;
        if !(0.0..=100.0).contains(&v) {
            return Err(ContextFlagError::Depth(raw.to_string()));
        }
        out.push(v / 100.0);
    }
    if out.is_empty() {
        return Err(ContextFlagError::NoDepths);
    }
    Ok(out)
}

/// The tolerance rule: max(0.5 % of the target, 16 tokens).
pub fn tolerance(target: u64) -> u64 {
    ((target as f64) * 0.005).ceil().max(16.0) as u64
}

/// A planned row: what was asked, what can fit.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedTarget {
    pub label: String,
    pub requested: u64,
    /// What will be sent (≤ window − output budget), or `None` when it cannot fit.
    pub clamped: Option<u64>,
}

/// Targets against the window: above the window → cannot fit (skipped); otherwise clamped to
/// `window − output budget`. Duplicates after clamping are kept once.
pub fn plan_targets(targets: &[TargetSpec], window: u64) -> Vec<PlannedTarget> {
    let max_fit = window.saturating_sub(u64::from(OUTPUT_BUDGET));
    let mut out: Vec<PlannedTarget> = Vec::new();
    for t in targets {
        let requested = match t {
            TargetSpec::Tokens(n) => *n,
            TargetSpec::Window => window,
        };
        let clamped = (requested <= window && max_fit > 0).then(|| requested.min(max_fit));
        if clamped.is_some() && out.iter().any(|o| o.clamped == clamped) {
            continue;
        }
        out.push(PlannedTarget {
            label: t.label(),
            requested,
            clamped,
        });
    }
    out
}

/// Powers of two from 4k below the window, then the window.
pub fn default_targets(window: u64) -> Vec<TargetSpec> {
    let mut v = Vec::new();
    let mut t = 4096u64;
    while t < window {
        v.push(TargetSpec::Tokens(t));
        t *= 2;
    }
    v.push(TargetSpec::Window);
    v
}
