//! Seat operations: up, down, restart, swap, status — the same lifecycle for process and
//! Docker seats, with the rules that protect a fleet:
//!
//! - a `production` seat is never started, stopped or swapped without `confirm`: the
//!   operation returns [`OpsError::NeedsConfirm`] with what it would have done (fail closed);
//! - two seats that bind one port on one host are never up together: `up` refuses while a
//!   sibling is up, and `swap OLD NEW` stops OLD first, then starts NEW, and brings OLD back
//!   when NEW fails — every check that could refuse NEW (the gate, a third seat on the port,
//!   the pre-start hooks, reaching its backend) runs before OLD is touched, and any error
//!   after OLD is stopped becomes NEW's failure and takes the rollback path;
//! - a `dormant` seat is created but not started by `up`;
//! - every failure writes `<seat>.failure.json` (the seat's name is its slug).

use std::path::PathBuf;
use std::time::Instant;

use crate::backend::{Backend, BackendError, Observed, Status};
use crate::fleet::types::{Fleet, Role, Seat};
use crate::hooks;
use crate::watchdog::{self, WatchOptions, WatchReport};

mod failure;
pub mod host_status;
pub mod load_conditions;
pub mod page_cache;
mod start_checks;
mod start_record;
mod status;

pub use status::SeatStatus;

pub(crate) use failure::error_report;
pub use failure::failure_artifact;
use failure::{start_failure_report, write_failure_artifact};
pub use start_record::{last_load_ms, start_record, start_record_path};

#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    #[error(transparent)]
    UnknownSeat(#[from] crate::fleet::types::UnknownSeat),
    #[error(
        "refused: {seat} is a production seat and --confirm was not given. Would: {would}. Rerun with --confirm to do it"
    )]
    NeedsConfirm { seat: String, would: String },
    #[error(
        "refused: {seat} binds port {port} on host {host}, and {other} (same port) is up; use `bakeoff seat swap {other} {seat}`"
    )]
    PortTaken {
        seat: String,
        other: String,
        port: u16,
        host: String,
    },
    #[error("refused before start: {0}")]
    PreStart(#[source] crate::hooks::PreStartRefusal),
    #[error(
        "refused: {seat} cannot start while pid {pid}, left by the stop of {left_by}, is still alive ({state_words}, holding {held}); {fix}"
    )]
    ZombieLoader {
        seat: String,
        left_by: String,
        pid: u32,
        state: char,
        state_words: &'static str,
        held: String,
        fix: String,
    },
    #[error(
        "refused: {seat} does not fit beside {beside} on host {host}: {arithmetic}; fix: stop a seat on that GPU first, or lower a claim (gpu_memory_utilization, -c)"
    )]
    DoesNotFit {
        seat: String,
        beside: String,
        host: String,
        arithmetic: String,
    },
    #[error("swap {0} {0}: OLD and NEW are the same seat; name the seat to swap to")]
    SameSeat(String),
    /// `seat logs` of a seat that is not there and left no log: nothing to show is not an
    /// empty log.
    #[error(
        "seat {0} has no log to show: it is not started and left no log here; fix: start it with bakeoff seat up {0} (bakeoff seat status shows its state)"
    )]
    NoLog(String),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("cannot write the failure artifact: {0}")]
    Artifact(#[source] bakeoff_artifact::StoreError),
}

/// The outcome of bringing one seat up.
#[derive(Debug)]
pub struct UpOutcome {
    pub seat: String,
    pub report: Option<WatchReport>,
    /// `<seat>.failure.json`, when it failed.
    pub failure_path: Option<PathBuf>,
    /// A dormant seat: created, deliberately not started.
    pub created_only: bool,
    /// The seat was already up when asked to start: nothing was started, and the watch only
    /// confirmed it ready (or found it failing).
    pub already_up: bool,
    pub elapsed_ms: u64,
    /// Whether the weights were in the page cache before the start (as in the start record;
    /// `None`: nothing was started, or the state was not taken).
    pub page_cache: Option<bakeoff_artifact::SeatPageCache>,
    /// The host's conditions over the load (as in the start record; `None`: nothing was
    /// started here, or the seat is on another host).
    pub conditions: Option<bakeoff_artifact::Conditions>,
}

impl UpOutcome {
    /// Ready (or deliberately created only), and no check found an `error` (a served chat
    /// template that is not the pin): such a seat serves, but the operation failed.
    pub fn ok(&self) -> bool {
        self.created_only
            || self.report.as_ref().is_some_and(|r| {
                r.ready()
                    && !r
                        .findings
                        .iter()
                        .any(|f| f.severity == bakeoff_artifact::FindingSeverity::Error)
            })
    }
}

#[derive(Debug)]
pub struct SwapOutcome {
    pub old: String,
    pub new: String,
    pub new_outcome: UpOutcome,
    /// OLD was up when the swap began (it was stopped); `false`: there was nothing to stop.
    pub old_was_running: bool,
    /// When NEW failed: stopping NEW again failed with this (the rollback still ran).
    pub new_stop_error: Option<String>,
    /// When NEW failed: OLD brought back (its own outcome).
    pub rollback: Option<UpOutcome>,
}

impl SwapOutcome {
    pub fn ok(&self) -> bool {
        self.new_outcome.ok()
    }
}

/// What `start_and_watch` checks before it starts a seat that is not up.
enum Checks {
    /// The port check and the pre-start hooks (`up`, a swap's rollback).
    Run,
    /// Already run while the seat (or a swap's OLD) still served; their findings.
    Done(Vec<bakeoff_artifact::SeatFinding>),
}

pub struct Seats {
    pub fleet: Fleet,
    /// Where failure artifacts go.
    pub out_dir: PathBuf,
    pub watch: WatchOptions,
    /// The memory check of a start beside the seats up on its GPUs; `None`: not checked.
    pub placement: Option<PlacementCheck>,
    /// `seat up --warm-cache`: read the weight files once before each start.
    pub warm_cache: bool,
}

/// The memory check before a start, supplied by the caller (the binary wires the plan's
/// `coexist` arithmetic, `bakeoff_campaign::fits::check`, which this crate cannot depend on):
/// `(fleet, seat, seats staying up beside it on a shared GPU)` → the answer and its arithmetic.
/// A future, because the check reads the GPUs (nvidia-smi may take seconds): it is awaited,
/// and does its blocking reads off the runtime's threads.
pub type PlacementCheck =
    std::sync::Arc<dyn Fn(&Fleet, &str, &[String]) -> PlacementAnswer + Send + Sync>;

/// What a [`PlacementCheck`] returns: the answer and its arithmetic, once the GPUs are read.
pub type PlacementAnswer =
    futures_util::future::BoxFuture<'static, bakeoff_artifact::campaign::FitCheck>;

/// What an action would do to a seat, in words (for the `--confirm` refusal).
pub fn describe(action: &str, seat: &Seat, fleet: &Fleet) -> String {
    // What is described is printed and carried in errors: never a secret of the seat's.
    let seat = &seat.redacted();
    let target = match &seat.launch {
        // As the process is started: `{port}`, `{seat}` and `{cache}` filled in.
        crate::fleet::launch::Launch::Process(p) => {
            let args: Vec<String> = p
                .args
                .iter()
                .map(|a| crate::fleet::substitute(a, seat))
                .collect();
            format!(
                "process {} {}",
                crate::fleet::substitute(&p.command, seat),
                args.join(" ")
            )
        }
        crate::fleet::launch::Launch::Docker(d) => format!(
            "container {} (image {})",
            seat.container_name().unwrap_or_default(),
            d.image
        ),
    };
    format!(
        "{action} seat {} [{target}] on {}",
        seat.name,
        fleet.seat_url(seat)
    )
}

impl Seats {
    /// `<out>/<seat>.failure.json` for a seat's first failure there, `<seat>.<run_id>.failure.json`
    /// for every later one: a failure never replaces an earlier one.
    pub fn write_failure(&self, seat: &Seat, r: &WatchReport) -> Result<PathBuf, OpsError> {
        write_failure_artifact(&self.fleet, &self.out_dir, seat, r).map_err(OpsError::Artifact)
    }

    pub fn new(fleet: Fleet, out_dir: PathBuf, watch: WatchOptions) -> Self {
        Self {
            fleet,
            out_dir,
            watch,
            placement: None,
            warm_cache: false,
        }
    }

    /// Read every weight file once before each start (`seat up --warm-cache`), so a load time
    /// measures the engine, not the disk.
    pub fn with_warm_cache(mut self, warm: bool) -> Self {
        self.warm_cache = warm;
        self
    }

    /// With the memory check before every start ([`PlacementCheck`]).
    pub fn with_placement(mut self, check: PlacementCheck) -> Self {
        self.placement = Some(check);
        self
    }

    pub fn seat(&self, name: &str) -> Result<&Seat, OpsError> {
        Ok(self.fleet.require(name)?)
    }

    /// The fail-closed gate: a production seat needs `confirm`.
    pub fn gate(&self, seat: &Seat, action: &str, confirm: bool) -> Result<(), OpsError> {
        if seat.role == Role::Production && !confirm {
            return Err(OpsError::NeedsConfirm {
                seat: seat.name.clone(),
                would: describe(action, seat, &self.fleet),
            });
        }
        Ok(())
    }

    pub async fn backend(&self, seat: &Seat) -> Result<Backend, OpsError> {
        Ok(Backend::for_seat(&self.fleet, seat).await?)
    }

    pub async fn status_of(&self, seat: &Seat) -> Status {
        match self.backend(seat).await {
            Ok(mut b) => b.status().await,
            // The backend could not be reached: its state is unknown, not "down".
            Err(e) => Status::unknown(e.to_string()),
        }
    }

    /// Bring one seat up and watch it to ready. A dormant seat is only created, unless
    /// `start_dormant` (a swap or an explicit rollback starts it).
    pub async fn up(
        &self,
        name: &str,
        confirm: bool,
        start_dormant: bool,
    ) -> Result<UpOutcome, OpsError> {
        let seat = self.seat(name)?.clone();
        self.gate(&seat, "start", confirm)?;
        let t0 = Instant::now();
        let mut backend = self.backend(&seat).await?;
        if seat.role == Role::Dormant && !start_dormant {
            backend.create().await?;
            return Ok(UpOutcome {
                seat: seat.name.clone(),
                report: None,
                failure_path: None,
                created_only: true,
                already_up: false,
                elapsed_ms: t0.elapsed().as_millis() as u64,
                page_cache: None,
                conditions: None,
            });
        }
        self.start_and_watch(&seat, &mut backend, t0, Checks::Run)
            .await
    }

    /// The tail of `up`, `restart`, `swap` and a swap's rollback: a seat already up is watched
    /// to ready; otherwise it is started and watched. `checks`: first run the port check and
    /// the pre-start hooks (`up` and a rollback; `restart` and `swap` ran theirs before they
    /// stopped anything). A start the engine API refused is a failed outcome, not an `Err`.
    async fn start_and_watch(
        &self,
        seat: &Seat,
        backend: &mut Backend,
        t0: Instant,
        checks: Checks,
    ) -> Result<UpOutcome, OpsError> {
        if backend.status().await.observed.is_up() {
            // Already up: watch it anyway, so `up` still means "ready", and say so; the checks
            // after ready run too (a seat started by hand may serve another template).
            let mut report = self.watch_backend(seat, backend).await;
            if report.ready() {
                let url = self.fleet.seat_url(seat);
                report
                    .findings
                    .extend(hooks::after_ready(&self.fleet, seat, &url).await);
            }
            let mut o = self.finish(seat, report, t0, None, None).await?;
            o.already_up = true;
            return Ok(o);
        }
        let pre = match checks {
            Checks::Run => {
                self.port_check(seat).await?;
                hooks::before_start(&self.fleet, seat)
                    .await
                    .map_err(OpsError::PreStart)?
            }
            Checks::Done(findings) => findings,
        };
        // The weights' page-cache state, the last thing before the start (after the checks,
        // which may read the model file's header themselves).
        let (s, warm) = (seat.clone(), self.warm_cache);
        let before = tokio::task::spawn_blocking(move || page_cache::Before::take(&s, warm))
            .await
            .ok();
        // The host's conditions over the load, from before the start command (so a drop of the
        // page cache during the load is seen against the cache as it was), the engine left out
        // once it is spawned.
        let sampler = load_conditions::start(seat).await;
        if let Err(e) = backend.start().await {
            // A start the engine API refused (Docker: port already allocated, no such image)
            // is still a classified failure with an artifact.
            let mut report = start_failure_report(&e);
            report.findings.splice(0..0, pre);
            let pc = before.map(page_cache::Before::after);
            let conditions = load_conditions::finish(sampler).await;
            return self.finish(seat, report, t0, pc, conditions).await;
        }
        if let Some(s) = &sampler {
            load_conditions::exclude_engine(s, backend).await;
        }
        let mut report = self.watch_backend(seat, backend).await;
        let conditions = load_conditions::finish(sampler).await;
        let pc = before.map(page_cache::Before::after);
        report.findings.splice(0..0, pre);
        if report.ready() {
            let url = self.fleet.seat_url(seat);
            report
                .findings
                .extend(hooks::after_ready(&self.fleet, seat, &url).await);
        }
        self.finish(seat, report, t0, pc, conditions).await
    }

    async fn watch_backend(&self, seat: &Seat, backend: &mut Backend) -> WatchReport {
        let listen_port = match &seat.launch {
            crate::fleet::launch::Launch::Docker(d) => d.container_port.unwrap_or(seat.port),
            crate::fleet::launch::Launch::Process(_) => seat.port,
        };
        watchdog::drive::watch_with_disk(
            backend,
            &self.fleet.seat_url(seat),
            watchdog::ProbeTarget {
                model: seat.served_model_names.first().cloned(),
                listen_port: Some(listen_port),
                api_key: seat.api_key(),
                api_key_env: seat.api_key_env.clone(),
                tls: seat.tls_options(),
            },
            watchdog::disk::plan(seat),
            &self.watch,
        )
        .await
    }

    /// Watch a seat that is already starting (the standalone `watch`).
    pub async fn watch_seat(&self, name: &str) -> Result<UpOutcome, OpsError> {
        let seat = self.seat(name)?.clone();
        let t0 = Instant::now();
        let mut backend = self.backend(&seat).await?;
        let report = self.watch_backend(&seat, &mut backend).await;
        self.finish(&seat, report, t0, None, None).await
    }

    async fn finish(
        &self,
        seat: &Seat,
        report: WatchReport,
        t0: Instant,
        page_cache: Option<bakeoff_artifact::SeatPageCache>,
        conditions: Option<bakeoff_artifact::Conditions>,
    ) -> Result<UpOutcome, OpsError> {
        let failure_path = if report.ready() {
            None
        } else {
            Some(self.write_failure(seat, &report)?)
        };
        // Every watched start leaves its record, after the failure artifact (which is never
        // lost to it); a record that cannot be written is said, and fails nothing.
        let mut report = report;
        if let Err(e) = self.write_start_record(
            seat,
            &report,
            failure_path.as_deref(),
            page_cache.clone(),
            conditions.clone(),
        ) {
            report.notes.push(e.to_string());
        }
        Ok(UpOutcome {
            seat: seat.name.clone(),
            report: Some(report),
            failure_path,
            created_only: false,
            already_up: false,
            elapsed_ms: t0.elapsed().as_millis() as u64,
            page_cache,
            conditions,
        })
    }

    /// Stop a seat, escalating when it ignores the polite stop, and say what was freed (the
    /// port, the GPU memory) and what outlived it (a zombie loader, recorded for `up`). A
    /// dormant seat's container is kept (created, stopped); others are removed.
    pub async fn down(
        &self,
        name: &str,
        confirm: bool,
    ) -> Result<crate::release::StopReport, OpsError> {
        let seat = self.seat(name)?.clone();
        self.gate(&seat, "stop", confirm)?;
        let mut backend = self.backend(&seat).await?;
        let mut report = backend.stop(seat.role == Role::Dormant).await?;
        // A process seat's backend recorded its survivors already; a Docker seat's are
        // recorded here, where the state directory is known.
        if matches!(backend, Backend::Docker(_)) {
            crate::release::persist(&self.fleet.state_dir, &mut report);
        }
        Ok(report)
    }

    pub async fn restart(&self, name: &str, confirm: bool) -> Result<UpOutcome, OpsError> {
        let seat = self.seat(name)?.clone();
        self.gate(&seat, "restart", confirm)?;
        // What can refuse the start is checked while the seat still serves, as `swap` does: a
        // fleet file edited since the seat started (a new `--quantization`, another model) must
        // not take a serving seat down and then fail to bring it back. The port check cannot
        // run here: the seat itself holds its port until it stops.
        let pre = hooks::before_start(&self.fleet, &seat)
            .await
            .map_err(OpsError::PreStart)?;
        let t0 = Instant::now();
        let mut backend = self.backend(&seat).await?;
        backend.stop(true).await?;
        self.port_check(&seat).await?;
        self.start_and_watch(&seat, &mut backend, t0, Checks::Done(pre))
            .await
    }

    /// Stop OLD, start NEW, wait for ready; when NEW fails, stop it and bring OLD back.
    ///
    /// Everything that could refuse NEW is checked while OLD still serves: an `Err` from this
    /// function means OLD was not touched. Once OLD is stopped, every error becomes a failed
    /// outcome and the rollback runs; the rollback's own outcome is reported as it happened.
    pub async fn swap(&self, old: &str, new: &str, confirm: bool) -> Result<SwapOutcome, OpsError> {
        let old_seat = self.seat(old)?.clone();
        let new_seat = self.seat(new)?.clone();
        if old_seat.name == new_seat.name {
            return Err(OpsError::SameSeat(old_seat.name));
        }
        self.gate(&old_seat, "stop (swap out)", confirm)?;
        self.gate(&new_seat, "start (swap in)", confirm)?;
        let mut old_backend = self.backend(&old_seat).await?;
        // NEW's backend must be reachable, no third seat may hold the port and the pre-start
        // hooks must pass — before OLD stops serving.
        let mut new_backend = self.backend(&new_seat).await?;
        self.port_check_except(&new_seat, Some(&old_seat.name))
            .await?;
        let pre = hooks::before_start(&self.fleet, &new_seat)
            .await
            .map_err(OpsError::PreStart)?;
        // Keep OLD created: it is the rollback. Whether it was up is reported: a swap from a
        // seat that was not running says so rather than claiming to have stopped it.
        let old_was_running = old_backend.status().await.observed.is_up();
        old_backend.stop(true).await?;
        let t0 = Instant::now();
        let new_outcome = match self
            .start_and_watch(&new_seat, &mut new_backend, t0, Checks::Done(pre))
            .await
        {
            Ok(o) => o,
            Err(e) => self.failed_outcome(&new_seat, &e.to_string()),
        };
        if new_outcome.ok() {
            return Ok(SwapOutcome {
                old: old.into(),
                new: new.into(),
                new_outcome,
                old_was_running,
                new_stop_error: None,
                rollback: None,
            });
        }
        let new_stop_error = new_backend
            .stop(new_seat.role == Role::Dormant)
            .await
            .err()
            .map(|e| e.to_string());
        // OLD's own checks run again: its fleet entry may have changed since it started.
        let t0 = Instant::now();
        let rollback = match self
            .start_and_watch(&old_seat, &mut old_backend, t0, Checks::Run)
            .await
        {
            Ok(o) => o,
            Err(e) => self.failed_outcome(&old_seat, &e.to_string()),
        };
        Ok(SwapOutcome {
            old: old.into(),
            new: new.into(),
            new_outcome,
            old_was_running,
            new_stop_error,
            rollback: Some(rollback),
        })
    }

    /// An operation error turned into a failed outcome with its artifact. It cannot fail: a
    /// swap never returns early once OLD is stopped, so a failure file that cannot be written
    /// is noted in the outcome (no `failure_path`) and the rollback still runs.
    fn failed_outcome(&self, seat: &Seat, message: &str) -> UpOutcome {
        let mut report = error_report(message);
        let failure_path = match self.write_failure(seat, &report) {
            Ok(p) => Some(p),
            Err(e) => {
                report.notes.push(e.to_string());
                None
            }
        };
        UpOutcome {
            seat: seat.name.clone(),
            report: Some(report),
            failure_path,
            created_only: false,
            already_up: false,
            elapsed_ms: 0,
            page_cache: None,
            conditions: None,
        }
    }

    pub async fn logs(&self, name: &str, n: usize) -> Result<Vec<String>, OpsError> {
        let seat = self.seat(name)?.clone();
        let mut backend = self.backend(&seat).await?;
        let lines = backend.tail(n).await;
        if lines.is_empty() && backend.status().await.observed == Observed::Missing {
            return Err(OpsError::NoLog(seat.name));
        }
        Ok(lines)
    }
}
