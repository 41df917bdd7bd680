//! The requests of the adapter check and their records: per prompt the base, the adapter and
//! the base again, each journaled as it finishes.

use bakeoff_artifact::{AdapterReport, AdapterRoute, EngineKind, ItemRecord, Outcome, SuiteResult};
use bakeoff_client::Client;
use bakeoff_client::adapter::{Side, select};
use bakeoff_stats::SplitMix64;
use tokio::sync::watch;

use super::AdapterOptions;
use super::verdict::{self, Answer};
use crate::damage::{self, FirstTokenError, Prompt};
use bakeoff_suites::item_extra::ItemWrites;
use bakeoff_suites::outcome::{outcome_of_error, record};
use bakeoff_suites::summary;

/// What to compare, and where.
pub struct AdapterInput<'a> {
    pub client: &'a Client,
    /// The engine, for its no-prompt-cache fields.
    pub engine: EngineKind,
    pub route: &'a AdapterRoute,
    pub prompts: &'a [Prompt],
    pub options: &'a AdapterOptions,
    /// Seed of the prompts' unique prefixes and cache salts (recorded by the caller).
    pub seed: u64,
}

/// The suite's records and the check's report.
pub struct AdapterMeasured {
    pub result: SuiteResult,
    pub report: AdapterReport,
    /// Why the check stopped before its last prompt, when it did.
    pub interrupted: Option<String>,
}

/// One request of a prompt's three (as `extra.leg`: `base`, `adapter`, `base-again`), and an
/// item's `extra`: bakeoff-artifact's shapes.
pub use bakeoff_artifact::{AdapterExtra, AdapterLeg as Leg};

/// Which side of the route a leg's request goes to.
fn side(leg: Leg) -> Side {
    match leg {
        Leg::Adapter => Side::Adapter,
        Leg::Base | Leg::BaseAgain => Side::Base,
    }
}

/// Send each prompt's three requests, in order, until done, stopped, or the endpoint shows it
/// cannot serve the measurement. Every finished request goes to `on_item` at once.
pub async fn check(
    input: AdapterInput<'_>,
    stop: &mut watch::Receiver<bool>,
    on_item: &mut dyn FnMut(&ItemRecord),
) -> AdapterMeasured {
    let planned = input.prompts.len() * Leg::ALL.len();
    let mut rng = SplitMix64::new(input.seed);
    let mut items: Vec<ItemRecord> = Vec::with_capacity(planned);
    let mut writes = ItemWrites::new();
    let mut rows = Vec::new();
    let mut interrupted = None;
    'prompts: for p in input.prompts {
        // One prefix for the prompt's three requests (the same text to compare), one salt each
        // (no request can be answered from another's cache).
        let prefix = damage::unique_prefix(&mut rng);
        let mut answers: [Answer; 3] = Default::default();
        for (slot, leg) in answers.iter_mut().zip(Leg::ALL) {
            if *stop.borrow() {
                interrupted = Some("interrupted by the operator".to_string());
                break 'prompts;
            }
            let salt = format!("{:016x}", rng.next_u64());
            let mut req = damage::first_token_request(
                input.engine,
                &input.route.base_model,
                &p.messages,
                input.options.top_k,
                &prefix,
                &salt,
            );
            req.max_tokens = Some(input.options.max_tokens);
            select(input.route, side(leg), &mut req);
            let sent = damage::send(input.client, req).await;
            let (outcome, note) = match (&sent.top, &sent.exchange.error) {
                (Ok(_), _) => (Outcome::Ok, None),
                (Err(_), Some(e)) => (outcome_of_error(e), Some(e.to_string())),
                (Err(e), None) => (Outcome::InstrumentMiss, Some(e.to_string())),
            };
            let mut rec = record(
                &format!("{}/{}", p.id, leg.as_str()),
                &sent.request,
                &sent.exchange,
                outcome,
                note,
                serde_json::Value::Null,
            );
            let extra = AdapterExtra {
                prompt: p.id.clone(),
                leg,
            };
            writes.extra(&mut rec, &extra);
            on_item(&rec);
            items.push(rec);
            let gap = match &sent.top {
                Err(e) => stop_reason(e),
                Ok(_) => None,
            };
            *slot = Answer {
                text: sent
                    .exchange
                    .error
                    .is_none()
                    .then(|| sent.exchange.reply.content.clone()),
                top: sent
                    .top
                    .map_err(|e| format!("the {} request: {e}", leg.as_str())),
            };
            if let Some(why) = gap {
                interrupted = Some(why);
                rows.push((p.id.clone(), answers));
                break 'prompts;
            }
        }
        rows.push((p.id.clone(), answers));
    }
    let report_rows = rows
        .iter()
        .map(|(id, a)| verdict::row(id, &a[0], &a[1], &a[2]))
        .collect();
    let report = verdict::decide(
        input.route.clone(),
        report_rows,
        input.prompts.len() as u64,
        input.options,
    );
    let mut s = summary::summarize(planned, &items);
    // `ok` counts requests that came back with logprobs: a count, never a score of the model.
    s.score = None;
    s.flags = verdict::flags(&report);
    writes.raise(&mut s, super::SUITE);
    // The verdict beside the counts, so every report can show it in the suite's own cell.
    let details = bakeoff_artifact::AdapterDetails {
        verdict: report.verdict.as_str().into(),
        message: report.message.clone(),
    };
    summary::write_details(&mut s, super::SUITE, &details);
    let status = summary::status(planned, &items, interrupted.is_some());
    AdapterMeasured {
        result: SuiteResult {
            status,
            summary: s,
            items,
        },
        report,
        interrupted,
    }
}

/// A failure that every later request would repeat ends the check with what finished: an
/// endpoint that serves no logprobs or refuses K, or one that has gone away.
fn stop_reason(e: &FirstTokenError) -> Option<String> {
    match e {
        FirstTokenError::Request(r) if r.is_unreachable() => {
            Some(format!("the endpoint went away: {r}"))
        }
        FirstTokenError::NoLogprobs => Some(FirstTokenError::endpoint_refusal()),
        e if e.is_endpoint_gap() => Some(e.to_string()),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_testkit::json::same_bytes_both_ways;

    /// The item's `extra` writes what the former `json!` writer wrote, for every leg.
    #[test]
    fn the_typed_extra_writes_the_former_bytes() {
        for leg in Leg::ALL {
            let then = serde_json::json!({ "prompt": "p-1", "leg": leg.as_str() });
            let now = AdapterExtra {
                prompt: "p-1".into(),
                leg,
            };
            same_bytes_both_ways(&now, &then);
        }
    }
}
