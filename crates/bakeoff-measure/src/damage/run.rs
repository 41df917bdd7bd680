//! One `eval damage` measurement, as a library function: both preflights, the instrument check
//! (every prompt sent twice to the reference), then the candidate, journaled as items finish,
//! and the artifact `<slug>.bakeoff.json` with the `damage` suite (or a failure artifact).
//!
//! Every prompt gets ONE fresh prefix, shared by its three requests (reference run 1, reference
//! run 2, candidate): the self-check then compares the very text the candidate is measured on,
//! and no earlier request of this run — or of any run — shares a prefix with it. Each request
//! also carries its engine's no-prompt-cache fields under a salt of its own.

use std::time::Instant;

use bakeoff_artifact::failure_table::remediation;
use bakeoff_artifact::{
    Artifact, ArtifactKind, DamageReference, Failure, FailureClass, ItemRecord, Journal, RunFiles,
    RunStatus,
};
use bakeoff_client::Client;
use bakeoff_client::preflight::{PreflightOptions, PreflightOutcome, run_preflight};
use bakeoff_stats::SplitMix64;
use tokio::sync::watch;

use super::along::{AlongPhase, AlongRequest, measure_along};
use super::events::{DamageEvent, DamageHook, Phase, Side};
use super::failures::{endpoint_gap, first_errors, gap_failure, refusal_failure, unfit_failure};
use super::first_token::{FirstToken, FirstTokenError, TopK, first_token_request, unique_prefix};
use super::native::send_reading_native;
use super::record::{Tally, candidate_item, self_check_item, suite_result};
use super::{Prompt, SUITE};
use crate::Output;
use crate::evaluate::{EvalError, Evaluated, preflighted, write_run_artifact};
use bakeoff_suites::item_extra::ItemWrites;
use bakeoff_suites::progress::PreflightPhase;

/// What to measure and where to write it.
pub struct DamageRequest<'a> {
    pub candidate: &'a Client,
    pub reference: &'a Client,
    /// `--model` and the candidate's preflight budget.
    pub candidate_preflight: &'a PreflightOptions,
    /// `--reference-model` and the reference's.
    pub reference_preflight: &'a PreflightOptions,
    pub prompts: &'a [Prompt],
    pub top_k: u32,
    /// `--tokens`: the greedy replies' length along which damage is measured (0: first token
    /// only).
    pub tokens: u32,
    /// Seed of the prompts' unique prefixes (recorded in `artifact.run` by the caller).
    pub seed: u64,
    pub output: Output<'a>,
    pub progress: Option<DamageHook>,
}

/// The written artifact, and why no damage figure stands when none does.
pub struct DamageOutcome {
    pub evaluated: Evaluated,
    /// `Some(reason)` when no figure is reported (a failed self-check, a failure artifact, an
    /// interrupted run): the command exits 1 with it.
    pub withheld: Option<String>,
}

/// Preflight both endpoints, run the self-check, then the candidate; write the artifact. `stop`
/// flips on Ctrl-C: during the preflights the run ends with nothing written, afterwards it
/// stops after the request in flight and writes what finished (`incomplete`).
pub async fn evaluate_damage(
    req: DamageRequest<'_>,
    stop: &mut watch::Receiver<bool>,
) -> Result<DamageOutcome, EvalError> {
    let start = Instant::now();
    let emit = |e: DamageEvent| {
        if let Some(h) = &req.progress {
            h(e);
        }
    };
    let (cand_pre, ref_pre) = preflight_both(&req, stop, start, &emit).await?;
    let cand = req.output.candidate(req.candidate, &cand_pre);
    let mut files = req.output.claim(&cand.slug)?;
    let mut art = preflighted(ArtifactKind::Failure, cand, req.candidate, &cand_pre);
    art.run = req.output.run_record.clone();
    let reference = reference_record(req.reference, &ref_pre);
    art.run.reference = Some(reference.clone());
    if let Some(unfit) = &cand_pre.unfit {
        return fail(&mut files, art, unfit_failure(unfit, None, start));
    }
    if let Some(unfit) = &ref_pre.unfit {
        let url = req.reference.url().redacted();
        return fail(&mut files, art, unfit_failure(unfit, Some(&url), start));
    }

    let sampler = conditions_sampler(&req).await;
    let journal = ItemJournal {
        journal: files.open_journal()?,
        error: None,
    };
    let tally = Tally {
        reference,
        top_k: req.top_k,
        prompts: req.prompts.len(),
        items: Vec::new(),
        self_kls: Vec::new(),
        self_top1_differs: 0,
        measured: Vec::new(),
        interrupted: false,
        notes: model_notes(&art.candidate.model, &ref_pre),
        writes: ItemWrites::new(),
        along: None,
        along_items: 0,
        misses: Vec::new(),
        native_reads: Vec::new(),
    };
    let mut rng = SplitMix64::new(req.seed);
    let prefixes: Vec<String> = req
        .prompts
        .iter()
        .map(|_| unique_prefix(&mut rng))
        .collect();
    let mut m = Measurement {
        req: &req,
        sides: Sides {
            reference: (req.reference, engine_and_model(&ref_pre)),
            candidate: (req.candidate, engine_and_model(&cand_pre)),
            top_k: req.top_k,
        },
        prefixes,
        rng,
        journal,
        tally,
        emit: &emit,
        start,
    };

    let references = match m.self_check(stop).await {
        Ok(references) => references,
        Err(gap) => return fail(&mut files, art, gap),
    };
    let check = super::noise::self_check(&m.tally.self_kls, m.tally.self_top1_differs);
    if let Some(c) = &check {
        emit(DamageEvent::SelfCheck {
            passed: c.passed,
            high: c.kl.high,
        });
    }
    // Phase 2: the candidate, only when the check passed — a figure it would not vouch for is
    // never measured, let alone reported.
    if check.as_ref().is_some_and(|c| c.passed)
        && !m.tally.interrupted
        && let Err(gap) = m.candidate(&references, stop).await
    {
        return fail(&mut files, art, gap);
    }
    if req.tokens > 0 && !m.tally.interrupted && !m.tally.self_kls.is_empty() {
        m.along(stop).await;
    }
    let Measurement { tally, journal, .. } = m;
    if let Some(e) = journal.error {
        art.candidate
            .notes
            .push(format!("journal write failed: {e}"));
    }
    conclude(&mut files, art, tally, sampler, start).await
}

/// Both preflights at once, each announced and its outcome reported. Ctrl-C here ends the run
/// with nothing written.
async fn preflight_both(
    req: &DamageRequest<'_>,
    stop: &mut watch::Receiver<bool>,
    start: Instant,
    emit: &(dyn Fn(DamageEvent) + Sync),
) -> Result<(PreflightOutcome, PreflightOutcome), EvalError> {
    for side in [Side::Candidate, Side::Reference] {
        emit(DamageEvent::Preflight {
            side,
            phase: PreflightPhase::Probing {
                ready_timeout: req.candidate_preflight.ready_timeout,
            },
        });
    }
    let (cand_pre, ref_pre) = tokio::select! {
        p = async { tokio::join!(
            run_preflight(req.candidate, req.candidate_preflight),
            run_preflight(req.reference, req.reference_preflight),
        ) } => p,
        () = stopped(stop) => return Err(EvalError::InterruptedInPreflight),
    };
    for (side, pre) in [(Side::Candidate, &cand_pre), (Side::Reference, &ref_pre)] {
        emit(DamageEvent::Preflight {
            side,
            phase: PreflightPhase::finished(pre, start.elapsed()),
        });
    }
    Ok((cand_pre, ref_pre))
}

/// What else ran on this host while the two endpoints were measured (docs/metrics.md
/// "Conditions"): both engines are the measurement's own and are left out.
async fn conditions_sampler(req: &DamageRequest<'_>) -> bakeoff_conditions::Sampler {
    let url_of = |c: &Client| {
        let u = c.url().root_path("");
        (
            u.host_str().unwrap_or("").to_string(),
            u.port_or_known_default(),
        )
    };
    let (cand_host, cand_port) = url_of(req.candidate);
    let (ref_host, ref_port) = url_of(req.reference);
    bakeoff_conditions::Sampler::start_off_runtime(bakeoff_conditions::Exclude::for_endpoints(&[
        (&cand_host, cand_port),
        (&ref_host, ref_port),
    ]))
    .await
}

/// The run's journal, and the first write that failed: noted on the artifact, never fatal.
struct ItemJournal {
    journal: Journal,
    error: Option<String>,
}

impl ItemJournal {
    fn append(&mut self, item: &ItemRecord) {
        if let Err(e) = self.journal.append(SUITE, item) {
            self.error.get_or_insert(e.to_string());
        }
    }
}

/// What the three phases share: the endpoints, each prompt's prefix, the seeded salts, the
/// journal and the tally.
struct Measurement<'a> {
    req: &'a DamageRequest<'a>,
    sides: Sides<'a>,
    prefixes: Vec<String>,
    rng: SplitMix64,
    journal: ItemJournal,
    tally: Tally,
    emit: &'a (dyn Fn(DamageEvent) + Sync),
    start: Instant,
}

impl Measurement<'_> {
    /// Phase 1, the instrument check: every prompt twice to the reference. The top-K of its
    /// first run per prompt, for the candidate; `Err`: the reference cannot be measured.
    async fn self_check(
        &mut self,
        stop: &watch::Receiver<bool>,
    ) -> Result<Vec<Option<TopK>>, Failure> {
        let prompts = self.req.prompts;
        let planned = prompts.len();
        (self.emit)(DamageEvent::Started {
            phase: Phase::SelfCheck,
            planned,
        });
        let phase_start = Instant::now();
        let mut references: Vec<Option<TopK>> = Vec::with_capacity(planned);
        for (i, (p, prefix)) in prompts.iter().zip(&self.prefixes).enumerate() {
            if *stop.borrow() {
                self.tally.interrupted = true;
                break;
            }
            let run1 = self
                .sides
                .ask(Side::Reference, p, prefix, &mut self.rng)
                .await;
            let run2 = self
                .sides
                .ask(Side::Reference, p, prefix, &mut self.rng)
                .await;
            if let Some(gap) = endpoint_gap(&[&run1, &run2]) {
                let url = self.req.reference.url().redacted();
                return Err(gap_failure(&gap, &url, self.start));
            }
            let id = format!("self-check/{}", p.id);
            self.tally.note_first_tokens(&id, &[&run1, &run2]);
            let writes = &mut self.tally.writes;
            let (item, figures) = self_check_item(&p.id, prefix, &run1, &run2, writes);
            self.journal.append(&item);
            if let Some((kl, differs)) = figures {
                self.tally.self_kls.push(kl);
                self.tally.self_top1_differs += u64::from(differs);
            }
            self.tally.items.push(item);
            references.push(run1.top.ok());
            (self.emit)(DamageEvent::Item {
                phase: Phase::SelfCheck,
                done: i + 1,
                planned,
                elapsed: phase_start.elapsed(),
                kl: figures.map(|f| f.0),
            });
        }
        // Refused only when no reply of the reference carried logprobs: one reply without
        // them is that item's miss, counted and named.
        if references.iter().all(Option::is_none) && !self.tally.misses.is_empty() {
            let url = self.req.reference.url().redacted();
            return Err(refusal_failure(&url, self.start));
        }
        Ok(references)
    }

    /// Phase 2: the candidate on every prompt the reference answered. `Err`: the candidate
    /// cannot be measured.
    async fn candidate(
        &mut self,
        references: &[Option<TopK>],
        stop: &watch::Receiver<bool>,
    ) -> Result<(), Failure> {
        let todo: Vec<(usize, &TopK)> = references
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|r| (i, r)))
            .collect();
        (self.emit)(DamageEvent::Started {
            phase: Phase::Candidate,
            planned: todo.len(),
        });
        let phase_start = Instant::now();
        let (mut answered, mut missed) = (false, false);
        for (n, (i, reference)) in todo.iter().enumerate() {
            if *stop.borrow() {
                self.tally.interrupted = true;
                break;
            }
            let p = &self.req.prompts[*i];
            let prefix = &self.prefixes[*i];
            let cand = self
                .sides
                .ask(Side::Candidate, p, prefix, &mut self.rng)
                .await;
            if let Some(gap) = endpoint_gap(&[&cand]) {
                let url = self.req.candidate.url().redacted();
                return Err(gap_failure(&gap, &url, self.start));
            }
            answered |= cand.top.is_ok();
            missed |= cand.top == Err(FirstTokenError::NoLogprobs);
            self.tally.note_first_tokens(&p.id, &[&cand]);
            let writes = &mut self.tally.writes;
            let (item, measured) = candidate_item(&p.id, prefix, reference, &cand, writes);
            self.journal.append(&item);
            (self.emit)(DamageEvent::Item {
                phase: Phase::Candidate,
                done: n + 1,
                planned: todo.len(),
                elapsed: phase_start.elapsed(),
                kl: measured.as_ref().map(|m| m.kl),
            });
            self.tally.items.push(item);
            self.tally.measured.extend(measured);
        }
        if missed && !answered {
            let url = self.req.candidate.url().redacted();
            return Err(refusal_failure(&url, self.start));
        }
        Ok(())
    }

    /// Phase 3: along the reply (its own self-check and batch floor, then the candidate).
    async fn along(&mut self, stop: &watch::Receiver<bool>) {
        let along_start = Instant::now();
        let emit = self.emit;
        let journal = &mut self.journal;
        let mut on_item = |phase: AlongPhase, item: &ItemRecord, done: usize, planned: usize| {
            journal.append(item);
            emit(DamageEvent::AlongItem {
                phase,
                done,
                planned,
                elapsed: along_start.elapsed(),
            });
        };
        let (ref_engine, ref_model) = &self.sides.reference.1;
        let (cand_engine, cand_model) = &self.sides.candidate.1;
        let outcome = measure_along(
            AlongRequest {
                reference: super::along::Side {
                    client: self.req.reference,
                    engine: *ref_engine,
                    model: ref_model,
                },
                candidate: super::along::Side {
                    client: self.req.candidate,
                    engine: *cand_engine,
                    model: cand_model,
                },
                prompts: self.req.prompts,
                prefixes: &self.prefixes,
                tokens: self.req.tokens,
                top_k: self.req.top_k,
            },
            &mut self.rng,
            stop,
            &mut on_item,
        )
        .await;
        self.tally.interrupted |= outcome.interrupted;
        self.tally.along_items = outcome.items.len();
        self.tally.items.extend(outcome.items);
        self.tally.writes.absorb(outcome.writes);
        self.tally.along = Some(outcome.summary);
    }
}

/// The suite from the tally, with the conditions it was measured under, into the artifact: a
/// result, or a failure when one side answered nothing; `incomplete` when interrupted.
async fn conclude(
    files: &mut RunFiles,
    mut art: Artifact,
    tally: Tally,
    sampler: bakeoff_conditions::Sampler,
    start: Instant,
) -> Result<DamageOutcome, EvalError> {
    let interrupted = tally.interrupted;
    let mut suite = suite_result(tally);
    // Recorded, and shown on the conditions line; not raised as the suite's flags: the
    // damage figures rest on the self-check and batch floor measured under the same conditions.
    let conditions = sampler.finish_off_runtime().await;
    suite.summary.conditions = Some(conditions);
    let damage = suite.summary.damage.as_ref();
    // The first-token figure withheld, or the figures along the reply: either is exit 1.
    let withheld = damage.and_then(|d| {
        d.withheld.clone().or_else(|| {
            d.along
                .as_ref()
                .and_then(|a| a.withheld.as_ref())
                .map(|w| format!("along the reply: {w}"))
        })
    });
    // Nothing measured on one side: the reference never answered twice, or the check passed
    // and then no candidate request came back. Either is a failure artifact, not a result.
    let silent = match damage {
        Some(d) if d.self_check.is_none() => Some(Side::Reference),
        Some(d)
            if d.self_check.as_ref().is_some_and(|c| c.passed)
                && d.kl.is_none()
                && !interrupted =>
        {
            Some(Side::Candidate)
        }
        Some(_) => None,
        None => Some(Side::Reference),
    };
    art.instrument_flags
        .extend(suite.summary.flags.iter().cloned());
    if interrupted {
        art.status = RunStatus::Incomplete;
        art.incomplete_reason = Some("interrupted by the operator".into());
    }
    match silent {
        None => art.kind = ArtifactKind::Bakeoff,
        Some(side) => {
            art.failure = Some(Failure {
                class: FailureClass::InferenceFailing,
                message: format!(
                    "preflight passed but no prompt came back from the {} with logprobs: nothing was measured",
                    side.as_str()
                ),
                evidence: first_errors(&suite.items),
                elapsed_ms: start.elapsed().as_millis() as u64,
                remediation: Some(remediation(FailureClass::InferenceFailing).into()),
            });
        }
    }
    art.suites.insert(SUITE.into(), suite);
    let path = write_run_artifact(files, &mut art)?;
    let withheld =
        withheld.or_else(|| interrupted.then(|| "interrupted by the operator".to_string()));
    Ok(DamageOutcome {
        evaluated: Evaluated {
            artifact: art,
            path,
        },
        withheld,
    })
}

/// The two endpoints and what every request to them shares.
struct Sides<'a> {
    reference: (&'a Client, (bakeoff_artifact::EngineKind, String)),
    candidate: (&'a Client, (bakeoff_artifact::EngineKind, String)),
    top_k: u32,
}

impl Sides<'_> {
    /// One first-token request for `p` behind `prefix`, with a cache salt of its own.
    async fn ask(&self, side: Side, p: &Prompt, prefix: &str, rng: &mut SplitMix64) -> FirstToken {
        let (client, (engine, model)) = match side {
            Side::Reference => &self.reference,
            Side::Candidate => &self.candidate,
        };
        let salt = format!("bakeoff-{:016x}", rng.next_u64());
        let req = first_token_request(*engine, model, &p.messages, self.top_k, prefix, &salt);
        send_reading_native(client, *engine, req).await
    }
}

fn engine_and_model(pre: &PreflightOutcome) -> (bakeoff_artifact::EngineKind, String) {
    (
        pre.discovered.facts.engine,
        pre.report.model.clone().unwrap_or_else(|| "default".into()),
    )
}

fn reference_record(client: &Client, pre: &PreflightOutcome) -> DamageReference {
    let facts = &pre.discovered.facts;
    DamageReference {
        url: client.url().redacted(),
        model: pre.report.model.clone().unwrap_or_else(|| "default".into()),
        engine: facts.engine,
        engine_version: facts.engine_version.clone(),
        quantization: pre.discovered.quantization.clone(),
    }
}

/// A note when the two endpoints serve differently named models: their tokenizers may differ,
/// and the estimator compares tokens by the bytes they stand for.
fn model_notes(candidate_model: &str, reference: &PreflightOutcome) -> Vec<String> {
    let base = |m: &str| {
        let b = m.rsplit('/').next().unwrap_or(m).to_lowercase();
        b.strip_suffix(".gguf").map(str::to_string).unwrap_or(b)
    };
    match &reference.report.model {
        Some(r) if base(r) != base(candidate_model) => vec![format!(
            "candidate {candidate_model:?} and reference {r:?} are named differently: tokens are compared by the bytes they stand for, so a tokenizer that cuts the first word differently counts as damage"
        )],
        _ => Vec::new(),
    }
}

/// Write a failure artifact; no figure stands.
fn fail(
    files: &mut RunFiles,
    mut art: Artifact,
    failure: Failure,
) -> Result<DamageOutcome, EvalError> {
    let reason = failure.message.clone();
    art.kind = ArtifactKind::Failure;
    art.failure = Some(failure);
    let path = write_run_artifact(files, &mut art)?;
    Ok(DamageOutcome {
        evaluated: Evaluated {
            artifact: art,
            path,
        },
        withheld: Some(reason),
    })
}

/// Resolves once `stop` reads true; never, if its sender is gone without having said so.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}
