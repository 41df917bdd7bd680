//! The campaign's driver: recovery first, then each variant in order — checks, bench window,
//! start and watch, measure in-process, stop, restore — every step journaled before the next.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bakeoff_artifact::FailureClass;
use bakeoff_artifact::campaign::{CampaignRecord, Outcome, OutcomeKind, VariantRow};
use bakeoff_seats::watchdog::Event;
use bakeoff_seats::{OpsError, Seats, WatchOptions};
use chrono::Utc;
use tokio::sync::{mpsc, watch};

use crate::error::CampaignError;
use crate::file::Campaign;
use crate::journal::{Entry, JOURNAL, Journal};
use crate::record::{self, pending_row, relative};
use crate::variant::{Variant, fleet_with};
use crate::window::{self, NotOpened};

/// What `campaign run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Displaced production seats may be stopped.
    pub confirm: bool,
    /// Start over: the old files move under `previous-<time>/` first.
    pub fresh: bool,
    /// Only these candidates or variants (empty: all).
    pub only: Vec<String>,
    pub watch: WatchOptions,
    /// The suites' options (thinking, …); the campaign sets `limit` and the context seed.
    pub suite_options: bakeoff_suites::SuiteOptions,
    /// `nvidia-smi` for the memory check's GPU readings.
    pub nvidia_smi: String,
}

/// One progress report.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// A variant begins.
    Variant {
        index: u32,
        total: u32,
        variant: String,
    },
    /// A phase of the variant in flight (`starting`, `loading 40 %, ~12 s left`, …).
    Phase { variant: String, text: String },
    /// A variant's outcome.
    Done { variant: String, outcome: String },
    /// Something the operator must read (a failed restore).
    Note(String),
}

/// Where progress goes: the binary draws it; tests collect or drop it.
#[derive(Clone)]
pub struct Reporter {
    f: std::sync::Arc<dyn Fn(Progress) + Send + Sync>,
}

impl Reporter {
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        Self {
            f: std::sync::Arc::new(f),
        }
    }

    pub fn silent() -> Self {
        Self::new(|_| {})
    }

    pub fn emit(&self, p: Progress) {
        (self.f)(p)
    }

    pub fn phase(&self, variant: &str, text: &str) {
        self.emit(Progress::Phase {
            variant: variant.to_string(),
            text: text.to_string(),
        })
    }

    pub fn note(&self, text: &str) {
        self.emit(Progress::Note(text.to_string()))
    }
}

/// How a `campaign run` ended.
#[derive(Debug)]
pub struct Summary {
    pub record: CampaignRecord,
    /// Stopped by Ctrl-C / SIGTERM.
    pub interrupted: bool,
    /// A displaced seat could not be brought back: the operator must act.
    pub restore_failed: bool,
    /// What the recovery of an earlier run did.
    pub recovered: Vec<String>,
}

/// Run the campaign (resuming from its journal), or refuse before touching anything.
pub async fn run(
    c: &Campaign,
    opts: &RunOptions,
    mut stop: watch::Receiver<bool>,
    report: &Reporter,
) -> Result<Summary, CampaignError> {
    let production = c.displaced_production();
    if !production.is_empty() && !opts.confirm {
        return Err(CampaignError::NeedsConfirm {
            seats: production.join(", "),
        });
    }
    let selected = select(c, &opts.only)?;
    provision_if_needed(c, report).await?;
    let mut recovered = Vec::new();
    if opts.fresh && c.out.join(JOURNAL).exists() {
        recovered = recover(c, opts, report).await?;
        let moved = set_aside(&c.out)?;
        recovered.push(format!("old files moved to {}", moved.display()));
    }
    let mut journal = open_journal(c)?;
    recovered.extend(recover_with(c, opts, &mut journal, report).await?);
    journal.append(Entry::CampaignStarted {
        at: Utc::now(),
        name: c.name.clone(),
        file: absolute(&c.path).display().to_string(),
        pid: std::process::id(),
    })?;
    record::write(c, journal.state())?;

    let t_campaign = Instant::now();
    let total = c.variants.len() as u32;
    let mut interrupted = false;
    let mut restore_failed = false;
    for v in c.variants.iter().filter(|v| selected.contains(&v.slug)) {
        if journal
            .state()
            .rows
            .get(&v.slug)
            .is_some_and(|r| r.outcome.kind.is_final())
        {
            continue;
        }
        if *stop.borrow() {
            interrupted = true;
            break;
        }
        report.emit(Progress::Variant {
            index: v.index,
            total,
            variant: v.slug.clone(),
        });
        let row = if let Some(winner) = ladder_won(c, journal.state(), v) {
            let mut row = start_row(&journal, v, t_campaign);
            row.attempts = row.attempts.saturating_sub(1);
            row.set_outcome(Outcome::skipped(
                "ladder-stopped",
                format!("ladder_mode = \"first-success\": {winner} completed first"),
            ));
            row
        } else {
            let mut ctx = VariantRun {
                c,
                opts,
                journal: &mut journal,
                report,
                stop: &mut stop,
            };
            ctx.run(v, t_campaign).await?
        };
        restore_failed |= row.displaced.iter().any(|d| d.restored == Some(false));
        interrupted |= row.outcome.kind == OutcomeKind::Interrupted;
        report.emit(Progress::Done {
            variant: v.slug.clone(),
            outcome: row.outcome_label.clone(),
        });
        journal.append(Entry::VariantDone {
            at: Utc::now(),
            row: Box::new(row),
        })?;
        record::write(c, journal.state())?;
        if interrupted {
            break;
        }
    }
    let record = record::write(c, journal.state())?;
    Ok(Summary {
        record,
        interrupted,
        restore_failed,
        recovered,
    })
}

/// A seat command with `{cache}` runs the embedded default's engine or model: provision them
/// first (a no-op when cached), as `eval run` does for its local server.
async fn provision_if_needed(c: &Campaign, report: &Reporter) -> Result<(), CampaignError> {
    let uses_cache = c
        .variants
        .iter()
        .any(|v| serde_json::to_string(&v.seat.launch).is_ok_and(|s| s.contains("{cache}")));
    if !uses_cache {
        return Ok(());
    }
    let cache = bakeoff_local::cache_dir();
    if !bakeoff_local::LocalEngine::in_cache(&cache).is_present() {
        report.note(&format!(
            "provisioning the embedded default under {} (the pinned llama.cpp build and the test model; minutes, once)",
            cache.display()
        ));
    }
    bakeoff_local::provision(&cache)
        .await
        .map(|_| ())
        .map_err(|e| CampaignError::Provision {
            cache,
            message: e.to_string(),
        })
}

/// `campaign restore DIR`: only the recovery — stop what the campaign started, bring back what
/// it displaced, record the interrupted variant.
pub async fn restore(
    c: &Campaign,
    opts: &RunOptions,
    report: &Reporter,
) -> Result<Vec<String>, CampaignError> {
    if !c.out.join(JOURNAL).exists() {
        return Err(CampaignError::NoJournal { dir: c.out.clone() });
    }
    let actions = recover(c, opts, report).await?;
    Ok(actions)
}

async fn recover(
    c: &Campaign,
    opts: &RunOptions,
    report: &Reporter,
) -> Result<Vec<String>, CampaignError> {
    let mut journal = open_journal(c)?;
    let actions = recover_with(c, opts, &mut journal, report).await?;
    record::write(c, journal.state())?;
    Ok(actions)
}

fn open_journal(c: &Campaign) -> Result<Journal, CampaignError> {
    let journal = Journal::open(&c.out)?;
    if let Some(name) = &journal.state().name
        && *name != c.name
    {
        return Err(CampaignError::Invalid {
            path: journal.path().to_path_buf(),
            message: format!(
                "this directory holds campaign {name:?}, not {:?}; set another `out` in the campaign file",
                c.name
            ),
        });
    }
    Ok(journal)
}

/// Undo what a killed run left: stop the seats it started, restore the seats it displaced,
/// and record the variant it was running as `interrupted`.
async fn recover_with(
    c: &Campaign,
    opts: &RunOptions,
    journal: &mut Journal,
    report: &Reporter,
) -> Result<Vec<String>, CampaignError> {
    let state = journal.state().clone();
    let mut actions = Vec::new();
    if state.seats_up.is_empty() && state.displaced.is_empty() && state.open.is_none() {
        return Ok(actions);
    }
    let mut fleet = fleet_with(&c.fleet, &c.variants);
    for s in &state.seats_up {
        if fleet.seat(&s.name).is_none() {
            fleet.seats.push(s.clone());
        }
    }
    let seats = Seats::new(fleet, c.out.clone(), opts.watch.clone());
    for s in &state.seats_up {
        report.note(&format!(
            "recovery: stopping {} (started by an earlier run)",
            s.name
        ));
        let message = match seats.down(&s.name, true).await {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        };
        actions.push(if message.is_empty() {
            format!("stopped seat {} left up by an earlier run", s.name)
        } else {
            format!("could not stop seat {}: {message}", s.name)
        });
        journal.append(Entry::SeatStopped {
            at: Utc::now(),
            seat: s.name.clone(),
            message,
        })?;
    }
    for (seat, variant, stopped_at) in &state.displaced {
        let (ok, down_ms, message) =
            window::restore_one(&seats, seat, *stopped_at, variant, report).await;
        actions.push(if ok {
            format!(
                "restored displaced seat {seat} ({:.1} s down)",
                down_ms as f64 / 1000.0
            )
        } else {
            message.clone()
        });
        journal.append(Entry::Restored {
            at: Utc::now(),
            seat: seat.clone(),
            ok,
            down_ms: Some(down_ms),
            message,
        })?;
    }
    if let Some((slug, attempt, started)) = &state.open {
        let mut row = match c.variants.iter().find(|v| &v.slug == slug) {
            Some(v) => state
                .rows
                .get(slug)
                .cloned()
                .unwrap_or_else(|| pending_row(v)),
            None => state.rows.get(slug).cloned().unwrap_or_else(|| {
                let mut r = pending_row_unknown(slug);
                r.notes.push("no longer in the campaign file".into());
                r
            }),
        };
        row.attempts = *attempt;
        row.started_at = Some(*started);
        row.finished_at = Some(Utc::now());
        row.artifacts = artifacts_of(&c.out, slug);
        for (seat, variant, at) in &state.displaced {
            if variant == slug {
                row.displaced.retain(|d| &d.seat != seat);
                row.displaced
                    .push(bakeoff_artifact::campaign::Displacement {
                        seat: seat.clone(),
                        was_up: true,
                        idle_wait_ms: 0,
                        restored: Some(true),
                        down_ms: Some((Utc::now() - *at).num_milliseconds().max(0) as u64),
                        notes: vec!["restored by the recovery of an interrupted run".into()],
                    });
            }
        }
        row.set_outcome(Outcome::of(
            OutcomeKind::Interrupted,
            "the campaign stopped while this variant ran (killed or interrupted); its files are kept and it runs again",
        ));
        actions.push(format!("recorded variant {slug} as interrupted"));
        journal.append(Entry::VariantDone {
            at: Utc::now(),
            row: Box::new(row),
        })?;
    }
    Ok(actions)
}

fn pending_row_unknown(slug: &str) -> VariantRow {
    let mut row = VariantRow {
        candidate: String::new(),
        variant: slug.to_string(),
        index: 0,
        axes: vec![],
        delta: vec![],
        launch: String::new(),
        outcome: Outcome::pending(),
        outcome_label: String::new(),
        suggested_verdict: None,
        suites: vec![],
        artifacts: vec![],
        log: None,
        log_lines: vec![],
        displaced: vec![],
        fit: None,
        timings: Default::default(),
        attempts: 0,
        started_at: None,
        finished_at: None,
        notes: vec![],
    };
    row.set_outcome(Outcome::pending());
    row
}

/// Every artifact of a variant in the directory: `<slug>.bakeoff.json`, `<slug>.failure.json`
/// and later runs' `<slug>.<run_id>.*.json`.
fn artifacts_of(dir: &Path, slug: &str) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            let Some(rest) = n.strip_prefix(slug).and_then(|r| r.strip_prefix('.')) else {
                return false;
            };
            let kind = rest.ends_with("bakeoff.json") || rest.ends_with("failure.json");
            // `<slug>.bakeoff.json` or `<slug>.<run_id>.bakeoff.json`, never another variant
            // whose slug starts with this one.
            let parts = rest.split('.').count();
            kind && (parts == 2 || parts == 3)
        })
        .collect();
    out.sort();
    out
}

/// The variants `--only` selects: candidates or variants by name.
fn select(c: &Campaign, only: &[String]) -> Result<Vec<String>, CampaignError> {
    if only.is_empty() {
        return Ok(c.variants.iter().map(|v| v.slug.clone()).collect());
    }
    for name in only {
        if !c
            .variants
            .iter()
            .any(|v| &v.slug == name || &v.candidate == name)
        {
            return Err(CampaignError::UnknownOnly {
                name: name.clone(),
                known: c
                    .candidates
                    .iter()
                    .map(|c| c.name.as_str())
                    .chain(c.variants.iter().map(|v| v.slug.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    Ok(c.variants
        .iter()
        .filter(|v| only.iter().any(|n| *n == v.slug || *n == v.candidate))
        .map(|v| v.slug.clone())
        .collect())
}

/// A first-success ladder whose earlier variant completed: that variant's slug.
fn ladder_won(c: &Campaign, state: &crate::journal::State, v: &Variant) -> Option<String> {
    let cand = c.candidate(&v.candidate)?;
    if cand.ladder_mode != bakeoff_artifact::campaign::LadderMode::FirstSuccess {
        return None;
    }
    c.variants
        .iter()
        .filter(|o| o.candidate == v.candidate && o.index < v.index)
        .find(|o| {
            state
                .rows
                .get(&o.slug)
                .is_some_and(|r| r.outcome.kind == OutcomeKind::Completed)
        })
        .map(|o| o.slug.clone())
}

/// A variant's row as an attempt begins: its earlier row (artifacts of earlier attempts are
/// kept) or a fresh one.
fn start_row(journal: &Journal, v: &Variant, t_campaign: Instant) -> VariantRow {
    let state = journal.state();
    let mut row = state
        .rows
        .get(&v.slug)
        .cloned()
        .unwrap_or_else(|| pending_row(v));
    // The campaign file may have changed since: what runs now is what the row says.
    row.axes = v.axis_values();
    row.delta = v.delta.clone();
    row.launch = v.launch_line();
    row.index = v.index;
    row.attempts = state.attempts.get(&v.slug).copied().unwrap_or(0) + 1;
    row.started_at = Some(Utc::now());
    row.finished_at = None;
    row.displaced.clear();
    row.suites.clear();
    row.log_lines.clear();
    row.fit = None;
    row.timings = bakeoff_artifact::campaign::Timings {
        queued_ms: t_campaign.elapsed().as_millis() as u64,
        ..Default::default()
    };
    row
}

/// Move a directory's files under `previous-<time>/` (kept, never deleted).
fn set_aside(dir: &Path) -> Result<PathBuf, CampaignError> {
    let dest = dir.join(format!("previous-{}", bakeoff_artifact::run_id_now()));
    std::fs::create_dir_all(&dest).map_err(|e| CampaignError::io(&dest, e))?;
    for e in std::fs::read_dir(dir)
        .map_err(|e| CampaignError::io(dir, e))?
        .flatten()
    {
        let name = e.file_name();
        if name.to_string_lossy().starts_with("previous-") {
            continue;
        }
        let to = dest.join(&name);
        std::fs::rename(e.path(), &to).map_err(|err| CampaignError::io(&e.path(), err))?;
    }
    Ok(dest)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// One variant's run.
struct VariantRun<'a> {
    c: &'a Campaign,
    opts: &'a RunOptions,
    journal: &'a mut Journal,
    report: &'a Reporter,
    stop: &'a mut watch::Receiver<bool>,
}

impl VariantRun<'_> {
    async fn run(&mut self, v: &Variant, t_campaign: Instant) -> Result<VariantRow, CampaignError> {
        let t0 = Instant::now();
        let mut row = start_row(self.journal, v, t_campaign);
        self.journal.append(Entry::VariantStarted {
            at: Utc::now(),
            variant: v.slug.clone(),
            attempt: row.attempts,
        })?;
        let (tx, rx) = mpsc::unbounded_channel();
        let mut watch = self.opts.watch.clone();
        watch.events = Some(tx);
        let seats = Seats::new(fleet_with(&self.c.fleet, [v]), self.c.out.clone(), watch);
        let forward = forward_events(rx, v.slug.clone(), self.report);
        let outcome = self.attempt(&seats, v, &mut row).await;
        forward.abort();
        // Whatever happened, the variant's seat is down and displaced seats are back before the
        // row is final.
        self.finish(&seats, v, &mut row).await?;
        let outcome = outcome?;
        row.set_outcome(outcome);
        row.finished_at = Some(Utc::now());
        row.timings.total_ms = t0.elapsed().as_millis() as u64;
        Ok(row)
    }

    /// Checks, window, start, measure: the outcome. The seat may be left up (`finish` stops it).
    async fn attempt(
        &mut self,
        seats: &Seats,
        v: &Variant,
        row: &mut VariantRow,
    ) -> Result<Outcome, CampaignError> {
        let cand = self.c.candidate(&v.candidate);
        let window = cand.and_then(|c| c.window.clone());
        let displaces: Vec<String> = window.iter().flat_map(|w| w.displaces.clone()).collect();
        self.report.phase(&v.slug, "checking");
        if let Err(why) = bakeoff_seats::hooks::before_start(&seats.fleet, &v.seat) {
            return Ok(Outcome::skipped("pre-start", why));
        }
        let mut staying = Vec::new();
        for s in &self.c.fleet.seats {
            if displaces.contains(&s.name) {
                continue;
            }
            if seats.status_of(s).await.observed.is_up() {
                if s.host == v.seat.host && s.port == v.seat.port {
                    return Ok(Outcome::skipped(
                        "port-taken",
                        format!(
                            "seat {} is up on port {} of host {} and the candidate does not displace it (add it to [candidate.window] displaces)",
                            s.name, s.port, s.host
                        ),
                    ));
                }
                staying.push(s.name.clone());
            }
        }
        let fit = crate::fits::check(
            &seats.fleet,
            &v.slug,
            &staying,
            &crate::fleet_view::ViewOptions {
                gpu_memory_gib: self.c.gpu_memory_gib,
                ..Default::default()
            },
            self.c.margin_gib,
            &self.opts.nvidia_smi,
        );
        let no_fit = fit.answer == "no";
        let verdict = fit.lines.last().cloned().unwrap_or_default();
        row.fit = Some(fit);
        if no_fit {
            return Ok(Outcome::of(OutcomeKind::DoesNotFit, verdict));
        }
        if let Some(w) = &window {
            let t = Instant::now();
            let opened = window::open(
                seats,
                self.journal,
                &v.slug,
                w,
                self.stop,
                self.report,
                &mut row.displaced,
            )
            .await?;
            row.timings.idle_wait_ms = Some(t.elapsed().as_millis() as u64);
            match opened {
                Ok(()) => {}
                Err(NotOpened::Skip(reason, message)) => {
                    return Ok(Outcome::skipped(reason, message));
                }
                Err(NotOpened::Stopped) => return Ok(interrupted("while waiting for idle")),
            }
        }
        self.journal.append(Entry::SeatStarting {
            at: Utc::now(),
            variant: v.slug.clone(),
            seat: Box::new(v.seat.redacted()),
        })?;
        self.report.phase(&v.slug, "starting");
        let up = tokio::select! {
            r = seats.up(&v.slug, true, false) => r,
            _ = self.stop.changed() => return Ok(interrupted("while the seat was starting")),
        };
        let up = match up {
            Ok(o) => o,
            Err(OpsError::PortTaken { other, port, .. }) => {
                return Ok(Outcome::skipped(
                    "port-taken",
                    format!("seat {other} holds port {port}"),
                ));
            }
            Err(OpsError::PreStart(why)) => return Ok(Outcome::skipped("pre-start", why)),
            Err(e) => return Ok(Outcome::skipped("backend", e.to_string())),
        };
        row.timings.start_ms = Some(up.elapsed_ms);
        if let Some(p) = &up.failure_path {
            row.artifacts.push(relative(&self.c.out, p));
        }
        if !up.report.as_ref().is_some_and(|r| r.ready()) {
            let r = up.report.as_ref();
            if let Some(r) = r {
                row.log_lines = notable_lines(r);
            }
            return Ok(Outcome::failed(
                r.and_then(|r| r.class).unwrap_or(FailureClass::Exited),
                r.map(|r| r.message.clone()).unwrap_or_default(),
            ));
        }
        self.report.phase(&v.slug, "ready; measuring");
        let t = Instant::now();
        let url = match bakeoff_client::EndpointUrl::parse(&seats.fleet.seat_url(&v.seat)) {
            Ok(u) => u,
            Err(e) => {
                return Ok(Outcome::skipped(
                    "bad-address",
                    format!("the seat's URL: {e}"),
                ));
            }
        };
        let measured = self.measure(url, v).await;
        row.timings.suites_ms = Some(t.elapsed().as_millis() as u64);
        let (art, path) = match measured {
            Ok(x) => x,
            Err(bakeoff_suites::evaluate::EvalError::InterruptedInPreflight) => {
                return Ok(interrupted("during the preflight"));
            }
            Err(bakeoff_suites::evaluate::EvalError::Store(e)) => return Err(e.into()),
        };
        row.artifacts.push(relative(&self.c.out, &path));
        if *self.stop.borrow() {
            return Ok(interrupted(
                "during the suites (the incomplete artifact is kept)",
            ));
        }
        let requested: Vec<String> = self
            .c
            .suites
            .iter()
            .map(|s| s.as_str().to_string())
            .collect();
        let (scores, outcome) = record::measured(&art, &requested);
        row.suites = scores;
        Ok(outcome)
    }

    /// `eval run` against the variant's seat, in-process, into the campaign's directory.
    async fn measure(
        &mut self,
        url: bakeoff_client::EndpointUrl,
        v: &Variant,
    ) -> Result<(bakeoff_artifact::Artifact, PathBuf), bakeoff_suites::evaluate::EvalError> {
        let client = bakeoff_client::Client::new(url, bakeoff_client::ClientOptions::default());
        let preflight = bakeoff_client::preflight::PreflightOptions {
            model: v.seat.served_model_names.first().cloned(),
            max_model_len: None,
            ready_timeout: Duration::from_secs(60),
        };
        let mut options = self.opts.suite_options.clone();
        options.limit = self.c.limit.map(|l| l as usize);
        options.context.seed = fresh_seed(&v.slug);
        let mut notes = vec![format!(
            "campaign {} variant {} (candidate {}, base seat {}): {}",
            self.c.name,
            v.slug,
            v.candidate,
            v.base_seat,
            if v.delta.is_empty() {
                "the base configuration".to_string()
            } else {
                v.delta.join("; ")
            }
        )];
        if let Some(n) = self.c.candidate(&v.candidate).and_then(|c| c.note.clone()) {
            notes.push(n);
        }
        let naming = bakeoff_suites::evaluate::Naming {
            slug: Some(v.slug.clone()),
            hardware: None,
            notes,
        };
        let req = bakeoff_suites::evaluate::EvalRequest {
            client: &client,
            preflight: &preflight,
            suites: &self.c.suites,
            options: &options,
            naming: &naming,
            slug_suffix: "",
            out: &self.c.out,
            replace: false,
            run_record: serde_json::json!({
                "campaign": self.c.name,
                "variant": v.slug,
                "candidate": v.candidate,
                "suites": self.c.suites.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "limit": self.c.limit,
                "delta": v.delta,
                "seed": options.context.seed,
            }),
        };
        let e = bakeoff_suites::evaluate::evaluate(req, self.stop).await?;
        Ok((e.artifact, e.path))
    }

    /// Stop the variant's seat (if the journal says it was started) and restore what was
    /// displaced, whatever happened before.
    async fn finish(
        &mut self,
        seats: &Seats,
        v: &Variant,
        row: &mut VariantRow,
    ) -> Result<(), CampaignError> {
        if self
            .journal
            .state()
            .seats_up
            .iter()
            .any(|s| s.name == v.slug)
        {
            self.report.phase(&v.slug, "stopping");
            let t = Instant::now();
            keep_log(seats, v, &self.c.out, row).await;
            let message = match seats.down(&v.slug, true).await {
                Ok(()) => String::new(),
                Err(e) => {
                    row.notes.push(format!("stopping the seat failed: {e}"));
                    e.to_string()
                }
            };
            self.journal.append(Entry::SeatStopped {
                at: Utc::now(),
                seat: v.slug.clone(),
                message,
            })?;
            row.timings.stop_ms = Some(t.elapsed().as_millis() as u64);
        }
        window::restore(
            seats,
            self.journal,
            &v.slug,
            &mut row.displaced,
            self.report,
        )
        .await?;
        row.timings.production_down_ms = row.displaced.iter().filter_map(|d| d.down_ms).max();
        Ok(())
    }
}

fn interrupted(when: &str) -> Outcome {
    Outcome::of(
        OutcomeKind::Interrupted,
        format!("stopped by the operator {when}; the variant runs again on the next campaign run"),
    )
}

/// The root-cause line and the last lines before a failure.
fn notable_lines(r: &bakeoff_seats::WatchReport) -> Vec<String> {
    let mut out: Vec<String> = r.cause.iter().map(|c| c.line.clone()).collect();
    for l in r.tail.iter().rev().take(5).rev() {
        if !out.contains(l) {
            out.push(l.clone());
        }
    }
    out
}

/// The seat's log next to its artifacts (`<variant>.log`, or `<variant>.<attempt>.log` for a
/// later attempt), so the evidence outlives the seat's state directory.
async fn keep_log(seats: &Seats, v: &Variant, out: &Path, row: &mut VariantRow) {
    let lines = seats.logs(&v.slug, 5000).await.unwrap_or_default();
    if lines.is_empty() {
        return;
    }
    let name = if row.attempts <= 1 {
        format!("{}.log", v.slug)
    } else {
        format!("{}.attempt-{}.log", v.slug, row.attempts)
    };
    let path = out.join(&name);
    if path.exists() {
        return;
    }
    if std::fs::write(&path, lines.join("\n") + "\n").is_ok() {
        row.log = Some(name);
    }
}

/// Forward the watchdog's events as progress while a seat starts.
fn forward_events(
    mut rx: mpsc::UnboundedReceiver<Event>,
    variant: String,
    report: &Reporter,
) -> tokio::task::JoinHandle<()> {
    let report = report.clone();
    tokio::spawn(async move {
        while let Some(ev) = rx.recv().await {
            let text = match ev {
                Event::Phase(p) => p.state.clone(),
                Event::Note(n) => n,
                Event::Progress(r) => load_text(&r),
                Event::Decided(_) => continue,
            };
            report.phase(&variant, &text);
        }
    })
}

/// `loading 18/46 shards, ~61 s left` from a watchdog load reading.
fn load_text(r: &bakeoff_seats::progress::Reading) -> String {
    let mut t = String::from("loading");
    if let (Some(d), Some(n)) = (r.done, r.total) {
        t.push_str(&format!(" {d}/{n}"));
    } else if let Some(p) = r.percent {
        t.push_str(&format!(" {p:.0} %"));
    }
    if let Some(left) = r.remaining_s {
        t.push_str(&format!(", ~{left:.0} s left"));
    }
    t
}

/// A context-suite seed per variant attempt: a fresh prompt prefix, so no variant is helped by
/// a cache the previous one warmed.
fn fresh_seed(slug: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write(slug.as_bytes());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}
