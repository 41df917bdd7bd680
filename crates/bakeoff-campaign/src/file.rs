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

pub use crate::candidate::{CandidateSpec, FlagValue, Window};
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
    })
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    campaign: RawCampaign,
    #[serde(default)]
    candidate: Vec<RawCandidate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCampaign {
    name: String,
    fleet: PathBuf,
    suites: Vec<String>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    out: Option<PathBuf>,
    #[serde(default)]
    gpu_memory_gib: Option<f64>,
    #[serde(default)]
    margin_gib: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCandidate {
    name: String,
    seat: String,
    #[serde(default)]
    set_args: Ordered<toml::Value>,
    #[serde(default)]
    add_args: Vec<String>,
    #[serde(default)]
    remove_args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    ladder: Option<Ordered<Vec<toml::Value>>>,
    #[serde(default)]
    ladder_mode: Option<LadderMode>,
    #[serde(default)]
    window: Option<RawWindow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWindow {
    #[serde(default)]
    displaces: Vec<String>,
    #[serde(default)]
    idle_for_s: Option<u64>,
    #[serde(default)]
    idle_timeout_s: Option<u64>,
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
