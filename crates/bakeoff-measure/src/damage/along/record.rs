//! The records of the measurement along the reply: one item per comparison (or per failed
//! request), its `extra` written through the run's [`ItemWrites`].

use std::time::Instant;

use bakeoff_artifact::{ItemRecord, LatencyRecord, Outcome, ResponseRecord};

use super::compare::Compared;
use super::route::{RouteError, Step};
use crate::damage::first_token::TopK;
use crate::damage::items::{self, AlongFailedExtra, ItemPhase};
use bakeoff_suites::item_extra::ItemWrites;

/// The reference's first run of one prompt: what everything else is compared with.
pub(super) struct Reference {
    pub(super) ids: Option<Vec<u32>>,
    pub(super) reply: Vec<Step>,
    pub(super) text: String,
    /// Its distributions along its own reply.
    pub(super) dist: Vec<TopK>,
}

fn text_of(reply: &[Step]) -> String {
    reply.iter().map(|s| s.text.as_str()).collect()
}

/// One comparison's item (its `extra` written through `writes`), or the failed request's.
pub(super) fn compared_item(
    id: &str,
    phase: ItemPhase,
    prompt: &str,
    reference: &Reference,
    result: Result<(&[Step], &Compared), &RouteError>,
    started: Instant,
    writes: &mut ItemWrites,
) -> ItemRecord {
    let (reply, c) = match result {
        Ok(x) => x,
        Err(e) => return error_item(id, prompt, e, started, writes),
    };
    let a = &c.agreement;
    let check = format!(
        "{}{}",
        match a.first_divergence {
            None => format!("identical over {} tokens", reference.reply.len()),
            Some(at) => format!(
                "parts at token {at} of {}, {:.0}% of the reference's tokens reproduced",
                reference.reply.len(),
                a.reproduced * 100.0
            ),
        },
        c.along
            .as_ref()
            .map(|al| {
                let kls: Vec<f64> = al.kl.iter().flatten().copied().collect();
                let mean = if kls.is_empty() {
                    0.0
                } else {
                    kls.iter().sum::<f64>() / kls.len() as f64
                };
                format!(
                    "; mean per-token KL {mean:.3e} nats, top-1 differs at {} of {} positions",
                    al.top1_differs.iter().filter(|d| **d).count(),
                    al.top1_differs.len()
                )
            })
            .unwrap_or_default()
    );
    let mut it = ItemRecord {
        id: id.to_string(),
        outcome: Outcome::Ok,
        request: serde_json::Value::Null,
        response: ResponseRecord {
            content: text_of(reply),
            ..ResponseRecord::default()
        },
        expected: serde_json::Value::from(text_of(&reference.reply)),
        check: Some(check),
        latency: LatencyRecord {
            e2e_ms: started.elapsed().as_secs_f64() * 1000.0,
            ..LatencyRecord::default()
        },
        error: None,
        extra: serde_json::Value::Null,
    };
    let (ref_len, len) = (reference.reply.len(), reply.len());
    let extra = items::along_extra(phase, prompt, a, ref_len, len, c.along.as_ref());
    writes.extra(&mut it, &extra);
    it
}

pub(super) fn error_item(
    id: &str,
    prompt: &str,
    e: &RouteError,
    started: Instant,
    writes: &mut ItemWrites,
) -> ItemRecord {
    let (outcome, kind) = match e {
        RouteError::Request(r) => (bakeoff_suites::outcome::outcome_of_error(r), "request"),
        RouteError::Status { .. } => (Outcome::HttpError, "http"),
        RouteError::Shape { .. } => (Outcome::Empty, "decode"),
    };
    let mut it = ItemRecord {
        id: id.to_string(),
        outcome,
        request: serde_json::Value::Null,
        response: ResponseRecord::default(),
        expected: serde_json::Value::Null,
        check: Some(e.to_string()),
        latency: LatencyRecord {
            e2e_ms: started.elapsed().as_secs_f64() * 1000.0,
            ..LatencyRecord::default()
        },
        error: Some(bakeoff_artifact::ErrorRecord {
            kind: kind.into(),
            message: e.to_string(),
            body: None,
        }),
        extra: serde_json::Value::Null,
    };
    let extra = AlongFailedExtra {
        phase: ItemPhase::Along,
        prompt: prompt.to_owned(),
    };
    writes.extra(&mut it, &extra);
    it
}
