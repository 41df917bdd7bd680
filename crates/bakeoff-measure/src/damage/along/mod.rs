//! Damage along the reply (docs/suites.md "Damage along the reply"; the estimators in
//! docs/statistics.md): most damage does not show at the first token. Three phases, after the
//! first-token measurement and on the same uniquely prefixed prompts:
//!
//! 1. **self-check**: the reference's greedy reply twice, one request at a time. At
//!    temperature 0 the replies must be identical and the per-token KL within
//!    [`SELF_CHECK_LIMIT_NATS`], or every figure of this part is withheld;
//! 2. **batch floor**: the reference once more with [`IN_FLIGHT`] requests in flight at once
//!    (fillers added when there are fewer prompts). Engines are not batch-invariant, so this is
//!    the practical noise floor: "beyond noise" means beyond it;
//! 3. **candidate**: its greedy reply against the reference's first (agreement), and its
//!    next-token distribution at every position of the reference's reply (teacher forcing,
//!    [`route`]) against the reference's own distributions there.

pub mod compare;
mod record;
pub mod route;
mod summary;

use std::time::{Duration, Instant};

use bakeoff_artifact::{AlongTiming, DamageAlong, EngineKind, ItemRecord};
use bakeoff_client::Client;
use bakeoff_text::SplitMix64;
use futures_util::future::join_all;
use tokio::sync::watch;

use self::compare::{Compared, agreement, agreement_by_text, along};
use self::record::{Reference, compared_item, error_item};
use self::route::{Asker, Greedy, Route, RouteError, Step};
use super::first_token::{TopK, with_prefix};
use super::items::ItemPhase;
use super::noise::SELF_CHECK_LIMIT_NATS;
use super::prompts::Prompt;
use bakeoff_suites::item_extra::ItemWrites;

/// `--tokens` when none is given: long enough for a sentence or two to part.
pub const DEFAULT_TOKENS: u32 = 64;

/// Requests in flight in the batch-floor phase.
pub const IN_FLIGHT: u32 = 8;

/// Prompts whose reference reply is also read through the teacher-forcing route (the route
/// check, llama.cpp).
pub const FORCING_CHECKED_PROMPTS: usize = 4;

/// One endpoint of the comparison.
pub struct Side<'a> {
    pub client: &'a Client,
    pub engine: EngineKind,
    pub model: &'a str,
}

/// What to measure.
pub struct AlongRequest<'a> {
    pub reference: Side<'a>,
    pub candidate: Side<'a>,
    pub prompts: &'a [Prompt],
    /// Each prompt's unique prefix (the first-token phases' own).
    pub prefixes: &'a [String],
    pub tokens: u32,
    pub top_k: u32,
}

/// What the measurement reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum AlongPhase {
    SelfCheck,
    BatchFloor,
    Candidate,
}

impl AlongPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            AlongPhase::SelfCheck => "along: self-check",
            AlongPhase::BatchFloor => "along: batch floor",
            AlongPhase::Candidate => "along: candidate",
        }
    }
}

/// Called with each finished item (to journal it) and its phase, done and planned counts.
pub type OnItem<'a> = dyn FnMut(AlongPhase, &ItemRecord, usize, usize) + Send + 'a;

/// The figures and every item, and whether the operator stopped it.
pub struct AlongOutcome {
    pub summary: DamageAlong,
    pub items: Vec<ItemRecord>,
    /// Item fields that could not be written (flagged on the suite).
    pub writes: ItemWrites,
    pub interrupted: bool,
}

fn asker<'a>(side: &Side<'a>, top_k: u32) -> Asker<'a> {
    Asker {
        client: side.client,
        route: Route::of(side.engine),
        engine: side.engine,
        model: side.model,
        top_k,
        sent: Default::default(),
        // A greedy reply of N tokens, or a prefill of prompt + reply, on a loaded server: bounded,
        // but not by the first-token timeouts.
        limit: side.client.timeouts().total.max(Duration::from_secs(300)),
    }
}

fn salt(rng: &mut SplitMix64) -> String {
    format!("bakeoff-along-{:016x}", rng.next_u64())
}

/// Run the three phases; `on_item` journals each item as it finishes. `stop` ends the run
/// after the request in flight.
pub async fn measure_along(
    req: AlongRequest<'_>,
    rng: &mut SplitMix64,
    stop: &watch::Receiver<bool>,
    on_item: &mut OnItem<'_>,
) -> AlongOutcome {
    let reference = asker(&req.reference, req.top_k);
    let candidate = asker(&req.candidate, req.top_k);
    let forcing_missing = reference
        .route
        .no_forcing(req.reference.engine)
        .or_else(|| candidate.route.no_forcing(req.candidate.engine));
    let mut run = Phases {
        prompts: req.prompts,
        chats: req
            .prompts
            .iter()
            .zip(req.prefixes)
            .map(|(p, prefix)| with_prefix(&p.messages, prefix))
            .collect(),
        tokens: req.tokens,
        forcing: forcing_missing.is_none(),
        stop,
        items: Vec::new(),
        writes: ItemWrites::new(),
        interrupted: false,
        route_checks: Vec::new(),
    };

    let mut timing = Vec::new();
    let clock = PhaseClock::start(&reference);
    let (refs, self_checks) = run.self_check(&reference, rng, on_item).await;
    let measured: Vec<usize> = refs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.as_ref().map(|_| i))
        .collect();
    // Every phase covers the same reply positions: the reference's reply, once per prompt.
    let positions: u64 = measured
        .iter()
        .filter_map(|i| refs[*i].as_ref())
        .map(|r| r.reply.len() as u64)
        .sum();
    timing.push(clock.stop("self-check", refs.len() as u64, positions));
    let batch = if !run.interrupted && !measured.is_empty() {
        let clock = PhaseClock::start(&reference);
        let batch = run
            .batch_floor(&reference, &refs, &measured, rng, on_item)
            .await;
        timing.push(clock.stop("batch floor", measured.len() as u64, positions));
        batch
    } else {
        Vec::new()
    };
    let check_passed = summary::self_check(&self_checks, measured.len()).passed == Some(true);
    let (cands, render_mismatch) = if !run.interrupted && check_passed {
        let clock = PhaseClock::start(&candidate);
        let out = run
            .candidate(&candidate, &refs, &measured, rng, on_item)
            .await;
        timing.push(clock.stop("candidate", measured.len() as u64, positions));
        out
    } else {
        (Vec::new(), 0)
    };
    let forcing_missing = forcing_missing.or_else(|| {
        (render_mismatch > 0).then(|| {
            format!(
                "the candidate rendered {render_mismatch} prompt(s) into other tokens than the reference: teacher forcing needs one tokenizer and one chat template, so those prompts have greedy agreement only"
            )
        })
    });
    let summary = summary::build(summary::Inputs {
        tokens: req.tokens,
        route: route_words(reference.route, candidate.route),
        forcing_missing,
        prompts: measured.len(),
        self_checks: &self_checks,
        route_checks: &run.route_checks,
        batch: &batch,
        in_flight: IN_FLIGHT,
        candidates: &cands,
        interrupted: run.interrupted,
        timing,
    });
    AlongOutcome {
        summary,
        items: run.items,
        writes: run.writes,
        interrupted: run.interrupted,
    }
}

/// A phase's wall clock and the requests its endpoint was sent meanwhile.
struct PhaseClock<'a, 'b> {
    asker: &'a Asker<'b>,
    started: Instant,
    requests: u64,
}

impl<'a, 'b> PhaseClock<'a, 'b> {
    fn start(asker: &'a Asker<'b>) -> Self {
        PhaseClock {
            asker,
            started: Instant::now(),
            requests: asker.requests(),
        }
    }

    fn stop(self, phase: &str, prompts: u64, positions: u64) -> AlongTiming {
        AlongTiming::new(
            phase,
            prompts,
            positions,
            self.asker.requests() - self.requests,
            self.started.elapsed().as_secs_f64(),
        )
    }
}

/// What the three phases share: the prompts with their prefixes, whether teacher forcing is
/// on, and every item so far.
struct Phases<'a> {
    prompts: &'a [Prompt],
    chats: Vec<Vec<bakeoff_wire::Message>>,
    tokens: u32,
    forcing: bool,
    stop: &'a watch::Receiver<bool>,
    items: Vec<ItemRecord>,
    writes: ItemWrites,
    interrupted: bool,
    /// The reference's teacher-forced distributions along its own reply against its decode's.
    route_checks: Vec<Compared>,
}

impl Phases<'_> {
    /// Phase 1: the reference's first run, and its second, one request at a time. Each
    /// prompt's first run (`None` where it failed) and the self-check comparisons.
    async fn self_check(
        &mut self,
        reference: &Asker<'_>,
        rng: &mut SplitMix64,
        on_item: &mut OnItem<'_>,
    ) -> (Vec<Option<Reference>>, Vec<Compared>) {
        let planned = self.prompts.len();
        let mut refs: Vec<Option<Reference>> = Vec::with_capacity(planned);
        let mut self_checks: Vec<Compared> = Vec::new();
        for (i, p) in self.prompts.iter().enumerate() {
            if *self.stop.borrow() {
                self.interrupted = true;
                break;
            }
            let started = Instant::now();
            let chat = &self.chats[i];
            let first = reference_run(reference, chat, self.tokens, self.forcing, rng).await;
            let (item, first) = match first {
                Ok(r) => {
                    let second = rerun(reference, &r, chat, self.tokens, self.forcing, rng).await;
                    // The route check: where the candidate's distributions past a parting are
                    // read another way than the reference's own (llama.cpp: one token over a
                    // cached prefix, against the reference's decode), the first prompts are read
                    // that way too, along the reference's own reply.
                    if reference.route.forcing_differs_from_decode()
                        && self.forcing
                        && i < FORCING_CHECKED_PROMPTS
                        && let Ok(c) = route_check(reference, &r, &salt(rng)).await
                    {
                        self.route_checks.push(c);
                    }
                    let item = compared_item(
                        &format!("along/self-check/{}", p.id),
                        ItemPhase::AlongSelfCheck,
                        &p.id,
                        &r,
                        second.as_ref().map(|(reply, c)| (reply.as_slice(), c)),
                        started,
                        &mut self.writes,
                    );
                    if let Ok((_, c)) = second {
                        self_checks.push(c);
                    }
                    (item, Some(r))
                }
                Err(e) => {
                    let id = format!("along/self-check/{}", p.id);
                    (error_item(&id, &p.id, &e, started, &mut self.writes), None)
                }
            };
            on_item(AlongPhase::SelfCheck, &item, i + 1, planned);
            self.items.push(item);
            refs.push(first);
        }
        (refs, self_checks)
    }

    /// Phase 2: the reference again, IN_FLIGHT requests at a time: the comparisons with each
    /// measured prompt's first run.
    async fn batch_floor(
        &mut self,
        reference: &Asker<'_>,
        refs: &[Option<Reference>],
        measured: &[usize],
        rng: &mut SplitMix64,
        on_item: &mut OnItem<'_>,
    ) -> Vec<Compared> {
        let mut batch: Vec<Compared> = Vec::new();
        let width = IN_FLIGHT as usize;
        let tokens = self.tokens;
        let forcing = self.forcing;
        let mut done = 0;
        for round in measured.chunks(width) {
            if *self.stop.borrow() {
                self.interrupted = true;
                break;
            }
            // Fill the round up to IN_FLIGHT with repeats of measured prompts (answers unused).
            let mut sent: Vec<usize> = round.to_vec();
            let mut fill = measured.iter().cycle();
            while sent.len() < width {
                sent.extend(fill.next().copied());
            }
            let started = Instant::now();
            let salts: Vec<String> = sent.iter().map(|_| salt(rng)).collect();
            let replies = join_all(sent.iter().zip(&salts).map(|(i, s)| {
                let ids = refs[*i].as_ref().and_then(|r| r.ids.clone());
                let chat = &self.chats[*i];
                async move {
                    reference
                        .greedy(ids.as_deref(), chat, tokens, s)
                        .await
                        .map(|g| g.steps)
                }
            }))
            .await;
            // The distributions along the first run's reply, in flight together too: a
            // prefill's arithmetic depends on the batch as a decode's does.
            let along_salts: Vec<String> = round.iter().map(|_| salt(rng)).collect();
            let compared_all = join_all(round.iter().enumerate().map(|(slot, i)| {
                let first = refs[*i].as_ref();
                let reply = &replies[slot];
                let s = &along_salts[slot];
                async move {
                    let first = first?;
                    Some(match reply {
                        Ok(reply) => along_of(reference, first, reply, forcing, s)
                            .await
                            .map(|a| (reply.clone(), a)),
                        Err(e) => Err(e.clone()),
                    })
                }
            }))
            .await;
            for (compared, i) in compared_all.into_iter().zip(round) {
                let (Some(compared), Some(r)) = (compared, refs[*i].as_ref()) else {
                    continue;
                };
                let p = &self.prompts[*i];
                let id = format!("along/batch/{}", p.id);
                let item = compared_item(
                    &id,
                    ItemPhase::AlongBatchFloor,
                    &p.id,
                    r,
                    compared.as_ref().map(|(reply, c)| (reply.as_slice(), c)),
                    started,
                    &mut self.writes,
                );
                if let Ok((_, c)) = compared {
                    batch.push(c);
                }
                done += 1;
                on_item(AlongPhase::BatchFloor, &item, done, measured.len());
                self.items.push(item);
            }
        }
        batch
    }

    /// Phase 3: the candidate, one request at a time as the reference's first run was. Its
    /// comparisons, and how many prompts it rendered into other tokens (no forcing for them).
    async fn candidate(
        &mut self,
        candidate: &Asker<'_>,
        refs: &[Option<Reference>],
        measured: &[usize],
        rng: &mut SplitMix64,
        on_item: &mut OnItem<'_>,
    ) -> (Vec<Compared>, usize) {
        let mut cands: Vec<Compared> = Vec::new();
        let mut render_mismatch = 0usize;
        for (n, i) in measured.iter().enumerate() {
            if *self.stop.borrow() {
                self.interrupted = true;
                break;
            }
            let Some(r) = refs[*i].as_ref() else { continue };
            let p = &self.prompts[*i];
            let started = Instant::now();
            let chat = &self.chats[*i];
            let result = candidate_run(candidate, r, chat, self.tokens, self.forcing, rng).await;
            if let Ok((_, c)) = &result
                && self.forcing
                && c.along.is_none()
            {
                render_mismatch += 1;
            }
            let item = compared_item(
                &format!("along/{}", p.id),
                ItemPhase::AlongCandidate,
                &p.id,
                r,
                result.as_ref().map(|(reply, c)| (reply.as_slice(), c)),
                started,
                &mut self.writes,
            );
            if let Ok((_, c)) = result {
                cands.push(c);
            }
            on_item(AlongPhase::Candidate, &item, n + 1, measured.len());
            self.items.push(item);
        }
        (cands, render_mismatch)
    }
}

fn route_words(reference: Route, candidate: Route) -> String {
    if reference == candidate {
        reference.describe().to_string()
    } else {
        format!(
            "reference: {}; candidate: {}",
            reference.describe(),
            candidate.describe()
        )
    }
}

/// The reference's first run: rendered, its greedy reply, its distributions along it.
async fn reference_run(
    a: &Asker<'_>,
    chat: &[bakeoff_wire::Message],
    tokens: u32,
    forcing: bool,
    rng: &mut SplitMix64,
) -> Result<Reference, RouteError> {
    let ids = a.render(chat).await?;
    let Greedy { steps: reply, text } = a.greedy(ids.as_deref(), chat, tokens, &salt(rng)).await?;
    let dist = match (&ids, forcing) {
        (Some(ids), true) => a.along(ids, &path_of(&reply), &reply, &salt(rng)).await?,
        _ => reply.iter().map(|s| s.top.clone()).collect(),
    };
    Ok(Reference {
        ids,
        reply,
        text,
        dist,
    })
}

fn path_of(reply: &[Step]) -> Vec<u32> {
    reply.iter().filter_map(|s| s.id).collect()
}

/// Another greedy reply of the same endpoint, compared with its first run.
async fn rerun(
    a: &Asker<'_>,
    first: &Reference,
    chat: &[bakeoff_wire::Message],
    tokens: u32,
    forcing: bool,
    rng: &mut SplitMix64,
) -> Result<(Vec<Step>, Compared), RouteError> {
    let reply = a
        .greedy(first.ids.as_deref(), chat, tokens, &salt(rng))
        .await?
        .steps;
    let c = along_of(a, first, &reply, forcing, &salt(rng)).await?;
    Ok((reply, c))
}

/// The route check: `first`'s reply read by teacher forcing at every position (no position
/// taken from the reply's own distributions), against those distributions.
async fn route_check(a: &Asker<'_>, first: &Reference, salt: &str) -> Result<Compared, RouteError> {
    let Some(ids) = &first.ids else {
        return Err(RouteError::Shape {
            what: "the route check",
            detail: "a reply without token ids".into(),
        });
    };
    let forced = a.along(ids, &path_of(&first.reply), &[], salt).await?;
    Ok(Compared {
        agreement: agreement(&first.reply, &first.reply),
        along: Some(along(&first.dist, &forced)),
    })
}

/// `reply` compared with `first`: agreement, and the distributions along `first`'s reply.
async fn along_of(
    a: &Asker<'_>,
    first: &Reference,
    reply: &[Step],
    forcing: bool,
    salt: &str,
) -> Result<Compared, RouteError> {
    let agreement = agreement(&first.reply, reply);
    let dist: Option<Vec<TopK>> = match (&first.ids, forcing) {
        (Some(ids), true) => Some(a.along(ids, &path_of(&first.reply), reply, salt).await?),
        // No forcing: the endpoint's own distributions are comparable only while its reply
        // has the same prefix, and only the self-check (identical replies) uses them.
        _ if agreement.identical => Some(reply.iter().map(|s| s.top.clone()).collect()),
        _ => None,
    };
    Ok(Compared {
        agreement,
        along: dist.map(|d| along(&first.dist, &d)),
    })
}

/// The candidate's run: rendered the reference's way, or its figures are agreement only.
async fn candidate_run(
    a: &Asker<'_>,
    reference: &Reference,
    chat: &[bakeoff_wire::Message],
    tokens: u32,
    forcing: bool,
    rng: &mut SplitMix64,
) -> Result<(Vec<Step>, Compared), RouteError> {
    let ids = a.render(chat).await?;
    let Greedy { steps: reply, text } = a.greedy(ids.as_deref(), chat, tokens, &salt(rng)).await?;
    let same_tokens = match (&ids, &reference.ids) {
        (Some(mine), Some(theirs)) => mine == theirs,
        // The chat route on both sides: tokens as the bytes they stand for.
        (None, None) => true,
        _ => false,
    };
    let agreement = if same_tokens {
        agreement(&reference.reply, &reply)
    } else {
        agreement_by_text(&reference.text, &text)
    };
    let along = match (&ids, &reference.ids, forcing) {
        (Some(mine), Some(theirs), true) if mine == theirs => {
            let d = a
                .along(mine, &path_of(&reference.reply), &reply, &salt(rng))
                .await?;
            Some(along(&reference.dist, &d))
        }
        _ => None,
    };
    Ok((reply, Compared { agreement, along }))
}

/// The self-check's limit (shared with the first-token check: a deterministic reference gives
/// exactly 0 at every position).
pub const LIMIT_NATS: f64 = SELF_CHECK_LIMIT_NATS;
