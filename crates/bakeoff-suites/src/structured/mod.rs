//! Structured-output suite (`--suite structured`): a battery of JSON Schemas grouped by feature
//! class, each with a prompt whose right answer is known, sent in the engine's request form
//! (`bakeoff_client::dialect::structured`). Each item is one outcome
//! ([`StructuredOutcome`]): `refused` (in the server's words), `not-enforced` (accepted, but
//! the reply is not JSON or violates the schema: the server's failure, never the model's),
//! `truncated`, `valid-wrong`, `valid-right`; `request-failed` is kept out of the score.
//!
//! The score is valid-right / n (every item but the failed requests) with a Wilson 95 %
//! interval, the suite's and each class's.

pub mod battery;
pub mod items;
pub mod judge;

use bakeoff_artifact::{
    ItemRecord, Outcome, StructuredClass, StructuredCounts, StructuredDetails, StructuredOutcome,
    SuiteResult,
};
use bakeoff_client::dialect::structured::{SchemaForm, backend_named};
use bakeoff_wire::{ChatRequest, Message};

use crate::outcome::record;
use crate::suite_run::{Recorder, SuiteContext, first_per};
use battery::StructuredItem;
use items::{StructuredExpected, StructuredExtra};

const DEFAULT: &str = include_str!("../../data/structured-default.jsonl");

/// The suite's name in artifacts.
pub const SUITE: &str = "structured";

/// The battery the run uses: `--structured-battery FILE`, else the shipped default.
pub fn load(path: Option<&std::path::Path>) -> Result<Vec<StructuredItem>, battery::BatteryError> {
    match path {
        Some(p) => battery::load(p),
        None => battery::parse(DEFAULT, "default (data/structured-default.jsonl)"),
    }
}

/// The first `limit` items of each class, in battery order.
pub fn subset(items: Vec<StructuredItem>, limit: Option<usize>) -> Vec<StructuredItem> {
    first_per(items, limit, |it| it.class.clone())
}

/// A schema's name as OpenAI's form wants it (`[A-Za-z0-9_-]`, at most 64 characters).
pub fn schema_name(id: &str) -> String {
    let n: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if n.is_empty() { "schema".into() } else { n }
}

/// The request of one item, its schema in `form`.
pub fn request(model: &str, item: &StructuredItem, form: SchemaForm) -> ChatRequest {
    let mut req = ChatRequest::new(
        model,
        vec![Message::user(&item.prompt)],
        item.max_tokens(),
        true,
    );
    form.apply(&schema_name(&item.id), &item.schema, &mut req.extra);
    req
}

/// The artifact's outcome class of a structured outcome (the suite's own is
/// `extra.outcome`).
pub fn item_outcome(o: StructuredOutcome, error: Option<&bakeoff_client::RequestError>) -> Outcome {
    match o {
        StructuredOutcome::ValidRight => Outcome::Ok,
        StructuredOutcome::ValidWrong | StructuredOutcome::NotEnforced => Outcome::Wrong,
        StructuredOutcome::Truncated => Outcome::Truncated,
        StructuredOutcome::Refused => Outcome::HttpError,
        StructuredOutcome::RequestFailed => error
            .map(crate::outcome::outcome_of_error)
            .unwrap_or(Outcome::ConnectionError),
    }
}

/// Per-class counts in first-seen order, each with its score.
pub fn classes(judged: &[(String, StructuredOutcome, Option<String>)]) -> Vec<StructuredClass> {
    let mut out: Vec<StructuredClass> = Vec::new();
    for (class, o, refusal) in judged {
        let i = match out.iter().position(|c| &c.class == class) {
            Some(i) => i,
            None => {
                out.push(StructuredClass {
                    class: class.clone(),
                    ..StructuredClass::default()
                });
                out.len() - 1
            }
        };
        if let Some(c) = out.get_mut(i) {
            c.counts.add(*o);
            if let Some(r) = refusal {
                c.refusals.push(r.clone());
            }
        }
    }
    for c in &mut out {
        c.score = crate::summary::score(c.counts.valid_right, c.counts.n);
    }
    out
}

/// Put the figures into a suite result: `score` = valid-right / n with its Wilson interval,
/// `passed` = valid-right, `scored` = n; nothing counted is `failed`.
pub fn summarize(result: &mut SuiteResult, mut details: StructuredDetails) {
    let mut totals = StructuredCounts::default();
    for c in &details.classes {
        let t = &c.counts;
        totals.items += t.items;
        totals.refused += t.refused;
        totals.not_enforced += t.not_enforced;
        totals.truncated += t.truncated;
        totals.valid_wrong += t.valid_wrong;
        totals.valid_right += t.valid_right;
        totals.request_failed += t.request_failed;
        totals.n += t.n;
    }
    let s = &mut result.summary;
    s.passed = totals.valid_right;
    s.scored = totals.n;
    s.score = crate::summary::score(totals.valid_right, totals.n);
    if totals.n == 0 && !result.items.is_empty() {
        result.status = bakeoff_artifact::SuiteStatus::Failed;
    }
    if totals.not_enforced > 0 {
        s.flags.push(bakeoff_artifact::InstrumentFlag {
            code: bakeoff_artifact::FlagCode::SchemaNotEnforced,
            severity: bakeoff_artifact::FlagSeverity::Warning,
            message: format!(
                "the server accepted {} schema(s) and returned output that is not JSON or \
                 violates the schema: a failure of the server's constraining, not a score of \
                 the model",
                totals.not_enforced
            ),
            suite: Some(SUITE.to_owned()),
            count: Some(totals.not_enforced),
        });
    }
    details.totals = totals;
    details.reasoning = Some(crate::summary::reasoning_totals(&result.items));
    crate::summary::write_details(&mut result.summary, SUITE, &details);
}

/// The structured outcome of a finished record of this suite (`extra.outcome`).
pub fn outcome_of(item: &ItemRecord) -> Option<StructuredOutcome> {
    item.extra
        .get("outcome")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

pub async fn run(ctx: &SuiteContext<'_>, rec: &mut Recorder<'_>) -> SuiteResult {
    let Ok(items) = load(ctx.options.structured_battery.as_deref()) else {
        // The binary validates --structured-battery before the run starts.
        return rec.result(0, Vec::new());
    };
    let items = subset(items, ctx.options.limit);
    let asked = ctx.options.schema_form;
    let form = asked.resolve(ctx.facts.engine, ctx.facts.engine_version.as_deref());
    let mut done = Vec::with_capacity(items.len());
    let mut judged = Vec::with_capacity(items.len());
    let mut backend: Option<String> = None;
    for item in &items {
        let validator = match battery::validator(&item.schema) {
            Ok(v) => v,
            // Checked as the battery loaded; a schema that stops compiling is skipped.
            Err(_) => continue,
        };
        let mut req = request(&ctx.model, item, form);
        ctx.options
            .thinking
            .apply_scored(ctx.facts.engine, &mut req);
        let Some(ex) = rec.guard(ctx.client.chat_stream(&req)).await else {
            break;
        };
        let j = judge::judge(&ex, &validator, &item.answer);
        if backend.is_none()
            && let Some(w) = &j.words
        {
            backend = backend_named(ctx.facts.engine, w).map(str::to_owned);
        }
        let mut r = record(
            &item.id,
            &req,
            &ex,
            item_outcome(j.outcome, ex.error.as_ref()),
            Some(j.detail.clone()),
            serde_json::Value::Null,
        );
        let expected = StructuredExpected {
            class: item.class.clone(),
            answer: item.answer.clone(),
        };
        rec.writes().expected(&mut r, &expected);
        let extra = extra_of(item, &j, form);
        rec.writes().extra(&mut r, &extra);
        judged.push((
            item.class.clone(),
            j.outcome,
            j.words.as_ref().map(|w| format!("{}: {w}", item.id)),
        ));
        let go_on = rec.record(&r).await;
        done.push(r);
        if !go_on {
            break;
        }
    }
    let mut result = rec.result(items.len(), done);
    if result.status == bakeoff_artifact::SuiteStatus::Failed
        && judged
            .iter()
            .any(|(_, o, _)| *o != StructuredOutcome::RequestFailed)
    {
        // A refusal is an HTTP error that measured something: the server's answer to the
        // schema. Only failed requests leave a suite that measured nothing.
        result.status = if rec.interrupted() || result.items.len() < items.len() {
            bakeoff_artifact::SuiteStatus::Incomplete
        } else {
            bakeoff_artifact::SuiteStatus::Complete
        };
    }
    let battery = ctx
        .options
        .structured_battery
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "default".into());
    let details = StructuredDetails {
        form: form.as_str().to_owned(),
        form_asked: asked.as_str().to_owned(),
        backend,
        battery: Some(battery),
        classes: classes(&judged),
        ..StructuredDetails::default()
    };
    summarize(&mut result, details);
    result
}

/// An item's `extra`, from the judgement of its reply.
fn extra_of(item: &StructuredItem, j: &judge::Judged, form: SchemaForm) -> StructuredExtra {
    StructuredExtra {
        class: item.class.clone(),
        outcome: j.outcome,
        form: form.as_str().to_owned(),
        words: j.words.clone(),
        violation: j.violation.clone(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_battery_loads_with_every_class() {
        let all = load(None).unwrap();
        assert_eq!(all.len(), 25);
        let classes: std::collections::BTreeSet<&str> =
            all.iter().map(|i| i.class.as_str()).collect();
        assert_eq!(classes.len(), 10, "{classes:?}");
        assert_eq!(subset(all.clone(), Some(1)).len(), 10);
        // Every known answer is valid against its own schema: a right answer can pass.
        for it in &all {
            let v = battery::validator(&it.schema).unwrap();
            assert!(
                v.is_valid(&it.answer) || !it.answer.is_object() || {
                    // Answers may leave out keys the schema requires (checked by `differs`):
                    // only the large invoice does, and only its free-text description.
                    it.id == "large-invoice"
                },
                "{}",
                it.id
            );
        }
    }

    #[test]
    fn classes_score_valid_right_of_everything_but_failed_requests() {
        use StructuredOutcome as O;
        let j: Vec<(String, O, Option<String>)> = [
            ("a", O::ValidRight),
            ("a", O::NotEnforced),
            ("a", O::RequestFailed),
            ("b", O::Refused),
        ]
        .into_iter()
        .map(|(c, o)| (c.to_owned(), o, None))
        .collect();
        let c = classes(&j);
        assert_eq!(c[0].counts.n, 2);
        assert_eq!(c[0].score.as_ref().unwrap().successes, 1);
        assert_eq!(c[1].counts.refused, 1);
        let mut result = SuiteResult {
            status: bakeoff_artifact::SuiteStatus::Complete,
            summary: crate::summary::summarize(4, &[]),
            items: Vec::new(),
        };
        summarize(
            &mut result,
            StructuredDetails {
                classes: c,
                ..StructuredDetails::default()
            },
        );
        let d: StructuredDetails = result.summary.details_as().unwrap();
        assert_eq!(
            (d.totals.n, d.totals.valid_right, d.totals.not_enforced),
            (3, 1, 1)
        );
        assert_eq!(
            result.summary.flags[0].code,
            bakeoff_artifact::FlagCode::SchemaNotEnforced
        );
    }
}
