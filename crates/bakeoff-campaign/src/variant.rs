//! Variants: each candidate's ladder expanded (the product of its axes, in file order) into
//! seats — the base seat's launch with the candidate's changes and the variant's axis values —
//! each with its configuration delta against the base, in words.
//!
//! A variant's seat is a `bench` seat named after the variant, on the base seat's host and
//! port: the port check then sees the base seat (and every other seat on that port) as a
//! sibling, so a candidate can only start where nothing else serves or after a window
//! displaced what did.

use bakeoff_artifact::campaign::AxisValue;
use bakeoff_artifact::slug::sanitize;
use bakeoff_seats::fleet::Launch;
use bakeoff_seats::{Fleet, Role, Seat};

use crate::candidate::{CandidateSpec, FlagValue};

/// One configuration to bring up and measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub candidate: String,
    /// Names its seat and its artifacts (`<slug>.bakeoff.json`).
    pub slug: String,
    /// Position in the campaign, from 1.
    pub index: u32,
    /// This variant's value on each of its candidate's axes.
    pub axes: Vec<(String, FlagValue)>,
    /// What differs from the base seat, one change per entry.
    pub delta: Vec<String>,
    /// The seat it runs as (real values: launch from this, print [`Variant::launch_line`]).
    pub seat: Seat,
    /// The fleet seat it was derived from.
    pub base_seat: String,
}

impl Variant {
    pub fn axis_values(&self) -> Vec<AxisValue> {
        self.axes
            .iter()
            .map(|(flag, v)| AxisValue {
                flag: flag.clone(),
                value: v.as_str().to_string(),
            })
            .collect()
    }

    /// The exact launch, redacted: what `--dry-run` prints and records keep.
    pub fn launch_line(&self) -> String {
        launch_line(&self.seat)
    }
}

/// A seat's launch in one line, redacted, placeholders expanded as the backend expands them.
pub fn launch_line(seat: &Seat) -> String {
    let seat = seat.redacted();
    let sub = |s: &str| bakeoff_seats::process::substitute(s, &seat);
    let env = |env: &std::collections::BTreeMap<String, String>| {
        env.iter()
            .map(|(k, v)| format!("{k}={} ", sub(v)))
            .collect::<String>()
    };
    match &seat.launch {
        Launch::Process(p) => format!(
            "{}{} {}",
            env(&p.env),
            sub(&p.command),
            p.args.iter().map(|a| sub(a)).collect::<Vec<_>>().join(" ")
        )
        .trim_end()
        .to_string(),
        Launch::Docker(d) => format!(
            "container {} image {} {}{}",
            seat.container_name().unwrap_or_default(),
            d.image,
            env(&d.env),
            d.command
                .iter()
                .map(|a| sub(a))
                .collect::<Vec<_>>()
                .join(" ")
        )
        .trim_end()
        .to_string(),
    }
}

/// Why a campaign's candidates do not expand into variants (the campaign file is invalid).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariantError {
    #[error("candidate {candidate}: seat {seat:?} is not in the fleet")]
    UnknownSeat { candidate: String, seat: String },
    #[error(
        "variant {slug:?} (candidate {candidate}) collides with another variant or a fleet seat of that name; rename the candidate"
    )]
    Collides { slug: String, candidate: String },
}

/// Every variant of every candidate, in campaign order.
pub fn expand(candidates: &[CandidateSpec], fleet: &Fleet) -> Result<Vec<Variant>, VariantError> {
    let mut out: Vec<Variant> = Vec::new();
    for c in candidates {
        let base = fleet
            .seat(&c.seat)
            .ok_or_else(|| VariantError::UnknownSeat {
                candidate: c.name.clone(),
                seat: c.seat.clone(),
            })?;
        for axes in product(&c.ladder) {
            let slug = variant_slug(&c.name, &axes);
            if out.iter().any(|v| v.slug == slug) || fleet.seat(&slug).is_some() {
                return Err(VariantError::Collides {
                    slug,
                    candidate: c.name.clone(),
                });
            }
            let (seat, delta) = derive(base, c, &axes, &slug);
            out.push(Variant {
                candidate: c.name.clone(),
                slug,
                index: out.len() as u32 + 1,
                axes,
                delta,
                seat,
                base_seat: base.name.clone(),
            });
        }
    }
    Ok(out)
}

/// The product of the axes, the first axis varying slowest; one empty combination when there
/// is no ladder.
fn product(ladder: &[(String, Vec<FlagValue>)]) -> Vec<Vec<(String, FlagValue)>> {
    let mut combos: Vec<Vec<(String, FlagValue)>> = vec![Vec::new()];
    for (flag, values) in ladder {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((flag.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
}

/// `gemma-small`, `gemma-small-c-8192-flash-attn-on`, `gemma-small-no-cuda-graphs`.
fn variant_slug(candidate: &str, axes: &[(String, FlagValue)]) -> String {
    let mut slug = candidate.to_string();
    for (flag, v) in axes {
        let name = sanitize(flag);
        let part = match v {
            FlagValue::Value(v) => format!("{name}-{}", sanitize(v)),
            FlagValue::Present => name,
            FlagValue::Absent => format!("no-{name}"),
        };
        slug.push('-');
        slug.push_str(&part);
    }
    sanitize(&slug)
}

/// The variant's seat and its delta against the base: remove_args, then set_args, then the
/// axis values, then add_args; env merged over the seat's; the image replaced.
fn derive(
    base: &Seat,
    c: &CandidateSpec,
    axes: &[(String, FlagValue)],
    slug: &str,
) -> (Seat, Vec<String>) {
    let mut seat = base.clone();
    seat.name = slug.to_string();
    seat.role = Role::Bench;
    let mut delta = Vec::new();
    let (args, env) = match &mut seat.launch {
        Launch::Process(p) => (&mut p.args, &mut p.env),
        Launch::Docker(d) => {
            // Its own container: never the base seat's (which a window may keep created).
            d.container_name = None;
            if let Some(image) = &c.image {
                delta.push(format!("image {image} (was {})", d.image));
                d.image = image.clone();
            }
            (&mut d.command, &mut d.env)
        }
    };
    for f in &c.remove_args {
        delta.push(match remove(args, f) {
            Some(removed) => format!("- {removed}"),
            None => format!("- {f} (was absent)"),
        });
    }
    for (flag, v) in c.set_args.iter().chain(axes) {
        delta.push(apply(args, flag, v));
    }
    if !c.add_args.is_empty() {
        args.extend(c.add_args.iter().cloned());
        delta.push(format!("+ {}", c.add_args.join(" ")));
    }
    // The memory plan prices a seat by its `gpu_memory_utilization` key before its flags: a
    // variant that changes the engine's fraction must carry the new one there too.
    let fraction = bakeoff_model::args::flag_value(
        args,
        &["--gpu-memory-utilization", "--mem-fraction-static"],
    )
    .and_then(|v| v.parse::<f64>().ok());
    if fraction.is_some() {
        seat.gpu_memory_utilization = fraction;
    }
    for (k, v) in &c.env {
        let shown = if bakeoff_seats::redact::secret_name(k) {
            "<redacted>".to_string()
        } else {
            v.clone()
        };
        delta.push(match env.insert(k.clone(), v.clone()) {
            Some(_) => format!("env {k}={shown} (replaced)"),
            None => format!("env {k}={shown}"),
        });
    }
    (seat, delta)
}

/// One change a probe makes to the variant it isolates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Set a flag's value (added when absent).
    Set(String, String),
    /// Add a switch (`--enforce-eager`).
    Add(String),
    /// Remove a flag and its value.
    Remove(String),
    /// Set an environment variable.
    Env(String, String),
}

impl Change {
    /// As an axis of the probe's row: the flag and its value (`true`/`false` for presence).
    pub fn axis(&self) -> (String, String) {
        match self {
            Change::Set(f, v) => (f.clone(), v.clone()),
            Change::Add(f) => (f.clone(), "true".into()),
            Change::Remove(f) => (f.clone(), "false".into()),
            Change::Env(k, v) => (format!("env {k}"), v.clone()),
        }
    }

    /// `-c 4096`, `+ --enforce-eager`, `- --foo`, `env K=V`.
    pub fn text(&self) -> String {
        match self {
            Change::Set(f, v) => format!("{f} {v}"),
            Change::Add(f) => format!("+ {f}"),
            Change::Remove(f) => format!("- {f}"),
            Change::Env(k, v) => format!("env {k}={v}"),
        }
    }

    fn slug_part(&self) -> String {
        match self {
            Change::Set(f, v) => format!("{}-{}", sanitize(f), sanitize(v)),
            Change::Add(f) => sanitize(f),
            Change::Remove(f) => format!("no-{}", sanitize(f)),
            Change::Env(k, v) => format!("env-{}-{}", sanitize(k), sanitize(v)),
        }
    }
}

/// A probe's variant: `parent`'s seat with `changes`, named `<parent>-probe-<changes>` (the
/// same changes always give the same name, so a resumed isolation finds its finished probes),
/// `again` when there is none (a flake check).
pub fn probe_variant(parent: &Variant, changes: &[Change], index: u32) -> Variant {
    derived_variant(parent, changes, index, "probe", "again")
}

/// A variant derived from `parent` with `changes`, named `<parent>-<infix>-<changes>` (or
/// `<parent>-<infix>-<empty>` without a change): a probe's (`probe`, `again`) or a tuning
/// trial's (`tune`, `base`).
pub fn derived_variant(
    parent: &Variant,
    changes: &[Change],
    index: u32,
    infix: &str,
    empty: &str,
) -> Variant {
    let parts: Vec<String> = changes.iter().map(Change::slug_part).collect();
    let tail = if parts.is_empty() {
        empty.to_string()
    } else {
        parts.join("-")
    };
    let slug = sanitize(&format!("{}-{infix}-{tail}", parent.slug));
    let mut seat = parent.seat.clone();
    seat.name = slug.clone();
    let mut delta = parent.delta.clone();
    let (args, env) = match &mut seat.launch {
        Launch::Process(p) => (&mut p.args, &mut p.env),
        Launch::Docker(d) => (&mut d.command, &mut d.env),
    };
    let mut axes = parent.axes.clone();
    for ch in changes {
        delta.push(match ch {
            Change::Set(f, v) => apply(args, f, &FlagValue::Value(v.clone())),
            Change::Add(f) => apply(args, f, &FlagValue::Present),
            Change::Remove(f) => apply(args, f, &FlagValue::Absent),
            Change::Env(k, v) => match env.insert(k.clone(), v.clone()) {
                Some(old) => format!("env {k}={v} (was {old})"),
                None => format!("env {k}={v}"),
            },
        });
        let value = match ch {
            Change::Set(_, v) | Change::Env(_, v) => FlagValue::Value(v.clone()),
            Change::Add(_) => FlagValue::Present,
            Change::Remove(_) => FlagValue::Absent,
        };
        let flag = ch.axis().0;
        match axes.iter_mut().find(|(f, _)| *f == flag) {
            Some(a) => a.1 = value,
            None => axes.push((flag, value)),
        }
    }
    let fraction = bakeoff_model::args::flag_value(
        args,
        &["--gpu-memory-utilization", "--mem-fraction-static"],
    )
    .and_then(|v| v.parse::<f64>().ok());
    if fraction.is_some() {
        seat.gpu_memory_utilization = fraction;
    }
    Variant {
        candidate: parent.candidate.clone(),
        slug,
        index,
        axes,
        delta,
        seat,
        base_seat: parent.base_seat.clone(),
    }
}

/// Apply one flag value and say what changed.
fn apply(args: &mut Vec<String>, flag: &str, v: &FlagValue) -> String {
    match v {
        FlagValue::Value(value) => match set(args, flag, value) {
            Some(old) if old == *value => format!("{flag} {value} (unchanged)"),
            Some(old) => format!("{flag} {value} (was {old})"),
            None => format!("+ {flag} {value}"),
        },
        FlagValue::Present => {
            if find(args, flag).is_some() {
                format!("{flag} (already present)")
            } else {
                args.push(flag.to_string());
                format!("+ {flag}")
            }
        }
        FlagValue::Absent => match remove(args, flag) {
            Some(removed) => format!("- {removed}"),
            None => format!("- {flag} (was absent)"),
        },
    }
}

/// Spellings of one flag, so `-c` finds `--ctx-size` (llama.cpp `common/arg.cpp`; vLLM's
/// `EngineArgs`). A flag not listed is matched as written.
const ALIASES: &[&[&str]] = &[
    &["-c", "--ctx-size"],
    &["-m", "--model"],
    &["-np", "--parallel"],
    &["-ngl", "--gpu-layers", "--n-gpu-layers"],
    &["-fa", "--flash-attn"],
    &["-t", "--threads"],
    &["-b", "--batch-size"],
    &["-ub", "--ubatch-size"],
    &["-ctk", "--cache-type-k"],
    &["-ctv", "--cache-type-v"],
    &["-a", "--alias"],
    &["-hf", "--hf-repo"],
    &["-tp", "--tensor-parallel-size"],
    &["-pp", "--pipeline-parallel-size"],
    &["-q", "--quantization"],
];

pub(crate) fn spellings(flag: &str) -> Vec<&str> {
    ALIASES
        .iter()
        .find(|g| g.contains(&flag))
        .map(|g| g.to_vec())
        .unwrap_or_else(|| vec![flag])
}

/// Where a flag sits: its index, and whether its value is the next argument, joined with `=`,
/// or absent (a bare switch).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    Separate,
    Joined,
    Bare,
}

fn is_value(arg: &str) -> bool {
    !arg.starts_with('-') || arg.parse::<f64>().is_ok()
}

fn find(args: &[String], flag: &str) -> Option<(usize, Form)> {
    let names = spellings(flag);
    args.iter().enumerate().find_map(|(i, a)| {
        if names.contains(&a.as_str()) {
            let separate = args.get(i + 1).is_some_and(|n| is_value(n));
            Some((i, if separate { Form::Separate } else { Form::Bare }))
        } else if names
            .iter()
            .any(|n| a.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
        {
            Some((i, Form::Joined))
        } else {
            None
        }
    })
}

/// Set `flag`'s value (added at the end when absent); the old value when there was one.
fn set(args: &mut Vec<String>, flag: &str, value: &str) -> Option<String> {
    match find(args, flag) {
        Some((i, Form::Separate)) => Some(std::mem::replace(&mut args[i + 1], value.to_string())),
        Some((i, Form::Joined)) => {
            let (name, old) = args[i]
                .split_once('=')
                .map(|(n, o)| (n.to_string(), o.to_string()))?;
            args[i] = format!("{name}={value}");
            Some(old)
        }
        Some((i, Form::Bare)) => {
            args.insert(i + 1, value.to_string());
            Some(String::from("(no value)"))
        }
        None => {
            args.push(flag.to_string());
            args.push(value.to_string());
            None
        }
    }
}

/// Remove `flag` and its value; what was removed, as it was written.
fn remove(args: &mut Vec<String>, flag: &str) -> Option<String> {
    let (i, form) = find(args, flag)?;
    Some(match form {
        Form::Separate => {
            let removed: Vec<String> = args.drain(i..i + 2).collect();
            removed.join(" ")
        }
        Form::Joined | Form::Bare => args.remove(i),
    })
}

/// The fleet with the variants' seats added: what the seat operations, the port check and
/// the memory check run against.
pub fn fleet_with<'a>(fleet: &Fleet, variants: impl IntoIterator<Item = &'a Variant>) -> Fleet {
    let mut f = fleet.clone();
    for v in variants {
        if f.seat(&v.seat.name).is_none() {
            f.seats.push(v.seat.clone());
        }
    }
    f
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn set_finds_every_spelling_and_form() {
        let mut a = args("-m /m --ctx-size 1024 --flash-attn=on --metrics");
        assert_eq!(set(&mut a, "-c", "4096").as_deref(), Some("1024"));
        assert_eq!(set(&mut a, "-fa", "off").as_deref(), Some("on"));
        assert_eq!(set(&mut a, "-np", "2"), None);
        assert_eq!(
            a,
            args("-m /m --ctx-size 4096 --flash-attn=off --metrics -np 2")
        );
    }

    #[test]
    fn remove_takes_the_value_only_when_there_is_one() {
        let mut a = args("--no-warmup -c 1024 --metrics --port 8080");
        assert_eq!(
            remove(&mut a, "--no-warmup").as_deref(),
            Some("--no-warmup")
        );
        assert_eq!(remove(&mut a, "-c").as_deref(), Some("-c 1024"));
        assert_eq!(remove(&mut a, "--absent"), None);
        assert_eq!(a, args("--metrics --port 8080"));
        // A negative number is a value, not a flag.
        let mut a = args("--seed -1 --x");
        assert_eq!(remove(&mut a, "--seed").as_deref(), Some("--seed -1"));
    }

    #[test]
    fn the_product_follows_file_order() {
        let ladder = vec![
            (
                "-c".to_string(),
                vec![
                    FlagValue::Value("8192".into()),
                    FlagValue::Value("4096".into()),
                ],
            ),
            (
                "--no-graphs".to_string(),
                vec![FlagValue::Present, FlagValue::Absent],
            ),
        ];
        let slugs: Vec<String> = product(&ladder)
            .iter()
            .map(|a| variant_slug("gemma", a))
            .collect();
        assert_eq!(
            slugs,
            [
                "gemma-c-8192-no-graphs",
                "gemma-c-8192-no-no-graphs",
                "gemma-c-4096-no-graphs",
                "gemma-c-4096-no-no-graphs"
            ]
        );
        assert_eq!(product(&[]).len(), 1);
    }
}
