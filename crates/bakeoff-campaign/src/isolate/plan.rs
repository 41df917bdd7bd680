//! The planner: given the failure being isolated and what the probes so far showed, the next
//! probe or the conclusion. A pure function of its inputs, so a resumed campaign replays it
//! over its journal and arrives at the same probes (finished ones are never started again).

use bakeoff_artifact::FailureClass;
use bakeoff_artifact::campaign::IsolationStatus;

use super::table::{self, GraphsOff, Levers, ProbeKind};
use super::words::{self, KvStated};
use crate::variant::Change;

/// What the planner knows of the failed configuration.
#[derive(Debug, Clone)]
pub struct Failed {
    pub class: FailureClass,
    /// The engine's words: the outcome's message, its notable lines and the kept log.
    pub text: String,
    /// The failed launch's arguments (for the current window, sequences, layers, fraction).
    pub args: Vec<String>,
    /// The seat's memory limit (a Docker seat's `memory`), bytes.
    pub memory_limit: Option<i64>,
}

/// What a probe showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// It became ready (its suites' result aside).
    Ready,
    Failed {
        class: FailureClass,
        text: String,
    },
    /// It was not started (the memory check, a pre-start refusal): the label says why.
    NotStarted(String),
}

impl Seen {
    pub fn ready(&self) -> bool {
        matches!(self, Seen::Ready)
    }
}

/// A designed probe.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub kind: ProbeKind,
    pub hypothesis: String,
    pub changes: Vec<Change>,
    pub if_ready: String,
    pub if_failed: String,
}

impl Probe {
    /// `--enforce-eager, -c 131072`: what it changes against the failed configuration.
    pub fn label(&self) -> String {
        if self.changes.is_empty() {
            return "the same configuration again".into();
        }
        let parts: Vec<String> = self.changes.iter().map(Change::text).collect();
        parts.join(", ")
    }
}

/// How an isolation ends.
#[derive(Debug, Clone, PartialEq)]
pub struct Conclusion {
    pub status: IsolationStatus,
    pub factor: Option<String>,
    /// Indices into the probes seen: the one that started and the one that failed (`None` for
    /// the failed variant itself).
    pub passed: Option<usize>,
    pub failed: Option<usize>,
    pub summary: String,
    /// Probes the proof (or the table's end) leaves out, as `hypothesis: probe`.
    pub not_attempted: Vec<String>,
}

/// The planner's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Start this probe; `if_cut` is what stands when the budget cuts it.
    Probe {
        probe: Probe,
        if_cut: Conclusion,
    },
    Conclude(Conclusion),
}

fn probe(kind: ProbeKind, hypothesis: String, changes: Vec<Change>) -> Probe {
    let row = table::row_of(kind);
    Probe {
        kind,
        hypothesis,
        changes,
        if_ready: row.map(|r| r.if_ready.to_string()).unwrap_or_default(),
        if_failed: row.map(|r| r.if_failed.to_string()).unwrap_or_default(),
    }
}

fn not_isolated(summary: impl Into<String>) -> Conclusion {
    Conclusion {
        status: IsolationStatus::NotIsolated,
        factor: None,
        passed: None,
        failed: None,
        summary: summary.into(),
        not_attempted: Vec::new(),
    }
}

fn isolated(
    factor: impl Into<String>,
    passed: Option<usize>,
    failed: Option<usize>,
    summary: impl Into<String>,
) -> Conclusion {
    Conclusion {
        status: IsolationStatus::Isolated,
        factor: Some(factor.into()),
        passed,
        failed,
        summary: summary.into(),
        not_attempted: Vec::new(),
    }
}

fn ask(p: Probe, if_cut: Conclusion) -> Decision {
    Decision::Probe { probe: p, if_cut }
}

fn budget_cut() -> Conclusion {
    not_isolated("not isolated: the budget ran out before a probe separated a start from a failure")
}

fn value_of<T: std::str::FromStr>(args: &[String], names: &[&str]) -> Option<T> {
    bakeoff_model::args::flag_value(args, names).and_then(|v| v.parse().ok())
}

/// A window rounded down to a multiple of 256 (llama.cpp pads its context to 256; vLLM's
/// blocks are 16 tokens), at least 256.
fn round_window(w: u64) -> u64 {
    (w / 256 * 256).max(256)
}

/// The resolution of a window search: 1/16 of the failed window, a multiple of 256.
pub fn window_step(window: u64) -> u64 {
    round_window(window / 16)
}

/// The next step of the isolation of `failed`, given the probes `seen` (in order).
pub fn decide(
    failed: &Failed,
    levers: &Levers,
    max_fraction: f64,
    seen: &[(Probe, Seen)],
) -> Decision {
    use FailureClass as C;
    match failed.class {
        C::BadArgument => bad_argument(failed, seen),
        C::ContextTooLong => context_too_long(failed, levers, seen),
        C::InitWedge => init_wedge(failed, levers, seen),
        C::KvCacheBudget => kv_budget(failed, levers, max_fraction, seen),
        C::CudaOom | C::HostOom => out_of_memory(failed, levers, seen),
        C::Exited | C::CrashLoop => flake(seen),
        c if table::ENGINE_SUPPORT.contains(&c) => Decision::Conclude(isolated(
            format!("engine support ({c}, in the engine's own words)"),
            None,
            None,
            "the engine states it cannot run this checkpoint as deployed; no start of this build changes that: list other images or engine versions under alternatives = [...] to have them asked",
        )),
        c => Decision::Conclude(not_isolated(format!(
            "not isolated: the decision table has no probe for {c}"
        ))),
    }
}

fn bad_argument(failed: &Failed, seen: &[(Probe, Seen)]) -> Decision {
    // Each probe leaves out every flag refused so far: the last one's changes are the list.
    let removed: Vec<String> = seen
        .last()
        .into_iter()
        .flat_map(|(p, _)| p.changes.iter())
        .filter_map(|c| match c {
            Change::Remove(f) => Some(f.clone()),
            _ => None,
        })
        .collect();
    let text = match seen.last() {
        None => failed.text.clone(),
        Some((_, Seen::Ready)) => {
            let flags: Vec<String> = removed.iter().map(|f| format!("`{f}`")).collect();
            let n = seen.len() - 1;
            return Decision::Conclude(isolated(
                if flags.len() == 1 {
                    format!("the flag {} is the cause", flags[0])
                } else {
                    format!("the flags {} are the cause", flags.join(" and "))
                },
                Some(n),
                n.checked_sub(1),
                format!(
                    "the engine refused {}; without {} the start was ready",
                    flags.join(", "),
                    if flags.len() == 1 { "it" } else { "them" }
                ),
            ));
        }
        Some((
            _,
            Seen::Failed {
                class: FailureClass::BadArgument,
                text,
            },
        )) => text.clone(),
        Some((p, other)) => {
            return Decision::Conclude(not_isolated(format!(
                "not isolated: without the refused flag(s) the start did not succeed either ({}: {})",
                p.label(),
                seen_text(other)
            )));
        }
    };
    let Some(flag) = words::refused_flag(&text) else {
        return Decision::Conclude(not_isolated(
            "not isolated: the engine's refusal names no flag bakeoff can read",
        ));
    };
    if removed.contains(&flag) {
        return Decision::Conclude(not_isolated(format!(
            "not isolated: the engine still refuses `{flag}` after it was left out"
        )));
    }
    let mut changes: Vec<Change> = removed.into_iter().map(Change::Remove).collect();
    changes.push(Change::Remove(flag.clone()));
    ask(
        probe(
            ProbeKind::LeaveOutRefusedFlag,
            format!("the flag `{flag}` the engine refused"),
            changes,
        ),
        budget_cut(),
    )
}

fn seen_text(s: &Seen) -> String {
    match s {
        Seen::Ready => "ready".into(),
        Seen::Failed { class, .. } => format!("failed:{class}"),
        Seen::NotStarted(why) => why.clone(),
    }
}

fn context_too_long(failed: &Failed, levers: &Levers, seen: &[(Probe, Seen)]) -> Decision {
    let Some(names) = levers.window else {
        return Decision::Conclude(not_isolated(
            "not isolated: bakeoff knows no window flag for this engine",
        ));
    };
    let Some(derived) = words::derived_window(&failed.text) else {
        return Decision::Conclude(not_isolated(
            "not isolated: the engine's words state no derived window",
        ));
    };
    let asked: Option<u64> = value_of(&failed.args, names);
    match seen.first() {
        None => ask(
            probe(
                ProbeKind::DerivedWindow,
                format!(
                    "the window {} is above the {derived} the engine derived",
                    asked.map_or("asked".to_string(), |a| a.to_string())
                ),
                vec![Change::Set(names[0].to_string(), derived.to_string())],
            ),
            budget_cut(),
        ),
        Some((_, Seen::Ready)) => Decision::Conclude(isolated(
            format!(
                "the window: {} is above the checkpoint's {derived}; {derived} starts",
                asked.map_or("the asked window".to_string(), |a| a.to_string())
            ),
            Some(0),
            None,
            format!(
                "the engine derived {derived} from the checkpoint and a start at {derived} was ready"
            ),
        )),
        Some((p, other)) => Decision::Conclude(not_isolated(format!(
            "not isolated: at the derived window the start did not succeed either ({}: {})",
            p.label(),
            seen_text(other)
        ))),
    }
}

fn graphs_change(g: GraphsOff) -> Change {
    match g {
        GraphsOff::Flag(f) => Change::Add(f.to_string()),
        GraphsOff::Env(k, v) => Change::Env(k.to_string(), v.to_string()),
    }
}

fn init_wedge(failed: &Failed, levers: &Levers, seen: &[(Probe, Seen)]) -> Decision {
    let window: Option<u64> = levers.window.and_then(|n| value_of(&failed.args, n));
    let graphs = levers.graphs_off.map(graphs_change);
    let find = |k: ProbeKind| seen.iter().position(|(p, _)| p.kind == k);
    let ready = |i: Option<usize>| i.map(|i| seen[i].1.ready());
    let set_window = |w: u64| -> Option<Change> {
        Some(Change::Set(levers.window?[0].to_string(), w.to_string()))
    };
    let wtxt = |w: Option<u64>| w.map_or("the same window".to_string(), |w| w.to_string());
    // 1. Graphs off at the same window.
    let g = find(ProbeKind::GraphsOff);
    if g.is_none()
        && let Some(ch) = &graphs
    {
        return ask(
            probe(
                ProbeKind::GraphsOff,
                format!("graph capture at {}", wtxt(window)),
                vec![ch.clone()],
            ),
            budget_cut(),
        );
    }
    // 2. The window halved, graphs on.
    let h = find(ProbeKind::WindowHalved);
    if h.is_none()
        && let Some(w) = window
        && let Some(ch) = set_window(round_window(w / 2))
    {
        return ask(
            probe(ProbeKind::WindowHalved, format!("the window {w}"), vec![ch]),
            budget_cut(),
        );
    }
    match (ready(g), ready(h)) {
        (Some(true), Some(false)) | (Some(true), None) => {
            let Some(gi) = g else {
                return Decision::Conclude(budget_cut());
            };
            Decision::Conclude(isolated(
                "graph capture",
                Some(gi),
                h,
                format!(
                    "graphs off at {} was ready; {}",
                    wtxt(window),
                    match (h, window) {
                        (Some(_), Some(w)) =>
                            format!("graphs on at {} wedged as well", round_window(w / 2)),
                        _ => "no window probe was possible (the window is not set)".into(),
                    }
                ),
            ))
        }
        (Some(true), Some(true)) => Decision::Conclude(isolated(
            format!("graph capture at the window {}", wtxt(window)),
            g,
            None,
            format!(
                "graphs off at {} was ready, and graphs on at {} was ready: the wedge needs both graph capture and the larger window",
                wtxt(window),
                window.map_or("half".into(), |w| round_window(w / 2).to_string())
            ),
        )),
        (Some(false), Some(true)) | (None, Some(true)) => {
            window_threshold(failed, levers, window, seen)
        }
        (Some(false), Some(false)) => {
            let b = find(ProbeKind::GraphsOffWindowHalved);
            match b.map(|i| &seen[i].1) {
                None => {
                    let (Some(gc), Some(w), Some(wc)) = (
                        graphs.clone(),
                        window,
                        window.and_then(|w| set_window(round_window(w / 2))),
                    ) else {
                        return Decision::Conclude(not_isolated(
                            "not isolated: neither graphs off nor half the window started",
                        ));
                    };
                    ask(
                        probe(
                            ProbeKind::GraphsOffWindowHalved,
                            format!("graph capture and the window {w} together"),
                            vec![gc, wc],
                        ),
                        budget_cut(),
                    )
                }
                Some(Seen::Ready) => Decision::Conclude(isolated(
                    "graph capture and the window, together",
                    b,
                    g,
                    "neither graphs off nor half the window alone started; both together did",
                )),
                Some(_) => Decision::Conclude(not_isolated(
                    "not isolated: neither graphs off, half the window, nor both started; the wedge lies elsewhere",
                )),
            }
        }
        (None, Some(false)) => Decision::Conclude(not_isolated(
            "not isolated: half the window wedged too, and this engine has no graphs lever",
        )),
        (Some(false), None) => Decision::Conclude(not_isolated(
            "not isolated: graphs off wedged too, and the window is not set, so it cannot be halved",
        )),
        (None, None) => Decision::Conclude(not_isolated(
            "not isolated: this engine has no graphs lever and the window is not set",
        )),
    }
}

/// The window is the factor: bisect between the largest window that started (graphs on) and
/// the smallest that did not, to one step.
fn window_threshold(
    failed: &Failed,
    levers: &Levers,
    window: Option<u64>,
    seen: &[(Probe, Seen)],
) -> Decision {
    let (Some(w), Some(names)) = (window, levers.window) else {
        return Decision::Conclude(not_isolated("not isolated: the window is not set"));
    };
    let _ = failed;
    let mut lo: Option<(u64, usize)> = None;
    let mut hi: (u64, Option<usize>) = (w, None);
    for (i, (p, s)) in seen.iter().enumerate() {
        if !matches!(p.kind, ProbeKind::WindowHalved | ProbeKind::WindowBisect) {
            continue;
        }
        let Some(pw) = p.changes.iter().find_map(|c| match c {
            Change::Set(f, v) if names.contains(&f.as_str()) => v.parse::<u64>().ok(),
            _ => None,
        }) else {
            continue;
        };
        match s {
            Seen::Ready if lo.is_none_or(|(l, _)| pw > l) => lo = Some((pw, i)),
            Seen::Failed { .. } if pw < hi.0 => hi = (pw, Some(i)),
            _ => {}
        }
    }
    let Some((l, li)) = lo else {
        return Decision::Conclude(not_isolated("not isolated: no window started"));
    };
    let step = window_step(w);
    let found = isolated(
        format!("the window: {l} starts, {} wedges (graphs on)", hi.0),
        Some(li),
        hi.1,
        format!(
            "graphs off at {w} wedged too, and smaller windows with graphs on started: the threshold lies between {l} and {}",
            hi.0
        ),
    );
    if hi.0.saturating_sub(l) <= step {
        return Decision::Conclude(found);
    }
    let mid = round_window(l + (hi.0 - l) / 2);
    if mid <= l || mid >= hi.0 {
        return Decision::Conclude(found);
    }
    ask(
        probe(
            ProbeKind::WindowBisect,
            format!("the window's threshold between {l} and {}", hi.0),
            vec![Change::Set(names[0].to_string(), mid.to_string())],
        ),
        found,
    )
}

fn kv_budget(
    failed: &Failed,
    levers: &Levers,
    max_fraction: f64,
    seen: &[(Probe, Seen)],
) -> Decision {
    match words::kv_stated(&failed.text) {
        Some(KvStated::MaxTokens(m)) => predicted_window(
            failed,
            levers,
            round_window(m),
            "the engine's stated KV budget",
            seen,
        ),
        Some(KvStated::Negative(gib)) => {
            encoder_reservation(failed, levers, max_fraction, gib, seen)
        }
        None => Decision::Conclude(not_isolated(
            "not isolated: the engine's words state no KV budget bakeoff can read",
        )),
    }
}

/// A predicted window, confirmed by a start there and a failure one step above.
fn predicted_window(
    failed: &Failed,
    levers: &Levers,
    predicted: u64,
    from: &str,
    seen: &[(Probe, Seen)],
) -> Decision {
    let Some(names) = levers.window else {
        return Decision::Conclude(not_isolated(
            "not isolated: bakeoff knows no window flag for this engine",
        ));
    };
    let window: Option<u64> = value_of(&failed.args, names);
    let step = window_step(window.unwrap_or(predicted.saturating_mul(2)));
    let set = |w: u64| vec![Change::Set(names[0].to_string(), w.to_string())];
    match seen.first() {
        None => ask(
            probe(
                ProbeKind::PredictedWindow,
                format!("the window: {from} holds {predicted} tokens"),
                set(predicted),
            ),
            budget_cut(),
        ),
        Some((_, Seen::Ready)) => match seen.get(1) {
            None => ask(
                probe(
                    ProbeKind::StepAbovePredicted,
                    format!("{predicted} is the largest window that fits"),
                    set(predicted + step),
                ),
                isolated(
                    format!("the window: {predicted} starts ({from})"),
                    Some(0),
                    None,
                    format!("{predicted} started; the step above was not tried (budget)"),
                ),
            ),
            Some((_, Seen::Ready)) => Decision::Conclude(isolated(
                format!(
                    "the window: {} starts too ({from} predicted {predicted})",
                    predicted + step
                ),
                Some(1),
                None,
                format!(
                    "the prediction {predicted} is conservative: one step above, {}, started as well",
                    predicted + step
                ),
            )),
            Some(_) => {
                let found = isolated(
                    format!(
                        "the window: the largest that fits is {predicted} ({} fails)",
                        predicted + step
                    ),
                    Some(0),
                    Some(1),
                    format!(
                        "{from} predicted {predicted}; {predicted} started and {} did not",
                        predicted + step
                    ),
                );
                compact_kv_cache(failed, levers, predicted, window, found, seen)
            }
        },
        Some((p, other)) => Decision::Conclude(not_isolated(format!(
            "not isolated: the predicted window did not start ({}: {})",
            p.label(),
            seen_text(other)
        ))),
    }
}

/// Once the window is isolated: the lever that keeps the asked window, an 8-bit KV cache,
/// priced by the stated budget first (half the bytes per token hold twice the tokens). Started
/// only where the price says it fits; its outcome is added to the window's conclusion.
fn compact_kv_cache(
    failed: &Failed,
    levers: &Levers,
    budget_tokens: u64,
    window: Option<u64>,
    mut found: Conclusion,
    seen: &[(Probe, Seen)],
) -> Decision {
    let (Some((names, compact)), Some(w)) = (levers.kv_dtype, window) else {
        return Decision::Conclude(found);
    };
    let now: Option<String> = value_of(&failed.args, names);
    if now.as_deref().is_some_and(|d| d != "auto") {
        // Already a chosen dtype (fp8 or another): nothing cheaper to price.
        return Decision::Conclude(found);
    }
    let holds = budget_tokens.saturating_mul(2);
    let lever = format!("{} {compact}", names[0]);
    if holds < w {
        found.not_attempted.push(format!(
            "a compact KV cache at the asked window: {lever} (priced out: the stated budget at 8 bits holds about {holds} tokens, below {w})"
        ));
        return Decision::Conclude(found);
    }
    match seen.get(2) {
        None => ask(
            probe(
                ProbeKind::CompactKvCache,
                format!("{lever} keeps the window {w} (the budget at 8 bits holds about {holds})"),
                vec![Change::Set(names[0].to_string(), compact.to_string())],
            ),
            // Cut by the budget: the window stands; the walk lists the probe as not attempted.
            found,
        ),
        Some((_, Seen::Ready)) => {
            found.summary = format!(
                "{}; with {lever} the asked window {w} started: a lever that keeps it",
                found.summary
            );
            Decision::Conclude(found)
        }
        Some((_, other)) => {
            found.summary = format!(
                "{}; with {lever} the asked window {w} did not start either ({})",
                found.summary,
                seen_text(other)
            );
            Decision::Conclude(found)
        }
    }
}

/// A negative budget on a multimodal checkpoint: vLLM profiles the encoder with its largest
/// dummy items before it sizes the KV cache, so the encoder's share comes out of the budget.
/// The language model alone is one start, tried before the fraction: the engine states the
/// encoder's budget in tokens, not bytes, so it cannot be priced first. When it does not start,
/// the fraction follows, and its conclusion carries what the language model alone left.
fn encoder_reservation(
    failed: &Failed,
    levers: &Levers,
    max_fraction: f64,
    gib: f64,
    seen: &[(Probe, Seen)],
) -> Decision {
    let encoder = words::encoder_budget(&failed.text);
    let lever = levers
        .language_model_only
        .filter(|flag| !failed.args.iter().any(|a| a == flag));
    let (Some(flag), Some(tokens)) = (lever, encoder) else {
        return more_gpu_memory(failed, levers, max_fraction, gib, seen);
    };
    match seen.first() {
        None => ask(
            probe(
                ProbeKind::LanguageModelOnly,
                format!(
                    "the multimodal encoder's reservation (an encoder cache of {tokens} tokens profiled; {gib:.2} GiB left to the KV cache)"
                ),
                vec![Change::Add(flag.to_string())],
            ),
            budget_cut(),
        ),
        Some((_, Seen::Ready)) => Decision::Conclude(isolated(
            format!("the multimodal encoder's reservation: {flag} starts"),
            Some(0),
            None,
            format!(
                "with the encoder profiled the engine left {gib:.2} GiB to the KV cache; the language model alone started (the seat then serves text only)"
            ),
        )),
        Some((_, other)) => {
            let without = match other {
                Seen::Failed { text, .. } => match words::kv_stated(text) {
                    Some(KvStated::Negative(g)) => Some(g),
                    _ => None,
                },
                _ => None,
            };
            let note = match without {
                Some(g) => format!(
                    "{flag} did not keep the KV cache's memory ({g:.2} GiB without the encoder, {gib:.2} GiB with it)"
                ),
                None => format!("{flag} did not start either ({})", seen_text(other)),
            };
            after_one(
                more_gpu_memory(failed, levers, max_fraction, gib, &seen[1..]),
                &note,
            )
        }
    }
}

/// A decision made over the probes after the first: its indices moved past that one, and
/// what the first showed said before its summary.
fn after_one(d: Decision, note: &str) -> Decision {
    let shift = |mut k: Conclusion| {
        k.passed = k.passed.map(|i| i + 1);
        k.failed = k.failed.map(|i| i + 1);
        k.summary = format!("{note}; {}", k.summary);
        k
    };
    match d {
        Decision::Probe { probe, if_cut } => Decision::Probe {
            probe,
            if_cut: shift(if_cut),
        },
        Decision::Conclude(k) => Decision::Conclude(shift(k)),
    }
}

fn more_gpu_memory(
    failed: &Failed,
    levers: &Levers,
    max_fraction: f64,
    budget_gib: f64,
    seen: &[(Probe, Seen)],
) -> Decision {
    let Some((names, default)) = levers.gpu_fraction else {
        return Decision::Conclude(not_isolated(
            "not isolated: this engine has no GPU-memory fraction",
        ));
    };
    let now: f64 = value_of(&failed.args, names).unwrap_or(default);
    let total = gpu_total_gib(&failed.text);
    if let Some(t) = total {
        let best = budget_gib + (max_fraction - now) * t;
        if best <= 0.0 {
            return Decision::Conclude(Conclusion {
                status: IsolationStatus::ProvenUnfit,
                factor: Some(format!(
                    "the weights: no fraction allowed leaves the KV cache memory ({budget_gib:.2} GiB at {now}; {best:.2} GiB at {max_fraction} of {t:.2} GiB)"
                )),
                passed: None,
                failed: None,
                summary: format!(
                    "the engine stated {budget_gib:.2} GiB for the KV cache at a fraction of {now}; raising it to the allowed {max_fraction} adds {:.2} GiB of the {t:.2} GiB GPU, leaving {best:.2} GiB: no window fits, so nothing more was started",
                    (max_fraction - now) * t
                ),
                not_attempted: vec![format!(
                    "GPU memory left to the KV cache: {} {max_fraction} (priced: {best:.2} GiB)",
                    names[0]
                )],
            });
        }
    }
    if now >= max_fraction {
        return Decision::Conclude(not_isolated(format!(
            "not isolated: the fraction {now} is already at the allowed {max_fraction}"
        )));
    }
    match seen.first() {
        None => ask(
            probe(
                ProbeKind::MoreGpuMemory,
                format!("GPU memory left to the KV cache ({budget_gib:.2} GiB at {now})"),
                vec![Change::Set(names[0].to_string(), format!("{max_fraction}"))],
            ),
            budget_cut(),
        ),
        Some((_, Seen::Ready)) => Decision::Conclude(isolated(
            format!("the GPU-memory fraction: {now} fails, {max_fraction} starts"),
            Some(0),
            None,
            format!(
                "the KV budget was {budget_gib:.2} GiB at {now}; at {max_fraction} the start was ready"
            ),
        )),
        Some((p, other)) => Decision::Conclude(not_isolated(format!(
            "not isolated: the highest allowed fraction did not start either ({}: {})",
            p.label(),
            seen_text(other)
        ))),
    }
}

/// The GPU's size the engine stated (vLLM 0.19.1 gpu_worker.py `… total GPU memory … GiB`,
/// `Memory profiling takes … total_gpu_memory (79.19GiB)`), when it did.
fn gpu_total_gib(text: &str) -> Option<f64> {
    let re = regex::Regex::new(
        r"total_gpu_memory \(([\d.]+) ?GiB\)|total GPU memory[^\d]{0,20}([\d.]+) ?GiB",
    )
    .ok()?;
    let c = re.captures(text)?;
    c.get(1).or_else(|| c.get(2))?.as_str().parse().ok()
}

fn out_of_memory(failed: &Failed, levers: &Levers, seen: &[(Probe, Seen)]) -> Decision {
    if let Some(d) = oom_window_search(failed, levers, seen) {
        return d;
    }
    if let Some((i, _)) = seen.iter().enumerate().find(|(_, (_, s))| s.ready()) {
        let (p, _) = &seen[i];
        return Decision::Conclude(isolated(
            format!("memory: {}", p.hypothesis),
            Some(i),
            None,
            format!("{} was ready", p.label()),
        ));
    }
    let tried = |k: ProbeKind| seen.iter().any(|(p, _)| p.kind == k);
    if !tried(ProbeKind::SmallerWindow)
        && let Some(names) = levers.window
        && let Some(w) = value_of::<u64>(&failed.args, names)
    {
        let fitted = words::llama_buffers(&failed.text).and_then(|b| {
            let limit_mib = failed.memory_limit? as f64 / (1024.0 * 1024.0);
            // What the seat's memory leaves for the KV cache: its limit, less the weights, a
            // sliding-window cache (it does not grow with the window), and a tenth for compute
            // buffers and the process itself.
            let room = limit_mib * 0.9 - b.model_mib - b.fixed_kv_mib;
            let per_token = b.kv_mib / b.n_ctx as f64;
            (room > 0.0 && per_token > 0.0).then(|| round_window((room / per_token) as u64))
        });
        let target = fitted
            .filter(|f| *f < w)
            .unwrap_or_else(|| round_window(w / 2));
        let why = if fitted.is_some() {
            "the seat's memory by the load's own buffer sizes"
        } else {
            "half the window"
        };
        return ask(
            probe(
                ProbeKind::SmallerWindow,
                format!("the window's KV cache ({w}; {target} is {why})"),
                vec![Change::Set(names[0].to_string(), target.to_string())],
            ),
            budget_cut(),
        );
    }
    if !tried(ProbeKind::FewerSequences)
        && let Some((names, default)) = levers.sequences
    {
        let n: u64 = value_of(&failed.args, names).unwrap_or(default);
        if n >= 2 {
            return ask(
                probe(
                    ProbeKind::FewerSequences,
                    format!("the number of sequences ({n})"),
                    vec![Change::Set(names[0].to_string(), (n / 2).to_string())],
                ),
                budget_cut(),
            );
        }
    }
    if !tried(ProbeKind::FewerGpuLayers)
        && let Some(names) = levers.gpu_layers
        && let Some(n) = value_of::<u64>(&failed.args, names)
        && n >= 2
    {
        return ask(
            probe(
                ProbeKind::FewerGpuLayers,
                format!("the layers on the GPU ({n})"),
                vec![Change::Set(names[0].to_string(), (n / 2).to_string())],
            ),
            budget_cut(),
        );
    }
    Decision::Conclude(not_isolated(
        "not isolated: no lever that shrinks the load started (window, sequences, GPU layers)",
    ))
}

/// The window search of an out-of-memory failure, once a window probe has run: from the
/// largest window that started, one step up until a step fails (the prediction is from the
/// load's own buffers, so it is near); while every window probe failed, one step down, then
/// halves. `None` before the first window probe, or when the window cannot shrink further.
fn oom_window_search(failed: &Failed, levers: &Levers, seen: &[(Probe, Seen)]) -> Option<Decision> {
    let names = levers.window?;
    let asked: u64 = value_of(&failed.args, names)?;
    let step = window_step(asked);
    let windows: Vec<(usize, u64, bool)> = seen
        .iter()
        .enumerate()
        .filter(|(_, (p, _))| {
            matches!(
                p.kind,
                ProbeKind::SmallerWindow | ProbeKind::StepAbovePredicted
            )
        })
        .filter_map(|(i, (p, s))| {
            let w = p.changes.iter().find_map(|c| match c {
                Change::Set(_, v) => v.parse::<u64>().ok(),
                _ => None,
            })?;
            Some((i, w, s.ready()))
        })
        .collect();
    if windows.is_empty() {
        return None;
    }
    let lo = windows.iter().filter(|w| w.2).max_by_key(|w| w.1);
    let hi = windows.iter().filter(|w| !w.2).min_by_key(|w| w.1);
    // The smallest window that failed: a probe's, or the one asked.
    let (hi_w, hi_i) = match hi {
        Some(&(i, w, _)) if w < asked => (w, Some(i)),
        _ => (asked, None),
    };
    if let Some(&(i, w, _)) = lo {
        if hi_w <= w + step {
            return Some(Decision::Conclude(isolated(
                format!("the window: the largest that fits is {w} ({hi_w} fails)"),
                Some(i),
                hi_i,
                format!("the window's KV cache: {w} started and {hi_w} did not"),
            )));
        }
        let above = w + step;
        return Some(ask(
            probe(
                ProbeKind::StepAbovePredicted,
                format!("{w} is the largest window that fits"),
                vec![Change::Set(names[0].to_string(), above.to_string())],
            ),
            isolated(
                format!("the window: {w} starts, {hi_w} fails"),
                Some(i),
                hi_i,
                "the steps between were not tried (budget)",
            ),
        ));
    }
    // Every window probe failed: one step down from the prediction, then halves.
    let next = if windows.len() == 1 {
        round_window(hi_w.saturating_sub(step))
    } else {
        round_window(hi_w / 2)
    };
    (next < hi_w).then(|| {
        ask(
            probe(
                ProbeKind::SmallerWindow,
                format!("the window's KV cache ({hi_w} failed too)"),
                vec![Change::Set(names[0].to_string(), next.to_string())],
            ),
            budget_cut(),
        )
    })
}

fn flake(seen: &[(Probe, Seen)]) -> Decision {
    match seen.first() {
        None => ask(
            probe(ProbeKind::Again, "a flake".into(), Vec::new()),
            budget_cut(),
        ),
        Some((_, Seen::Ready)) => Decision::Conclude(not_isolated(
            "not reproduced: the same configuration started the second time (a flake, no factor)",
        )),
        Some((_, other)) => Decision::Conclude(not_isolated(format!(
            "reproduced with no stated cause ({}): the decision table has no lever for it",
            seen_text(other)
        ))),
    }
}
