//! The `damage` suite's records: one item per request pair as it finishes (journaled at once),
//! and the summary built from them.

use bakeoff_artifact::{
    DamageReference, DamageSelfCheck, DamageSummary, FlagCode, FlagSeverity, InstrumentFlag,
    ItemRecord, Outcome, SuiteResult, SuiteStatus,
};

use super::first_token::{FirstToken, FirstTokenError, TopK};
use super::items;
use super::{SUITE, noise};
use bakeoff_suites::item_extra::ItemWrites;
use bakeoff_suites::outcome::{outcome_of_error, record};
use bakeoff_suites::summary::summarize;

/// The damage figures' median is `bakeoff-stats`' (non-finite values dropped); named here for
/// the modules of this suite that reach it through `record`.
pub(super) use bakeoff_stats::median;

/// The outcome of one first-token request.
pub(super) fn outcome_of(f: &FirstToken) -> (Outcome, Option<String>) {
    match &f.top {
        Ok(_) => (Outcome::Ok, None),
        Err(FirstTokenError::Request(e)) => (outcome_of_error(e), Some(e.to_string())),
        // The endpoint served logprobs for other replies: this one is the instrument's miss.
        Err(e @ FirstTokenError::NoLogprobs) => (
            Outcome::InstrumentMiss,
            Some(f.native.clone().unwrap_or_else(|| e.to_string())),
        ),
        Err(e) => (Outcome::Empty, Some(e.to_string())),
    }
}

/// The self-check item of one prompt: the reference's two runs of the same text. Its `extra`
/// goes through `writes` (a failure is flagged on the suite).
pub(super) fn self_check_item(
    id: &str,
    prefix: &str,
    run1: &FirstToken,
    run2: &FirstToken,
    writes: &mut ItemWrites,
) -> (ItemRecord, Option<(f64, bool)>) {
    let (o1, why1) = outcome_of(run1);
    let (o2, why2) = outcome_of(run2);
    let (outcome, why) = if o1 != Outcome::Ok {
        (o1, why1)
    } else {
        (o2, why2)
    };
    let figures = match (&run1.top, &run2.top) {
        (Ok(a), Ok(b)) => super::kl(a, b)
            .ok()
            .map(|t| (t.kl, !super::same_top1(a, b))),
        _ => None,
    };
    // A reply that cannot be scored (a NaN logprob) is not a measurement.
    let outcome = if outcome == Outcome::Ok && figures.is_none() {
        Outcome::Empty
    } else {
        outcome
    };
    let check = why.or_else(|| {
        figures.map(|(kl, differs)| {
            format!(
                "reference against itself: KL {kl:.3e} nats{}",
                if differs { ", top-1 differs" } else { "" }
            )
        })
    });
    let mut it = record(
        &format!("self-check/{id}"),
        &run1.request,
        &run1.exchange,
        outcome,
        check,
        serde_json::Value::Null,
    );
    let extra = items::self_check_extra(id, prefix, &run1.top, &run2.top, figures);
    writes.extra(&mut it, &extra);
    (it, figures)
}

/// What one prompt's candidate item measured.
pub(super) struct Measured {
    pub kl: f64,
    pub top1_differs: bool,
    pub reference_listed: f64,
}

/// The candidate item of one prompt: the candidate against the reference's first run. Its
/// `extra` goes through `writes`.
pub(super) fn candidate_item(
    id: &str,
    prefix: &str,
    reference: &TopK,
    cand: &FirstToken,
    writes: &mut ItemWrites,
) -> (ItemRecord, Option<Measured>) {
    let (outcome, why) = outcome_of(cand);
    let terms = cand.top.as_ref().ok().and_then(|c| {
        super::kl(reference, c)
            .ok()
            .map(|t| (t, !super::same_top1(reference, c)))
    });
    let outcome = if outcome == Outcome::Ok && terms.is_none() {
        Outcome::Empty
    } else {
        outcome
    };
    let check = why.or_else(|| {
        terms.as_ref().map(|(t, differs)| {
            format!(
                "KL(reference ‖ candidate) {:.4} nats over {} shared tokens{}",
                t.kl,
                t.shared,
                if *differs { ", top-1 differs" } else { "" }
            )
        })
    });
    let mut it = record(
        id,
        &cand.request,
        &cand.exchange,
        outcome,
        check,
        serde_json::Value::Null,
    );
    let extra = items::candidate_extra(id, prefix, reference, &cand.top, terms.as_ref());
    writes.extra(&mut it, &extra);
    let measured = terms.map(|(t, differs)| Measured {
        kl: t.kl,
        top1_differs: differs,
        reference_listed: t.reference_listed,
    });
    (it, measured)
}

/// Everything the summary is built from.
pub(super) struct Tally {
    pub reference: DamageReference,
    pub top_k: u32,
    pub prompts: usize,
    pub items: Vec<ItemRecord>,
    pub self_kls: Vec<f64>,
    pub self_top1_differs: u64,
    pub measured: Vec<Measured>,
    pub interrupted: bool,
    pub notes: Vec<String>,
    /// Item fields that could not be written: the suite's `instrument-failure` flag.
    pub writes: ItemWrites,
    pub along: Option<bakeoff_artifact::DamageAlong>,
    /// Items of the measurement along the reply (each planned and journaled).
    pub along_items: usize,
    /// Items one of whose replies came without logprobs, none read another way: the
    /// `instrument-miss` flag names them.
    pub misses: Vec<String>,
    /// Items whose first-token list was read through llama.cpp's native route (a note).
    pub native_reads: Vec<String>,
}

impl Tally {
    /// Counts the item `id`'s replies that carried no logprobs: read another way, or missed.
    pub fn note_first_tokens(&mut self, id: &str, replies: &[&FirstToken]) {
        if replies
            .iter()
            .any(|r| r.top == Err(FirstTokenError::NoLogprobs))
        {
            self.misses.push(id.to_string());
        } else if replies.iter().any(|r| r.native.is_some() && r.top.is_ok()) {
            self.native_reads.push(id.to_string());
        }
    }
}

/// The suite: its summary with the damage figures — or the reason they are withheld — and a
/// `self-check-failed` flag when the reference disagreed with itself.
pub(super) fn suite_result(t: Tally) -> SuiteResult {
    let self_check: Option<DamageSelfCheck> = noise::self_check(&t.self_kls, t.self_top1_differs);
    let passed = self_check.as_ref().is_some_and(|c| c.passed);
    // The candidate's items are planned only once the check passed.
    let planned = if passed { 2 * t.prompts } else { t.prompts } + t.along_items;
    let mut summary = summarize(planned, &t.items);
    summary.score = None;
    t.writes.raise(&mut summary, SUITE);
    let kls: Vec<f64> = t.measured.iter().map(|m| m.kl).collect();
    let kl = if passed {
        noise::summarize_kl(&kls)
    } else {
        None
    };
    let withheld = match (&self_check, &kl) {
        (None, _) => Some("the self-check measured nothing: no prompt came back twice from the reference with logprobs".to_string()),
        (Some(c), _) if !c.passed => Some(format!(
            "self-check failed: the reference disagreed with itself on the same text (mean KL {:.3e} nats, 95% upper bound {:.3e} > limit {:.0e}; top-1 differed on {} of {} prompts), so its own variation would be read as damage",
            c.kl.mean, c.kl.high, c.limit_nats, c.top1_differs, c.kl.n
        )),
        (Some(_), None) if t.interrupted => Some("interrupted before the candidate was measured".into()),
        (Some(_), None) => Some("no candidate request came back with logprobs".into()),
        (Some(_), Some(_)) => None,
    };
    if let Some(c) = self_check.as_ref().filter(|c| !c.passed) {
        summary.flags.push(InstrumentFlag {
            code: FlagCode::SelfCheckFailed,
            severity: FlagSeverity::Invalid,
            message: format!(
                "the reference disagreed with itself on the same text (self KL upper bound {:.3e} nats > {:.0e}): the damage figure is withheld",
                c.kl.high, c.limit_nats
            ),
            suite: Some(SUITE.into()),
            count: Some(c.kl.n),
        });
    }
    if !t.misses.is_empty() {
        summary.flags.push(InstrumentFlag {
            code: FlagCode::InstrumentMiss,
            severity: FlagSeverity::Warning,
            message: format!(
                "{} item(s) came back without logprobs for their first token (llama-server sends none for a token that ends inside a multi-byte character), and no other route gave them: left out of the figures: {}",
                t.misses.len(),
                t.misses.join(", ")
            ),
            suite: Some(SUITE.into()),
            count: Some(t.misses.len() as u64),
        });
    }
    let differs = t.measured.iter().filter(|m| m.top1_differs).count() as u64;
    let top1_differs = kl
        .as_ref()
        .and_then(|_| bakeoff_suites::summary::score(differs, t.measured.len() as u64));
    let noise_floor = self_check
        .as_ref()
        .map_or(noise::RESOLUTION_NATS, |c| noise::noise_floor(&c.kl));
    let beyond_noise = match (&self_check, &kl) {
        (Some(c), Some(k)) => Some(noise::beyond_noise(&c.kl, k)),
        _ => None,
    };
    let listed = median(t.measured.iter().map(|m| m.reference_listed).collect());
    let mut notes = t.notes;
    if !t.native_reads.is_empty() {
        notes.push(format!(
            "{} item(s) began with a token that ends inside a multi-byte character, which llama-server's chat reply carries without logprobs; their first-token lists were read through llama.cpp's native /completion instead: {}",
            t.native_reads.len(),
            t.native_reads.join(", ")
        ));
    }
    if let Some(m) = listed.filter(|m| *m < 0.9) {
        notes.push(format!(
            "the reference's top-{} listed a median {:.0}% of the probability mass: the rest is one tail bucket, inside which the estimate is blind (a lower bound); raise --top-k where the engine allows",
            t.top_k,
            m * 100.0
        ));
    }
    let measured = t.self_kls.len() as u64;
    summary.damage = Some(DamageSummary {
        reference: t.reference,
        top_k: t.top_k,
        prompts: t.prompts as u64,
        measured: if passed { kls.len() as u64 } else { measured },
        self_check,
        kl,
        top1_differs,
        beyond_noise,
        noise_floor_nats: noise_floor,
        withheld,
        reference_listed_mass_median: listed,
        bootstrap_seed: noise::BOOTSTRAP_SEED,
        notes,
        along: t.along,
    });
    let status = if t.interrupted {
        SuiteStatus::Incomplete
    } else if t.self_kls.is_empty() {
        SuiteStatus::Failed
    } else {
        SuiteStatus::Complete
    };
    SuiteResult {
        status,
        summary,
        items: t.items,
    }
}
