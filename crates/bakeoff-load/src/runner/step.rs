//! What a step's runners (closed loop, open loop, conversations) share: a step's spec and its
//! requests, the progress display, and the accumulator handed back when the step ends.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bakeoff_artifact::LoadStep;
use bakeoff_wire::{ChatRequest, Message};

use crate::measure::StepAccumulator;
use crate::plan::LoadPlan;
use crate::prng::SplitMix64;
use crate::workload::Workload;
use crate::{LoadError, prompt, schedule};

/// Below this many mean output tokens a step cannot show what speculative decoding does: its
/// overhead never amortizes over short completions (docs/field-cases.md B7: 10–31
/// token completions could not measure it; 3 × 1024-token probes could).
pub const SPEC_DECODE_MIN_TOKENS: f64 = 256.0;

/// What a person watching a sweep sees; the binary draws it (indicatif), tests ignore it.
pub trait Progress: Send + Sync {
    fn step_started(&self, _label: &str, _planned: Option<u64>, _duration: Option<Duration>) {}
    fn request_finished(&self, _ok: bool) {}
    fn step_finished(&self, _step: &LoadStep) {}
}

/// No progress display.
pub struct NoProgress;
impl Progress for NoProgress {}

/// One request of a step: its body and the output length it asks for.
pub fn build_request(plan: &LoadPlan, run_nonce: u64, step: usize, i: u64) -> (ChatRequest, u32) {
    // Per-request generator: lengths do not depend on which worker picks the request up.
    let mut rng = SplitMix64::new(plan.seed ^ ((step as u64) << 48) ^ i.wrapping_mul(0x9E37_79B9));
    let ptoks = plan.prompt_tokens.sample(i, &mut rng);
    let otoks = plan.output_tokens.sample(i, &mut rng);
    let prefix = (!plan.allow_prefix_cache).then(|| prompt::unique_prefix(run_nonce, step, i));
    let text = match &plan.workload {
        Workload::ShareGpt(s) => crate::workload::sharegpt_prompt(s, prefix.as_deref(), i),
        // Multi-turn and trace steps build their own; their warm-up is synthetic.
        _ => prompt::build(ptoks, prefix.as_deref()),
    };
    let mut req = ChatRequest::new(&plan.model, vec![Message::user(text)], otoks, true);
    crate::workload::finish_request(&plan.request_plan(), &mut req, otoks);
    (req, otoks)
}

/// One step of the plan as a runner takes it.
pub(super) struct StepSpec {
    pub(super) index: usize,
    pub(super) label: String,
    pub(super) concurrency: Option<u32>,
    pub(super) rate: Option<(f64, schedule::Arrival, Option<usize>)>,
    /// Which repeat of its level (1-based), when the plan repeats.
    pub(super) repeat: Option<u32>,
    /// `--ramp-up` before the measured window (never on the warm-up).
    pub(super) ramp: Option<Duration>,
}

pub(super) fn unwrap_acc(acc: Arc<Mutex<StepAccumulator>>) -> Result<StepAccumulator, LoadError> {
    Arc::try_unwrap(acc)
        .map_err(|_| LoadError::Internal("a request task outlived its step".into()))?
        .into_inner()
        .map_err(|_| LoadError::Internal("a request task panicked".into()))
}
