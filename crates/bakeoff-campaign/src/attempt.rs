//! One attempt at one variant: the checks, the bench window, the start and watch, the
//! measurement in-process, then — whatever happened — the seat stopped and the displaced seats
//! restored before the row is final.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bakeoff_artifact::FailureClass;
use bakeoff_artifact::campaign::{Outcome, OutcomeKind, VariantRow};
use bakeoff_measure::ceiling::CeilingEvent;
use bakeoff_seats::{OpsError, Seats, UpOutcome};
use chrono::Utc;
use tokio::sync::{mpsc, watch};

use crate::candidate::Window;
use crate::error::CampaignError;
use crate::file::Campaign;
use crate::journal::{Entry, Journal};
use crate::options::RunOptions;
use crate::progress::{Reporter, forward_events};
use crate::record::{self, relative, start_row};
use crate::variant::{Variant, fleet_with};
use crate::window::{self, NotOpened};

/// One variant's run.
pub(crate) struct VariantRun<'a> {
    pub(crate) c: &'a Campaign,
    pub(crate) opts: &'a RunOptions,
    pub(crate) journal: &'a mut Journal,
    pub(crate) report: &'a Reporter,
    pub(crate) stop: &'a mut watch::Receiver<bool>,
    /// A tuning trial: measure the ready seat with this bench sweep instead of the suites.
    pub(crate) bench: Option<&'a bakeoff_load::LoadPlan>,
}

impl VariantRun<'_> {
    pub(crate) async fn run(
        &mut self,
        v: &Variant,
        t_campaign: Instant,
    ) -> Result<VariantRow, CampaignError> {
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
        let window = self
            .c
            .candidate(&v.candidate)
            .and_then(|c| c.window.clone());
        self.report.phase(&v.slug, "checking");
        let staying = match self.pre_start(seats, v, window.as_ref()).await {
            Ok(staying) => staying,
            Err(skipped) => return Ok(skipped),
        };
        if let Err(no_fit) = self.check_fit(seats, v, &staying, row).await {
            return Ok(no_fit);
        }
        if let Some(w) = &window
            && let Err(not_opened) = self.open_window(seats, v, w, row).await?
        {
            return Ok(not_opened);
        }
        let up = match self.start_seat(seats, v, row).await? {
            Ok(up) => up,
            Err(not_ready) => return Ok(not_ready),
        };
        self.measure_seat(seats, v, row, &up).await
    }

    /// The checks before a start: the hooks, the engine's own flags, and the port. `Ok`: the
    /// seats that stay up beside the candidate (for the memory check); `Err`: the variant is
    /// skipped.
    async fn pre_start(
        &self,
        seats: &Seats,
        v: &Variant,
        window: Option<&Window>,
    ) -> Result<Vec<String>, Outcome> {
        let displaces: Vec<String> = window.iter().flat_map(|w| w.displaces.clone()).collect();
        if let Err(why) = bakeoff_seats::hooks::before_start(&seats.fleet, &v.seat).await {
            return Err(Outcome::skipped("pre-start", why.to_string()));
        }
        // A flag the engine's own --help does not list: said before the start, not learned
        // from a bad-argument exit (crate::engine_help).
        if let Some(why) = crate::engine_help::unknown_flags(&self.c.fleet, v).await {
            return Err(Outcome::skipped("pre-start", why));
        }
        let mut staying = Vec::new();
        for s in &self.c.fleet.seats {
            if displaces.contains(&s.name) {
                continue;
            }
            if seats.status_of(s).await.observed.is_up() {
                if s.host == v.seat.host && s.port == v.seat.port {
                    return Err(Outcome::skipped(
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
        Ok(staying)
    }

    /// The memory check beside the seats that stay up, recorded on the row; `Err`: it does not
    /// fit.
    async fn check_fit(
        &self,
        seats: &Seats,
        v: &Variant,
        staying: &[String],
        row: &mut VariantRow,
    ) -> Result<(), Outcome> {
        let fit = crate::fits::check(
            &seats.fleet,
            &v.slug,
            staying,
            &crate::fleet_view::ViewOptions {
                gpu_memory_gib: self.c.gpu_memory_gib,
                ..Default::default()
            },
            self.c.margin_gib,
            &self.opts.nvidia_smi,
        )
        .await;
        let no_fit = fit.answer == "no";
        let verdict = fit.lines.last().cloned().unwrap_or_default();
        row.fit = Some(fit);
        if no_fit {
            return Err(Outcome::of(OutcomeKind::DoesNotFit, verdict));
        }
        Ok(())
    }

    /// The bench window: the displaced seats idle, then stopped. The inner `Err`: the variant is
    /// skipped or interrupted.
    async fn open_window(
        &mut self,
        seats: &Seats,
        v: &Variant,
        w: &Window,
        row: &mut VariantRow,
    ) -> Result<Result<(), Outcome>, CampaignError> {
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
        Ok(match opened {
            Ok(()) => Ok(()),
            Err(NotOpened::Skip(reason, message)) => Err(Outcome::skipped(reason, message)),
            Err(NotOpened::Stopped) => Err(interrupted("while waiting for idle")),
        })
    }

    /// Start the seat through the watchdog, journaled first, and record the start on the row.
    /// The inner `Err`: it did not come up ready (skipped, failed with a class, interrupted).
    async fn start_seat(
        &mut self,
        seats: &Seats,
        v: &Variant,
        row: &mut VariantRow,
    ) -> Result<Result<UpOutcome, Outcome>, CampaignError> {
        self.journal.append(Entry::SeatStarting {
            at: Utc::now(),
            variant: v.slug.clone(),
            seat: Box::new(v.seat.redacted()),
        })?;
        self.report.phase(&v.slug, "starting");
        let up = tokio::select! {
            r = seats.up(&v.slug, true, false) => r,
            _ = self.stop.changed() => return Ok(Err(interrupted("while the seat was starting"))),
        };
        let up = match up {
            Ok(o) => o,
            Err(OpsError::PortTaken { other, port, .. }) => {
                return Ok(Err(Outcome::skipped(
                    "port-taken",
                    format!("seat {other} holds port {port}"),
                )));
            }
            Err(OpsError::PreStart(why)) => {
                return Ok(Err(Outcome::skipped("pre-start", why.to_string())));
            }
            Err(e) => return Ok(Err(Outcome::skipped("backend", e.to_string()))),
        };
        row.timings.start_ms = Some(up.elapsed_ms);
        row.conditions = record::conditions(up.conditions.as_ref(), None);
        if let Some(p) = &up.failure_path {
            row.artifacts.push(relative(&self.c.out, p));
        }
        if !up.report.as_ref().is_some_and(|r| r.ready()) {
            let r = up.report.as_ref();
            if let Some(r) = r {
                row.log_lines = notable_lines(r);
            }
            return Ok(Err(Outcome::failed(
                r.and_then(|r| r.class).unwrap_or(FailureClass::Exited),
                r.map(|r| r.message.clone()).unwrap_or_default(),
            )));
        }
        Ok(Ok(up))
    }

    /// The suites against the ready seat, their artifact and scores recorded on the row.
    async fn measure_seat(
        &mut self,
        seats: &Seats,
        v: &Variant,
        row: &mut VariantRow,
        up: &UpOutcome,
    ) -> Result<Outcome, CampaignError> {
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
        if let Some(plan) = self.bench {
            let https = url.root_path("").scheme() == "https";
            let mut plan = plan.clone();
            plan.ceiling = self.ceiling(v, https).await;
            let benched = crate::tune::bench(self.c, v, url, &plan, self.stop).await;
            row.timings.suites_ms = Some(t.elapsed().as_millis() as u64);
            return match benched {
                Ok((art, path)) => {
                    row.artifacts.push(relative(&self.c.out, &path));
                    row.conditions = record::conditions(up.conditions.as_ref(), Some(&art));
                    if let Some(trial) = row.trial.as_mut() {
                        trial.value = crate::tune::objective_value(&art, &trial.objective);
                    }
                    Ok(if bakeoff_measure::bench::measured_all(&art) {
                        Outcome::of(OutcomeKind::Completed, "")
                    } else {
                        Outcome::of(
                            OutcomeKind::Invalid,
                            "the trial's bench did not measure every step",
                        )
                    })
                }
                Err(e) => Ok(Outcome::of(OutcomeKind::Invalid, e)),
            };
        }
        let measured = self.measure(url, v).await;
        row.timings.suites_ms = Some(t.elapsed().as_millis() as u64);
        let (art, path) = match measured {
            Ok(x) => x,
            Err(bakeoff_measure::evaluate::EvalError::InterruptedInPreflight) => {
                return Ok(interrupted("during the preflight"));
            }
            Err(bakeoff_measure::evaluate::EvalError::Store(e)) => return Err(e.into()),
        };
        row.artifacts.push(relative(&self.c.out, &path));
        row.conditions = record::conditions(up.conditions.as_ref(), Some(&art));
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

    /// The harness ceiling for this variant's tuning trial (measured once per run, see
    /// [`bakeoff_measure::ceiling::Ceilings`]). One that cannot be measured is said, and the
    /// trial's steps go unchecked against it, as `bench run --no-calibrate` leaves them.
    async fn ceiling(&self, v: &Variant, https: bool) -> Option<bakeoff_artifact::HarnessCeiling> {
        let on = |e: CeilingEvent| ceiling_event(self.report, &v.slug, e);
        self.opts.ceilings.get(https, &on).await.ok()
    }

    /// `eval run` against the variant's seat, in-process, into the campaign's directory.
    async fn measure(
        &mut self,
        url: bakeoff_client::EndpointUrl,
        v: &Variant,
    ) -> Result<(bakeoff_artifact::Artifact, PathBuf), bakeoff_measure::evaluate::EvalError> {
        // The seat's own key and TLS trust, as its probes use them: a keyed or `https://`
        // candidate is measured, not refused by the suites' first request. Its CA was checked
        // at parse; one unreadable since leaves the system's roots (stricter, never weaker),
        // and the preflight's refusal names the certificate.
        let tls = bakeoff_client::tls::Tls::new(&v.seat.tls_options()).unwrap_or_default();
        let client = bakeoff_client::Client::new(
            url,
            bakeoff_client::ClientOptions {
                api_key: v.seat.api_key(),
                tls,
                ..Default::default()
            },
        );
        let preflight = bakeoff_client::preflight::PreflightOptions {
            model: v.seat.served_model_names.first().cloned(),
            max_model_len: None,
            ready_timeout: Duration::from_secs(60),
            probe_tools: self.c.suites.contains(&bakeoff_suites::SuiteName::Tool),
        };
        let mut options = self.opts.suite_options.clone();
        options.limit = self.c.limit.map(|l| l as usize);
        options.context.seed = bakeoff_suites::context::fresh_seed(&v.slug);
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
        let run_record = bakeoff_artifact::RunRecord {
            campaign: Some(self.c.name.clone()),
            variant: Some(v.slug.clone()),
            candidate: Some(v.candidate.clone()),
            suites: Some(self.c.suites.iter().map(|s| s.as_str().into()).collect()),
            limit: Some(self.c.limit.map(u64::from)),
            delta: Some(v.delta.clone()),
            seed: Some(Some(options.context.seed)),
            ..Default::default()
        };
        // The ceiling's events reach the campaign's progress; the suites' do not (a campaign
        // shows phases, not items).
        let slug = v.slug.clone();
        let report = self.report.clone();
        let progress: bakeoff_suites::EvalHook = std::sync::Arc::new(move |e| {
            if let bakeoff_suites::EvalEvent::Ceiling(c) = e {
                ceiling_event(&report, &slug, c);
            }
        });
        let req = bakeoff_measure::evaluate::EvalRequest {
            client: &client,
            preflight: &preflight,
            suites: &self.c.suites,
            options: &options,
            ceilings: Some(&self.opts.ceilings),
            output: bakeoff_measure::Output {
                naming: bakeoff_measure::Naming {
                    slug: Some(v.slug.clone()),
                    hardware: None,
                    notes,
                },
                slug_suffix: "",
                out: &self.c.out,
                replace: false,
                run_record,
            },
            progress: Some(progress),
        };
        let e = bakeoff_measure::evaluate::evaluate(req, self.stop).await?;
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
                Ok(r) => {
                    // A zombie loader or a held port is the next variant's problem: say so.
                    if !r.ok() {
                        row.notes
                            .push(format!("the stop left something behind: {}", r.summary()));
                    }
                    String::new()
                }
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
    let said = without_usage_text(&r.tail);
    for l in said.iter().rev().take(5).rev() {
        if !out.contains(l) {
            out.push((*l).clone());
        }
    }
    out
}

/// The tail without the engine's usage text, which says nothing about this failure: what
/// llama-server prints after a rejected argument (`usage:`, the flag's help lines, indented
/// continuations, `to show complete usage, run with -h`: llama.cpp b11434 common/arg.cpp
/// common_params_parse_ex) and argparse's `usage: vllm serve [-h] …` block with its indented
/// continuation lines (CPython Lib/argparse.py print_usage). The error line itself stays.
fn without_usage_text(tail: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut in_usage = false;
    for l in tail {
        let t = l.trim_start();
        if t.is_empty() {
            // Never notable; inside a usage block it does not end it.
            continue;
        }
        if t.to_ascii_lowercase().starts_with("usage:") {
            in_usage = true;
            continue;
        }
        if t.contains("to show complete usage, run with -h") {
            continue;
        }
        if in_usage && (t.starts_with('-') || t.starts_with('[') || t.len() < l.len()) {
            continue;
        }
        in_usage = false;
        out.push(l);
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

/// The ceiling's events as the campaign's progress: a phase while it is measured, a note when
/// it cannot be.
fn ceiling_event(report: &Reporter, slug: &str, e: CeilingEvent) {
    match e {
        CeilingEvent::Started { .. } => {
            report.phase(slug, "the harness ceiling (measured once per run)")
        }
        CeilingEvent::Unmeasured { https, error } => {
            report.emit(crate::progress::Progress::Note(format!(
                "{slug}: {}",
                bakeoff_measure::ceiling::unmeasured(https, &error)
            )))
        }
        CeilingEvent::Measured(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What llama-server b11434 prints for `--cache-type-k q9_9` (measured here, the tail
    /// as the seat's log holds it): the error line is notable, the usage text is not.
    #[test]
    fn usage_text_is_no_notable_line() {
        let tail: Vec<String> = [
            "build: 11434 (pypi-sdist) with cc for x86_64-linux-gnu",
            "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9",
            "",
            "usage:",
            "-ctk,  --cache-type-k TYPE              KV cache data type for K",
            "                                        allowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1",
            "                                        (default: f16)",
            "                                        (env: LLAMA_ARG_CACHE_TYPE_K)",
            "",
            "",
            "to show complete usage, run with -h",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let kept: Vec<&str> = without_usage_text(&tail)
            .into_iter()
            .map(String::as_str)
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(
            kept,
            [
                "build: 11434 (pypi-sdist) with cc for x86_64-linux-gnu",
                "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9",
            ]
        );
        // argparse: usage first, the error last.
        let tail: Vec<String> = [
            "usage: vllm serve [-h] [--model MODEL]",
            "                  [--load-format {auto,pt}]",
            "vllm serve: error: argument --load-format: invalid choice: 'x'",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(without_usage_text(&tail), [&tail[2]],);
    }
}
