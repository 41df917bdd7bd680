//! The load engine's steps and the harness ceiling's events on the one progress display
//! ([`crate::Progress`]), for `bench run` and for `eval run`'s load suites. The ceiling is
//! measured by `bakeoff_measure`; this only draws what it reports.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bakeoff_artifact::LoadStep;
use bakeoff_load::Progress;
use bakeoff_measure::bench::BenchProgress;
use bakeoff_measure::ceiling::CeilingEvent;
use bakeoff_measure::describe::{self, secs};

/// The load engine's steps on the one progress display ([`crate::Progress`]).
/// In `bench run` (`steps: Some(N)`): "[bench step k/N] c=2" with the time since the run began
/// and an ETA (mean step time so far × steps left, once a step is done) as each step starts,
/// the requests so far on a terminal only, and each step's result as a lasting line. Inside
/// `eval run` (`steps: None`) the suite's own item events number and close the steps; this
/// adds only the requests so far, on a terminal.
pub struct StepProgress {
    display: Arc<crate::Progress>,
    steps: Option<usize>,
    state: Mutex<StepState>,
}

struct StepState {
    /// `bench`, or the load suite running (set by `eval run`).
    prefix: String,
    run_start: Option<Instant>,
    step_start: Instant,
    label: String,
    planned: Option<u64>,
    sent: u64,
    errors: u64,
    /// When the requests-so-far status was last drawn (at most 4 a second: redraws steal CPU
    /// from the client under load).
    drawn: Option<Instant>,
    /// The measured step in progress (1-based; 0 during the warm-up).
    k: usize,
    finished: usize,
    finished_time: Duration,
}

impl StepProgress {
    pub fn new(display: Arc<crate::Progress>, prefix: &str, steps: Option<usize>) -> Self {
        Self {
            display,
            steps,
            state: Mutex::new(StepState {
                prefix: prefix.to_string(),
                run_start: None,
                step_start: Instant::now(),
                label: String::new(),
                planned: None,
                sent: 0,
                errors: 0,
                drawn: None,
                k: 0,
                finished: 0,
                finished_time: Duration::ZERO,
            }),
        }
    }

    /// The load suite now running (its name heads the per-request status).
    pub fn set_prefix(&self, prefix: &str) {
        if let Ok(mut st) = self.state.lock() {
            st.prefix = prefix.to_string();
        }
    }
}

impl StepState {
    fn head(&self, steps: Option<usize>) -> String {
        match (steps, self.k) {
            (_, 0) => format!("[{} warm-up]", self.prefix),
            (Some(n), k) => format!("[{} step {k}/{n}] {}", self.prefix, self.label),
            (None, _) => format!("[{}] {}", self.prefix, self.label),
        }
    }

    /// "12 s elapsed, ~30 s left": the ETA once a step is done and while steps are left.
    fn timing(&self, steps: Option<usize>) -> String {
        let elapsed = self.run_start.map(|t| t.elapsed()).unwrap_or_default();
        let mut out = format!("{} elapsed", secs(elapsed));
        if let (Some(n), Ok(done)) = (steps, u32::try_from(self.finished))
            && done > 0
            && let Ok(left) = u32::try_from(n.saturating_sub(self.finished))
            && left > 0
        {
            let eta = self.finished_time / done * left;
            out.push_str(&format!(", ~{} left", secs(eta)));
        }
        out
    }
}

impl Progress for StepProgress {
    fn step_started(&self, label: &str, planned: Option<u64>, _duration: Option<Duration>) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.run_start.get_or_insert_with(Instant::now);
        st.step_start = Instant::now();
        st.planned = planned;
        st.sent = 0;
        st.errors = 0;
        if label == "warm-up" {
            st.k = 0;
        } else {
            st.k += 1;
        }
        st.label = label.to_string();
        let text = match (self.steps, st.k, planned) {
            (_, 0, Some(n)) => format!(
                "{} {n} request{}, not measured",
                st.head(self.steps),
                if n == 1 { "" } else { "s" }
            ),
            _ => format!("{}: {}", st.head(self.steps), st.timing(self.steps)),
        };
        if self.steps.is_some() {
            self.display.status(&text);
        } else {
            self.display.transient(&text);
        }
    }

    fn request_finished(&self, ok: bool) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.sent += 1;
        if !ok {
            st.errors += 1;
        }
        if st
            .drawn
            .is_some_and(|t| t.elapsed() < Duration::from_millis(250))
        {
            return;
        }
        st.drawn = Some(Instant::now());
        let of = st.planned.map(|n| format!("/{n}")).unwrap_or_default();
        let errors = match st.errors {
            0 => String::new(),
            1 => ", 1 error".to_string(),
            e => format!(", {e} errors"),
        };
        self.display.transient(&format!(
            "{}: {}{of} requests{errors}, {}",
            st.head(self.steps),
            st.sent,
            st.timing(self.steps)
        ));
    }

    fn step_finished(&self, step: &LoadStep) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        st.finished += 1;
        let took = st.step_start.elapsed();
        st.finished_time += took;
        if self.steps.is_some() {
            self.display.line(&format!(
                "{}: {}/{} ok, {:.1} tok/s, {}",
                st.head(self.steps),
                step.ok,
                step.sent,
                step.output_tokens_per_second.unwrap_or(0.0),
                secs(took)
            ));
        }
    }
}

/// The load suites' steps inside `eval run`, on `display`; the returned handle is told which
/// suite runs.
pub fn suite_progress(
    display: Arc<crate::Progress>,
) -> (bakeoff_suites::throughput::LoadProgress, Arc<StepProgress>) {
    let steps = Arc::new(StepProgress::new(display, "load", None));
    let load = bakeoff_suites::throughput::LoadProgress(Some(steps.clone() as Arc<dyn Progress>));
    (load, steps)
}

/// `bench run`'s display: the harness ceiling's lines, then the sweep's steps ("[bench step
/// k/N]"). The spinner starts with the first thing drawn, after the preflight and the
/// embedded default's own provisioning output.
#[derive(Default)]
pub struct BenchDisplay(OnceLock<Arc<crate::Progress>>);

impl BenchDisplay {
    fn display(&self) -> &Arc<crate::Progress> {
        self.0.get_or_init(|| Arc::new(crate::Progress::new(false)))
    }

    /// Remove the spinner, if one was drawn (before the command prints its result).
    pub fn finish(&self) {
        if let Some(d) = self.0.get() {
            d.finish();
        }
    }
}

impl BenchProgress for BenchDisplay {
    fn ceiling(&self, e: CeilingEvent) {
        self.display().described(describe::ceiling_event(&e));
    }

    fn sweep(&self, steps: Option<usize>) -> Arc<dyn Progress> {
        Arc::new(StepProgress::new(self.display().clone(), "bench", steps))
    }
}
