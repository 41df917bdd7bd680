//! The campaign file (TOML, docs/campaign.md): parsed raw with serde (unknown keys are
//! errors naming the key), then validated into a [`Campaign`] that holds only checked values —
//! the fleet loaded, every seat and suite named exists, every ladder expands — so a campaign
//! never starts its first variant and then discovers a typo in its last.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bakeoff_artifact::campaign::LadderMode;
use bakeoff_seats::fleet::Launch;
use bakeoff_seats::{Fleet, Role};
use bakeoff_suites::SuiteName;
use serde::Deserialize;

pub use crate::candidate::{CandidateSpec, FlagValue, Isolate, Objective, Tune, Window};
use crate::error::{BadFlagValue, CampaignError, CandidateProblem, Invalid};
use crate::variant::{self, Variant};

/// A validated campaign.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub name: String,
    /// The campaign file.
    pub path: PathBuf,
    pub fleet: Fleet,
    pub suites: Vec<SuiteName>,
    pub limit: Option<u32>,
    /// Where everything is written.
    pub out: PathBuf,
    /// GPU size for hosts whose GPUs cannot be read (the memory check), GiB.
    pub gpu_memory_gib: Option<f64>,
    /// Headroom the memory check keeps free, GiB.
    pub margin_gib: f64,
    pub candidates: Vec<CandidateSpec>,
    /// Every variant, in campaign order.
    pub variants: Vec<Variant>,
}

impl Campaign {
    pub fn load(path: &Path) -> Result<Campaign, CampaignError> {
        let text = std::fs::read_to_string(path).map_err(|source| CampaignError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Campaign::parse(&text, path)
    }

    /// Parse and validate `text` as the campaign file at `path` (its `fleet` and `out` are
    /// relative to the file's directory).
    pub fn parse(text: &str, path: &Path) -> Result<Campaign, CampaignError> {
        let invalid = |problem: Invalid| CampaignError::Invalid {
            path: path.to_path_buf(),
            problem,
        };
        let raw: RawFile = toml::from_str(text)
            .map_err(|e| invalid(Invalid::Toml(bakeoff_seats::toml_line::one_line(&e, text))))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let c = raw.campaign;
        check_name("campaign name", &c.name).map_err(invalid)?;
        let fleet = Fleet::load(&dir.join(&c.fleet))?;
        let suites = SuiteName::parse_list(&c.suites.join(","))
            .map_err(|e| invalid(Invalid::Suites(e.to_string())))?;
        if suites.is_empty() {
            return Err(invalid(Invalid::NoSuites));
        }
        if c.limit == Some(0) {
            return Err(invalid(Invalid::ZeroLimit));
        }
        if let Some(g) = c.gpu_memory_gib
            && !(g.is_finite() && g > 0.0)
        {
            return Err(invalid(Invalid::GpuMemory(g)));
        }
        let margin_gib = c.margin_gib.unwrap_or(2.0);
        if !(margin_gib.is_finite() && margin_gib >= 0.0) {
            return Err(invalid(Invalid::Margin(margin_gib)));
        }
        if raw.candidate.is_empty() {
            return Err(invalid(Invalid::NoCandidate));
        }
        let mut candidates = Vec::new();
        for rc in raw.candidate {
            let spec = candidate(rc, &fleet).map_err(invalid)?;
            if candidates
                .iter()
                .any(|o: &CandidateSpec| o.name == spec.name)
            {
                return Err(invalid(Invalid::DuplicateCandidate(spec.name)));
            }
            candidates.push(spec);
        }
        let variants =
            variant::expand(&candidates, &fleet).map_err(|e| invalid(Invalid::Variant(e)))?;
        let out = lexical(
            &c.out
                .map(|o| dir.join(o))
                .unwrap_or_else(|| dir.join("results").join(&c.name)),
        );
        Ok(Campaign {
            name: c.name,
            path: path.to_path_buf(),
            fleet,
            suites,
            limit: c.limit,
            out,
            gpu_memory_gib: c.gpu_memory_gib,
            margin_gib,
            candidates,
            variants,
        })
    }

    pub fn candidate(&self, name: &str) -> Option<&CandidateSpec> {
        self.candidates.iter().find(|c| c.name == name)
    }

    /// Production seats some candidate's window displaces (they need `--confirm`).
    pub fn displaced_production(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in &self.candidates {
            for s in c.window.iter().flat_map(|w| &w.displaces) {
                let prod = self
                    .fleet
                    .seat(s)
                    .is_some_and(|seat| seat.role == Role::Production);
                if prod && !out.contains(s) {
                    out.push(s.clone());
                }
            }
        }
        out
    }
}

/// `a/b/../c` as `a/c`, without touching the file system (the directory may not exist yet),
/// so printed paths read as the operator would write them.
fn lexical(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// Lower-case letters, digits and single dashes.
fn check_name(what: &'static str, name: &str) -> Result<(), Invalid> {
    if name.is_empty()
        || name.len() > 80
        || bakeoff_artifact::slug::sanitize(name) != name
        || name.contains("--")
    {
        return Err(Invalid::Name {
            what,
            name: name.to_owned(),
            suggestion: bakeoff_artifact::slug::sanitize(name),
        });
    }
    Ok(())
}

fn candidate(rc: RawCandidate, fleet: &Fleet) -> Result<CandidateSpec, Invalid> {
    check_name("candidate name", &rc.name)?;
    let name = rc.name.clone();
    checked_candidate(rc, fleet).map_err(|problem| Invalid::Candidate {
        candidate: name,
        problem: Box::new(problem),
    })
}

/// A candidate whose name is checked, validated against the fleet.
fn checked_candidate(rc: RawCandidate, fleet: &Fleet) -> Result<CandidateSpec, CandidateProblem> {
    let seat = fleet
        .seat(&rc.seat)
        .ok_or_else(|| CandidateProblem::UnknownSeat {
            seat: rc.seat.clone(),
            declared: seat_names(fleet),
        })?;
    let docker = match &seat.launch {
        Launch::Docker(d) => Some(d),
        Launch::Process(_) => None,
    };
    if rc.image.is_some() && docker.is_none() {
        return Err(CandidateProblem::ImageOnProcessSeat {
            seat: seat.name.clone(),
        });
    }
    // A bench seat that restarts itself can come back after its stop and hold the port or the
    // GPU the displaced seats need for their restore (docs/field-cases.md F8: `restart: "no"`).
    if let Some(policy) = docker
        .and_then(|d| d.restart.as_deref())
        .filter(|p| *p != "no")
    {
        return Err(CandidateProblem::Restarts {
            seat: seat.name.clone(),
            policy: policy.to_owned(),
        });
    }
    let flag = |f: &str, what: &'static str| {
        if f.starts_with('-') && f.len() > 1 && !f.contains(char::is_whitespace) {
            Ok(())
        } else {
            Err(CandidateProblem::NotAFlag {
                what,
                flag: f.to_owned(),
            })
        }
    };
    let mut set_args = Vec::new();
    for (k, v) in rc.set_args.0 {
        flag(&k, "set_args key")?;
        set_args.push((
            k.clone(),
            flag_value(&v).map_err(|problem| CandidateProblem::SetArg {
                key: k.clone(),
                problem,
            })?,
        ));
    }
    for f in &rc.remove_args {
        flag(f, "remove_args entry")?;
    }
    let mut ladder = Vec::new();
    for (k, values) in rc.ladder.map(|l| l.0).unwrap_or_default() {
        flag(&k, "ladder key")?;
        let values = values
            .iter()
            .map(flag_value)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|problem| CandidateProblem::LadderValue {
                key: k.clone(),
                problem,
            })?;
        if values.is_empty() {
            return Err(CandidateProblem::EmptyLadder { key: k });
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(CandidateProblem::LadderTwice {
                    key: k,
                    value: v.as_str().to_owned(),
                });
            }
        }
        if set_args.iter().any(|(s, _)| s == &k) || rc.remove_args.contains(&k) {
            return Err(CandidateProblem::LadderAndSet { key: k });
        }
        ladder.push((k, values));
    }
    if rc.ladder_mode.is_some() && ladder.is_empty() {
        return Err(CandidateProblem::ModeWithoutLadder);
    }
    let window = rc.window.map(|w| window(w, fleet)).transpose()?;
    let isolate = rc.isolate.map(isolate).transpose()?;
    let tune = rc.tune.map(tune).transpose()?;
    Ok(CandidateSpec {
        name: rc.name,
        seat: rc.seat,
        set_args,
        add_args: rc.add_args,
        remove_args: rc.remove_args,
        env: rc.env,
        image: rc.image,
        note: rc.note,
        ladder,
        ladder_mode: rc.ladder_mode.unwrap_or_default(),
        window,
        isolate,
        tune,
    })
}

fn tune(t: RawTune) -> Result<Tune, CandidateProblem> {
    let bad = |s: String| CandidateProblem::Tune(s);
    let objective = match t.objective.as_deref().unwrap_or("throughput") {
        "throughput" => {
            if t.slo.is_some() {
                return Err(bad("slo is for objective = \"capacity\"; fix: remove it, or set objective = \"capacity\"".into()));
            }
            let concurrency = t.concurrency.clone().unwrap_or_else(|| vec![4]);
            if concurrency.is_empty() || concurrency.iter().any(|c| !(1..=4096).contains(c)) {
                return Err(bad(
                    "concurrency must list levels from 1 to 4096; fix: e.g. concurrency = [4]"
                        .into(),
                ));
            }
            Objective::Throughput { concurrency }
        }
        "capacity" => {
            let Some(slo) = t.slo.clone() else {
                return Err(bad(
                    "objective = \"capacity\" needs an slo; fix: e.g. slo = \"ttft=2s,tpot=200ms\""
                        .into(),
                ));
            };
            bakeoff_load::Slo::parse(&slo).map_err(|e| bad(format!("slo {slo:?}: {e}")))?;
            let rate = t.rate.unwrap_or(1.0);
            if !(rate.is_finite() && rate > 0.0 && rate <= 10_000.0) {
                return Err(bad(format!(
                    "rate = {rate} is out of range; fix: requests per second above 0 and at most 10000 (default 1)"
                )));
            }
            Objective::Capacity { slo, rate }
        }
        other => {
            return Err(bad(format!(
                "objective = {other:?} is not known; fix: \"throughput\" (peak output tok/s) or \"capacity\" (under an slo)"
            )));
        }
    };
    let space: Vec<(String, Vec<String>)> = t
        .space
        .0
        .into_iter()
        .map(|(k, vs)| {
            let vs: Vec<String> = vs
                .iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s.clone()),
                    toml::Value::Integer(i) => Ok(i.to_string()),
                    toml::Value::Float(f) => Ok(f.to_string()),
                    other => Err(bad(format!(
                        "space {k:?}: {other} is not a flag value; fix: strings or numbers"
                    ))),
                })
                .collect::<Result<_, _>>()?;
            Ok((k, vs))
        })
        .collect::<Result<_, CandidateProblem>>()?;
    if space.is_empty() || space.iter().any(|(_, v)| v.is_empty()) {
        return Err(bad("space must name at least one flag with at least one value; fix: e.g. [candidate.tune.space] \"-np\" = [1, 2, 4]".into()));
    }
    for (k, vs) in &space {
        if !(k.starts_with('-') && k.len() > 1) {
            return Err(bad(format!(
                "space key {k:?} is not a flag; fix: e.g. \"-np\""
            )));
        }
        for (i, v) in vs.iter().enumerate() {
            if vs[..i].contains(v) {
                return Err(bad(format!("space {k:?} lists {v:?} twice")));
            }
        }
    }
    let out = Tune {
        objective,
        requests: t.requests.unwrap_or(24),
        prompt_tokens: t.prompt_tokens.unwrap_or(128),
        output_tokens: t.output_tokens.unwrap_or(64),
        max_trials: t.max_trials.unwrap_or(8),
        min_gain: t.min_gain.unwrap_or(0.03),
        repeat: t.repeat.unwrap_or(3),
        space,
    };
    let range = |name: &str, v: u64, lo: u64, hi: u64| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(bad(format!(
                "{name} = {v} is out of range; fix: {lo} to {hi}"
            )))
        }
    };
    range("requests", out.requests, 4, 100_000)?;
    range("prompt_tokens", out.prompt_tokens, 1, 1_000_000)?;
    range("output_tokens", out.output_tokens, 1, 100_000)?;
    range("max_trials", u64::from(out.max_trials), 1, 100)?;
    range("repeat", u64::from(out.repeat), 1, 20)?;
    if !(out.min_gain.is_finite() && (0.0..1.0).contains(&out.min_gain)) {
        return Err(bad(format!(
            "min_gain = {} is out of range; fix: a share from 0 to below 1 (default 0.03)",
            out.min_gain
        )));
    }
    Ok(out)
}

fn isolate(i: RawIsolate) -> Result<Isolate, CandidateProblem> {
    let d = Isolate::default();
    let out = Isolate {
        max_starts: i.max_starts.unwrap_or(d.max_starts),
        budget_s: i.budget_s.unwrap_or(d.budget_s),
        max_gpu_memory_utilization: i
            .max_gpu_memory_utilization
            .unwrap_or(d.max_gpu_memory_utilization),
        alternatives: i.alternatives,
    };
    if let Some(empty) = out.alternatives.iter().position(|b| b.trim().is_empty()) {
        return Err(CandidateProblem::Isolate(format!(
            "alternatives[{empty}] is empty; fix: each entry an image (a Docker seat) or a command (a process seat), e.g. alternatives = [\"vllm/vllm-openai:v0.11.0\"]"
        )));
    }
    if !(1..=50).contains(&out.max_starts) {
        return Err(CandidateProblem::Isolate(format!(
            "max_starts = {} is out of range; fix: 1 to 50 (default {})",
            out.max_starts, d.max_starts
        )));
    }
    if !(1..=7 * 24 * 3600).contains(&out.budget_s) {
        return Err(CandidateProblem::Isolate(format!(
            "budget_s = {} is out of range; fix: 1 to 604800 seconds (default {})",
            out.budget_s, d.budget_s
        )));
    }
    let u = out.max_gpu_memory_utilization;
    if !(u.is_finite() && u > 0.0 && u <= 1.0) {
        return Err(CandidateProblem::Isolate(format!(
            "max_gpu_memory_utilization = {u} is out of range; fix: a fraction above 0 and at most 1 (default {})",
            d.max_gpu_memory_utilization
        )));
    }
    Ok(out)
}

fn window(w: RawWindow, fleet: &Fleet) -> Result<Window, CandidateProblem> {
    if w.displaces.is_empty() {
        return Err(CandidateProblem::DisplacesNothing);
    }
    for s in &w.displaces {
        if fleet.seat(s).is_none() {
            return Err(CandidateProblem::DisplacesUnknown {
                seat: s.clone(),
                declared: seat_names(fleet),
            });
        }
    }
    let idle_for_s = w.idle_for_s.unwrap_or(30);
    let idle_timeout_s = w.idle_timeout_s.unwrap_or(900);
    if idle_timeout_s < idle_for_s {
        return Err(CandidateProblem::IdleTimeout {
            idle_timeout_s,
            idle_for_s,
        });
    }
    Ok(Window {
        displaces: w.displaces,
        idle_for_s,
        idle_timeout_s,
    })
}

fn seat_names(fleet: &Fleet) -> String {
    fleet
        .seats
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A TOML value as a flag value: strings and numbers are values; `true` / `false` (booleans or
/// those strings) mean present / absent.
fn flag_value(v: &toml::Value) -> Result<FlagValue, BadFlagValue> {
    Ok(match v {
        toml::Value::Boolean(true) => FlagValue::Present,
        toml::Value::Boolean(false) => FlagValue::Absent,
        toml::Value::String(s) if s == "true" => FlagValue::Present,
        toml::Value::String(s) if s == "false" => FlagValue::Absent,
        toml::Value::String(s) => FlagValue::Value(s.clone()),
        toml::Value::Integer(i) => FlagValue::Value(i.to_string()),
        toml::Value::Float(f) => FlagValue::Value(f.to_string()),
        other => return Err(BadFlagValue(Box::new(other.clone()))),
    })
}

// ---- raw file ---------------------------------------------------------------------------

/// `[candidate.tune]`: once a variant of the candidate completes, search the flags of
/// `space` for the configuration that serves best (docs/campaign.md "Tuning").
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Tune")]
struct RawTune {
    /// `throughput` (default: peak output tok/s over `concurrency`) or `capacity` (the highest
    /// request rate meeting `slo`).
    #[serde(default)]
    objective: Option<String>,
    /// `capacity` only: the objectives, as `bench run --slo` takes them (`ttft=2s,tpot=200ms`).
    #[serde(default)]
    slo: Option<String>,
    /// `throughput` only: the closed-loop levels each trial is measured at (default [4]).
    #[serde(default)]
    concurrency: Option<Vec<u32>>,
    /// `capacity` only: the first rate tried, requests per second (default 1).
    #[serde(default)]
    rate: Option<f64>,
    /// Requests per measured step (default 24).
    #[serde(default)]
    requests: Option<u64>,
    /// Prompt tokens per request (default 128).
    #[serde(default)]
    prompt_tokens: Option<u64>,
    /// Output tokens per request (default 64).
    #[serde(default)]
    output_tokens: Option<u64>,
    /// Trials started at most, the base configuration's included (default 8).
    #[serde(default)]
    max_trials: Option<u32>,
    /// The relative gain a move needs over the best so far (default 0.03).
    #[serde(default)]
    min_gain: Option<f64>,
    /// Rounds of the winner against the base, alternately (default 3).
    #[serde(default)]
    repeat: Option<u32>,
    /// `[candidate.tune.space]`: each key a flag, each value the values searched.
    #[serde(default)]
    space: Ordered<Vec<toml::Value>>,
}

/// `[candidate.isolate]`: after a variant fails, design and run the probes that isolate its
/// cause (docs/campaign.md "Isolation that designs itself").
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Isolate")]
struct RawIsolate {
    /// Probes started at most (default 6).
    #[serde(default)]
    max_starts: Option<u32>,
    /// Seconds of probes at most (default 3600).
    #[serde(default)]
    budget_s: Option<u64>,
    /// The highest GPU-memory fraction a probe may ask (default 0.95).
    #[serde(default)]
    max_gpu_memory_utilization: Option<f64>,
    /// Other builds of the engine to ask, without a start, when the engine says it cannot run
    /// the checkpoint: images for a Docker seat, commands for a process seat.
    #[serde(default)]
    alternatives: Vec<String>,
}

/// A bakeoff campaign file (TOML): the campaign, and the candidates it tries (docs/campaign.md).
/// Unknown keys are errors; paths are relative to the campaign file.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "bakeoff campaign file")]
struct RawFile {
    /// `[campaign]`: what is run, with which suites, where it writes.
    campaign: RawCampaign,
    /// `[[candidate]]`: a configuration built from a fleet seat, with its ladder and window.
    #[serde(default)]
    candidate: Vec<RawCandidate>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Campaign")]
struct RawCampaign {
    /// Lower-case letters, digits, single dashes.
    name: String,
    /// The fleet file the hosts and seats come from.
    fleet: PathBuf,
    /// The suites each variant runs (`eval run --suite`).
    suites: Vec<String>,
    /// `eval run --limit`: a quick subset of each suite.
    #[serde(default)]
    limit: Option<u32>,
    /// Where it writes (default `results/<name>` beside this file; `campaign run --out` wins).
    #[serde(default)]
    out: Option<PathBuf>,
    /// The GPU's size, where no NVML or nvidia-smi reading exists.
    #[serde(default)]
    gpu_memory_gib: Option<f64>,
    /// The headroom the memory check keeps free (default 2).
    #[serde(default)]
    margin_gib: Option<f64>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Candidate")]
struct RawCandidate {
    /// Lower-case letters, digits, single dashes.
    name: String,
    /// The fleet seat whose launch is the base configuration.
    seat: String,
    /// Flags whose value is replaced (added when absent): `{ "-c" = "4096" }`.
    #[serde(default)]
    set_args: Ordered<toml::Value>,
    /// Arguments appended.
    #[serde(default)]
    add_args: Vec<String>,
    /// Flags removed, with their value when they have one.
    #[serde(default)]
    remove_args: Vec<String>,
    /// Environment variables merged over the seat's.
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Docker seats only: another image.
    #[serde(default)]
    image: Option<String>,
    /// Free text, copied into every artifact of this candidate.
    #[serde(default)]
    note: Option<String>,
    /// `[candidate.ladder]`: each key a flag, each value the alternatives tried (`true` /
    /// `false`: the flag present / absent); the variants are their product, in file order.
    #[serde(default)]
    ladder: Option<Ordered<Vec<toml::Value>>>,
    /// `all` (default) or `first-success`: stop at the first completed variant.
    #[serde(default)]
    ladder_mode: Option<LadderMode>,
    /// `[candidate.isolate]`: probes designed after a failure (off unless present).
    #[serde(default)]
    isolate: Option<RawIsolate>,
    /// `[candidate.tune]`: a search of flags once a variant completes (off unless present).
    #[serde(default)]
    tune: Option<RawTune>,
    /// `[candidate.window]`: the bench window, seats displaced while it runs.
    #[serde(default)]
    window: Option<RawWindow>,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Window")]
struct RawWindow {
    /// Seats stopped for this candidate and restored after.
    #[serde(default)]
    displaces: Vec<String>,
    /// Seconds each must show 0 running and 0 waiting requests first.
    #[serde(default)]
    idle_for_s: Option<u64>,
    /// Not idle by then: the candidate is skipped, never forced.
    #[serde(default)]
    idle_timeout_s: Option<u64>,
}

/// The JSON Schema of the campaign file (schemas/campaign-file.schema.json), for an editor's
/// checking.
pub fn file_json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RawFile)).unwrap_or(serde_json::Value::Null)
}

/// A flag's value in a campaign file: a string or a number is its value; `true` / `false`
/// mean the flag present / absent.
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
#[serde(untagged)]
enum FlagValueShape {
    Text(String),
    Integer(i64),
    Number(f64),
    Presence(bool),
}

/// A TOML table kept in file order: a ladder's variants are the product of its axes in the
/// order the operator wrote them (toml's own `Table` sorts its keys).
struct Ordered<V>(Vec<(String, V)>);

impl<V> Default for Ordered<V> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<V> {
            type Value = Ordered<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of flags")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, V>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}

/// A table of flags: each value a flag's value ([`FlagValueShape`]), or a list of them.
trait FlagShape {
    fn shape(g: &mut schemars::SchemaGenerator) -> schemars::Schema;
}

impl FlagShape for toml::Value {
    fn shape(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        g.subschema_for::<FlagValueShape>()
    }
}

impl FlagShape for Vec<toml::Value> {
    fn shape(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let item = g.subschema_for::<FlagValueShape>();
        schemars::json_schema!({ "type": "array", "items": item })
    }
}

impl<V: FlagShape> schemars::JsonSchema for Ordered<V> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FlagTable".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let value = V::shape(g);
        schemars::json_schema!({ "type": "object", "additionalProperties": value })
    }
}
