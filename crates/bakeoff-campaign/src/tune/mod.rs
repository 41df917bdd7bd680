//! Tuning a passing candidate (docs/campaign.md "Tuning"): from the candidate's first variant
//! that completed, a coordinate search ([`search`]) over the flags of `[candidate.tune.space]`,
//! each trial a real, watched start of its own variant measured by a `bench run` sweep
//! in-process (a configuration the memory check refuses is `does-not-fit`, never started);
//! then the winner against the base configuration, both up at once and measured alternately
//! as `bench run --versus` does, the answer a paired difference with its interval — "no better
//! than the default" is an answer.
//!
//! [`walk`] replays the search over the journal's rows, so a killed campaign resumes
//! mid-search without repeating a finished trial.

mod compare;
pub mod search;

pub(crate) use compare::Compare;

use std::collections::BTreeMap;
use std::path::PathBuf;

use bakeoff_artifact::campaign::{
    AxisValue, OutcomeKind, TrialRecord, TuneComparison, TuningRecord, VariantRow,
};
use bakeoff_artifact::{Artifact, LoadReport};
use bakeoff_load::{LoadPlan, Mode, StepBound};
use bakeoff_seats::fleet::Launch;
use tokio::sync::watch;

use crate::candidate::{Objective, Tune};
use crate::file::Campaign;
use crate::variant::{Change, Variant, derived_variant, spellings};
use search::{Config, Lookup, Step};

/// The value a configuration keeps when the base's launch does not set the flag.
pub const BASE_VALUE: &str = "base";

/// Where a candidate's tuning stands.
#[derive(Debug, Clone)]
pub struct TuneWalk {
    pub record: TuningRecord,
    pub next: Option<TuneNext>,
}

/// What to run next.
#[derive(Debug, Clone)]
pub enum TuneNext {
    /// A trial: its variant and its row's record.
    Trial(Box<(Variant, TrialRecord)>),
    /// The final comparison.
    Versus(Box<Versus>),
}

/// The final comparison: the base configuration's trial and the winner's, and the row's
/// record (its slug is `<base>-tune-versus`).
#[derive(Debug, Clone)]
pub struct Versus {
    pub base: Variant,
    pub winner: Variant,
    pub record: TrialRecord,
    pub slug: String,
}

/// `output tok/s` or `capacity req/s`.
pub fn objective_name(t: &Tune) -> &'static str {
    match t.objective {
        Objective::Throughput { .. } => "output tok/s",
        Objective::Capacity { .. } => "capacity req/s",
    }
}

/// The sweep a trial is measured with.
pub fn plan(t: &Tune) -> LoadPlan {
    let mut p = LoadPlan::new("default");
    p.bound = StepBound {
        requests: Some(t.requests),
        duration: None,
        completed: None,
    };
    // A trial's sweep climbs once from its lowest level on a freshly started seat: no busier
    // step precedes a quieter one, so a warm-up before each would only cost the trial time.
    p.step_warmup = 0;
    p.prompt_tokens = bakeoff_load::lengths::LengthSpec::Fixed(t.prompt_tokens as u32);
    p.output_tokens = bakeoff_load::lengths::LengthSpec::Fixed(t.output_tokens as u32);
    match &t.objective {
        Objective::Throughput { concurrency } => {
            p.mode = Mode::Closed {
                concurrency: concurrency.clone(),
            };
        }
        Objective::Capacity { slo, rate } => {
            p.mode = Mode::Open {
                rates: vec![*rate],
                arrival: bakeoff_load::schedule::Arrival::Poisson,
                max_in_flight: None,
            };
            p.slo = bakeoff_load::Slo::parse(slo).ok();
            p.find_capacity = Some(bakeoff_load::plan::CapacitySearch::default());
        }
    }
    p
}

/// A trial's value of the objective from its artifact: the peak output tokens/s over its
/// steps, or the highest rate meeting the SLO.
pub fn objective_value(art: &Artifact, objective: &str) -> Option<f64> {
    let r: &LoadReport = art.load.get("throughput")?;
    if objective == "capacity req/s" {
        return r.capacity.as_ref()?.slo.as_ref()?.level;
    }
    r.steps
        .iter()
        .filter(|s| s.ok > 0)
        .filter_map(|s| s.output_tokens_per_second)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

fn args_of(v: &Variant) -> &[String] {
    match &v.seat.launch {
        Launch::Process(p) => &p.args,
        Launch::Docker(d) => &d.command,
    }
}

/// The base's own value of each axis (`base` where its launch does not set the flag).
fn base_config(base: &Variant, t: &Tune) -> Config {
    t.space
        .iter()
        .map(|(flag, _)| {
            bakeoff_model::args::flag_value(args_of(base), &spellings(flag))
                .unwrap_or(BASE_VALUE)
                .to_string()
        })
        .collect()
}

fn changes(config: &Config, base: &Config, t: &Tune) -> Vec<Change> {
    t.space
        .iter()
        .zip(config.iter().zip(base))
        .filter(|(_, (v, b))| v != b && v.as_str() != BASE_VALUE)
        .map(|((flag, _), (v, _))| Change::Set(flag.clone(), v.clone()))
        .collect()
}

fn trial_index(c: &Campaign, candidate: &str, step: u32) -> u32 {
    let pos = c
        .candidates
        .iter()
        .position(|x| x.name == candidate)
        .unwrap_or(0) as u32;
    c.variants.len() as u32 + 100 * pos + 50 + step
}

fn axis_values(config: &Config, t: &Tune) -> Vec<AxisValue> {
    t.space
        .iter()
        .zip(config)
        .map(|((flag, _), v)| AxisValue {
            flag: flag.clone(),
            value: v.clone(),
        })
        .collect()
}

/// The variant a tuning starts from: the candidate's first variant of the file that completed.
pub fn base<'a>(
    c: &'a Campaign,
    candidate: &str,
    rows: &BTreeMap<String, VariantRow>,
) -> Option<&'a Variant> {
    c.variants
        .iter()
        .filter(|v| v.candidate == candidate)
        .find(|v| {
            rows.get(&v.slug)
                .is_some_and(|r| r.outcome.kind == OutcomeKind::Completed)
        })
}

fn started(row: &VariantRow) -> bool {
    row.attempts > 0
        && matches!(
            row.outcome.kind,
            OutcomeKind::Completed | OutcomeKind::Invalid | OutcomeKind::Failed
        )
}

/// The tuning of `candidate` as the journal's rows have it.
pub fn walk(
    c: &Campaign,
    candidate: &str,
    t: &Tune,
    rows: &BTreeMap<String, VariantRow>,
) -> Option<TuneWalk> {
    let base = base(c, candidate, rows)?;
    let base_cfg = base_config(base, t);
    // Each axis's values, the base's own included (the search starts there).
    let values: Vec<Vec<String>> = t
        .space
        .iter()
        .zip(&base_cfg)
        .map(|((_, vs), b)| {
            let mut vs = vs.clone();
            if !vs.contains(b) {
                vs.insert(0, b.clone());
            }
            vs
        })
        .collect();
    let grid: u32 = values.iter().map(|v| v.len() as u32).product();
    let variant_of = |cfg: &Config, step: u32| {
        derived_variant(
            base,
            &changes(cfg, &base_cfg, t),
            trial_index(c, candidate, step),
            "tune",
            "base",
        )
    };
    let objective = objective_name(t).to_string();
    let lookup = |cfg: &Config| match rows.get(&variant_of(cfg, 0).slug) {
        Some(r) if r.outcome.kind.is_final() => {
            Lookup::Done(r.trial.as_ref().and_then(|t| t.value))
        }
        _ => Lookup::Pending,
    };
    let trial_rows: Vec<&VariantRow> = rows
        .values()
        .filter(|r| {
            r.trial
                .as_ref()
                .is_some_and(|tr| tr.base == base.slug && tr.step > 0)
                && r.outcome.kind.is_final()
        })
        .collect();
    let trials = trial_rows.iter().filter(|r| started(r)).count() as u32;
    let value_of = |cfg: &Config| match lookup(cfg) {
        Lookup::Done(v) => v,
        Lookup::Pending => None,
    };
    let mut record = TuningRecord {
        candidate: candidate.to_string(),
        base: base.slug.clone(),
        method: "coordinate search".into(),
        objective: objective.clone(),
        slo: match &t.objective {
            Objective::Capacity { slo, .. } => Some(slo.clone()),
            Objective::Throughput { .. } => None,
        },
        status: "in-progress".into(),
        trials,
        max_trials: t.max_trials,
        grid,
        best: axis_values(&base_cfg, t),
        best_value: None,
        base_value: value_of(&base_cfg),
        best_variant: None,
        comparison: None,
        summary: String::new(),
    };
    let step = search::next(&base_cfg, &values, t.min_gain, lookup);
    let (best, best_val) = match step {
        Step::Next(cfg) => {
            if trials >= t.max_trials {
                // The budget cut the search: the best measured so far stands, said as such.
                let best = trial_rows
                    .iter()
                    .filter_map(|r| Some((r, r.trial.as_ref()?.value?)))
                    .max_by(|a, b| a.1.total_cmp(&b.1));
                record.status = "stopped".into();
                if let Some((r, v)) = best {
                    record.best = r
                        .trial
                        .as_ref()
                        .map(|t| t.config.clone())
                        .unwrap_or_default();
                    record.best_value = Some(v);
                    record.best_variant = Some(r.variant.clone());
                }
                record.summary = format!(
                    "stopped: {trials} of {} trials used before the search converged; the best measured so far is kept, not compared",
                    t.max_trials
                );
                return Some(TuneWalk { record, next: None });
            }
            let v = variant_of(&cfg, trial_rows.len() as u32 + 1);
            let tr = TrialRecord {
                base: base.slug.clone(),
                step: trial_rows.len() as u32 + 1,
                config: axis_values(&cfg, t),
                objective,
                value: None,
                comparison: None,
            };
            record.summary = format!("trial {}: {}", tr.step, v.delta.join("; "));
            return Some(TuneWalk {
                record,
                next: Some(TuneNext::Trial(Box::new((v, tr)))),
            });
        }
        Step::Best(best, val) => (best, val),
    };
    record.best = axis_values(&best, t);
    record.best_value = best_val;
    record.best_variant = Some(variant_of(&best, 0).slug);
    if best == base_cfg || best_val.is_none() {
        record.status = "searched".into();
        record.summary = format!(
            "searched {trials} of the grid's {grid} configurations: no configuration beat the base by more than {:.0} %: no better than the default",
            t.min_gain * 100.0
        );
        return Some(TuneWalk { record, next: None });
    }
    let slug = format!("{}-tune-versus", base.slug);
    if let Some(r) = rows.get(&slug).filter(|r| r.outcome.kind.is_final()) {
        record.status = "compared".into();
        record.comparison = r.trial.as_ref().and_then(|t| t.comparison.clone());
        record.summary = match &record.comparison {
            Some(k) => format!(
                "searched {trials} of the grid's {grid} configurations; the winner against the base, {} rounds alternately: {:+.1} {} [{:+.1}, {:+.1}]: {}",
                k.repeats, k.difference, k.metric, k.low, k.high, k.verdict
            ),
            None => format!(
                "searched {trials} of the grid's {grid} configurations; the comparison with the base did not measure: {}",
                r.outcome.message
            ),
        };
        return Some(TuneWalk { record, next: None });
    }
    record.summary = format!(
        "searched {trials} of the grid's {grid} configurations; the winner is compared with the base next"
    );
    let winner = variant_of(&best, 0);
    let base_trial = variant_of(&base_cfg, 0);
    let tr = TrialRecord {
        base: base.slug.clone(),
        step: 0,
        config: axis_values(&best, t),
        objective: objective.clone(),
        value: None,
        comparison: None,
    };
    Some(TuneWalk {
        record,
        next: Some(TuneNext::Versus(Box::new(Versus {
            base: base_trial,
            winner,
            record: tr,
            slug,
        }))),
    })
}

/// Every candidate's tuning, as the journal's rows have it (for `campaign.json`).
pub fn records(c: &Campaign, rows: &BTreeMap<String, VariantRow>) -> Vec<TuningRecord> {
    c.candidates
        .iter()
        .filter_map(|cand| walk(c, &cand.name, cand.tune.as_ref()?, rows))
        .map(|w| w.record)
        .collect()
}

/// No progress lines for a trial's sweep: the campaign's own progress says which trial runs.
struct Quiet;

impl bakeoff_measure::bench::BenchProgress for Quiet {
    fn ceiling(&self, _event: bakeoff_measure::ceiling::CeilingEvent) {}
    fn sweep(&self, _steps: Option<usize>) -> std::sync::Arc<dyn bakeoff_load::Progress> {
        std::sync::Arc::new(bakeoff_load::NoProgress)
    }
}

fn client_of(
    v: &Variant,
    url: bakeoff_client::EndpointUrl,
) -> (
    bakeoff_client::Client,
    bakeoff_suites::preflight::PreflightOptions,
) {
    let tls = bakeoff_client::tls::Tls::new(&v.seat.tls_options()).unwrap_or_default();
    let client = bakeoff_client::Client::new(
        url,
        bakeoff_client::ClientOptions {
            api_key: v.seat.api_key(),
            tls,
            ..Default::default()
        },
    );
    let preflight = bakeoff_suites::preflight::PreflightOptions {
        model: v.seat.served_model_names.first().cloned(),
        max_model_len: None,
        ready_timeout: std::time::Duration::from_secs(60),
        probe_tools: false,
    };
    (client, preflight)
}

/// A trial's (or the comparison's) artifacts in the campaign's directory, named for the variant.
fn output<'a>(c: &'a Campaign, v: &Variant, what: &str) -> bakeoff_measure::Output<'a> {
    bakeoff_measure::Output {
        naming: bakeoff_measure::Naming {
            slug: Some(v.slug.clone()),
            hardware: None,
            notes: vec![format!(
                "campaign {} {what} {} (candidate {}): {}",
                c.name,
                v.slug,
                v.candidate,
                if v.delta.is_empty() {
                    "the base configuration".to_string()
                } else {
                    v.delta.join("; ")
                }
            )],
        },
        slug_suffix: "-bench",
        out: &c.out,
        replace: false,
        run_record: bakeoff_artifact::RunRecord::bench_run(false),
    }
}

/// A trial's sweep against its ready seat, in-process, into the campaign's directory; `Err`:
/// why it measured nothing.
pub(crate) async fn bench(
    c: &Campaign,
    v: &Variant,
    url: bakeoff_client::EndpointUrl,
    plan: &LoadPlan,
    stop: &watch::Receiver<bool>,
) -> Result<(Artifact, PathBuf), String> {
    let (client, preflight) = client_of(v, url);
    let req = bakeoff_measure::bench::BenchRequest {
        client: &client,
        preflight: &preflight,
        // The trial's plan carries the campaign's one ceiling (or none, said where it failed).
        plan,
        pin: true,
        ceilings: None,
        output: output(c, v, "tuning trial"),
        versus: None,
        schema: None,
        progress: &Quiet,
    };
    let stop = stop.clone();
    match bakeoff_measure::bench::run(req, move || (stop, ())).await {
        Ok(bakeoff_measure::bench::Benched::One(e)) => Ok((e.artifact, e.path)),
        Ok(bakeoff_measure::bench::Benched::Versus(_)) => Err("a single sweep was asked".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The winner against the base, alternately (`bench run --versus`): both seats up at once
/// (the winner on its own port), `repeat` rounds, the paired difference of the objective's
/// figure at the first level.
pub(crate) async fn versus(
    c: &Campaign,
    t: &Tune,
    base_url: bakeoff_client::EndpointUrl,
    base: &Variant,
    winner_url: bakeoff_client::EndpointUrl,
    winner: &Variant,
    stop: &watch::Receiver<bool>,
) -> Result<TuneComparison, String> {
    let (a, a_pre) = client_of(base, base_url);
    let (b, b_pre) = client_of(winner, winner_url);
    let mut plan = plan(t);
    // The comparison is of one figure at one level: the first closed-loop level (capacity
    // searches compare at the start rate's level, closed loop, where the output rate is the
    // figure both sides share).
    let level = match &t.objective {
        Objective::Throughput { concurrency } => concurrency.first().copied().unwrap_or(1),
        Objective::Capacity { .. } => 1,
    };
    plan.mode = Mode::Closed {
        concurrency: vec![level],
    };
    plan.slo = None;
    plan.find_capacity = None;
    plan.repeat = t.repeat;
    let req = bakeoff_measure::bench::BenchRequest {
        client: &a,
        preflight: &a_pre,
        plan: &plan,
        pin: true,
        ceilings: None,
        output: output(c, base, "tuning comparison, base"),
        versus: Some(bakeoff_measure::bench::Versus {
            client: &b,
            preflight: &b_pre,
            allow_contaminated: true,
        }),
        schema: None,
        progress: &Quiet,
    };
    let stop = stop.clone();
    let vb = match bakeoff_measure::bench::run(req, move || (stop, ())).await {
        Ok(bakeoff_measure::bench::Benched::Versus(vb)) => vb,
        Ok(_) => return Err("the comparison measured one side only".into()),
        Err(e) => return Err(e.to_string()),
    };
    let d = vb
        .comparison
        .levels
        .iter()
        .flat_map(|l| l.differences.iter().map(move |d| (l, d)))
        .find(|(_, d)| d.metric == "output tok/s")
        .ok_or_else(|| {
            format!(
                "the comparison has no output tok/s difference{}",
                if vb.comparison.not_comparable.is_empty() {
                    String::new()
                } else {
                    format!(": {}", vb.comparison.not_comparable.join("; "))
                }
            )
        })?;
    let (l, d) = d;
    let (low, high) = (d.low.unwrap_or(f64::NAN), d.high.unwrap_or(f64::NAN));
    let verdict = if low > 0.0 {
        "better"
    } else if high < 0.0 {
        "worse"
    } else {
        "no better than the default"
    };
    let rel = |p: &std::path::Path| crate::record::relative(&c.out, p);
    Ok(TuneComparison {
        metric: format!("output tok/s at {}", l.label),
        repeats: l.pairs.unwrap_or(0) as u32,
        difference: d.diff,
        low,
        high,
        base_mean: d.a.mean,
        winner_mean: d.b.mean,
        verdict: verdict.into(),
        artifacts: vec![rel(&vb.a.path), rel(&vb.b.path), rel(&vb.comparison_path)],
    })
}
