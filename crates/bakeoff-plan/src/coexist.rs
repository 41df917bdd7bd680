//! "Can SEAT-A and SEAT-B coexist on GPU N?": each seat's footprint — what it measurably holds
//! when it is running there, else its claim on that GPU, the same claim the per-GPU section
//! prints — added up against the card, answered YES, NO or UNKNOWN with every term shown.
//!
//! A vLLM seat holds its whole budget (`util × total`, vLLM's default 0.92 when the flag is
//! absent) plus what lies outside it; it checks at start that this much is free. A claim with
//! unpriced terms (weights of a model that is not a local path here, SGLang without
//! `--mem-fraction-static`, …) is a lower bound: if the known terms already do not fit the
//! answer is NO, otherwise it is UNKNOWN — never YES. A seat that runs on the CPU holds no GPU
//! memory. Peak activations are profiled by vLLM at start and are inside its budget; the
//! verdict says so.

use serde::{Deserialize, Serialize};

use crate::fleet::{Engine, PlanSeat};
use crate::plan::SeatOnGpu;
use bakeoff_term::units::{gib, gib_signed};

/// One term of a footprint.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Term {
    pub what: String,
    pub bytes: u64,
    pub estimated: bool,
    /// KV cache (so the verdict can say "before a byte of KV").
    pub is_kv: bool,
}

impl Term {
    pub fn new(what: impl Into<String>, bytes: u64) -> Self {
        Self {
            what: what.into(),
            bytes,
            estimated: false,
            is_kv: false,
        }
    }
    pub fn estimate(mut self) -> Self {
        self.estimated = true;
        self
    }
    pub fn kv(mut self) -> Self {
        self.is_kv = true;
        self
    }
}

/// One seat's footprint.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Footprint {
    pub seat: String,
    /// `measured`, `claimed` or `cpu`.
    pub basis: String,
    pub terms: Vec<Term>,
    /// Terms this seat holds that are not priced (with the fix); the total is then a lower bound.
    pub unpriced: Vec<String>,
    pub notes: Vec<String>,
}

impl Footprint {
    // Saturating: sizes come from files and flags, and a hostile one must not panic the sum.
    pub fn total(&self) -> u64 {
        crate::sat_sum(self.terms.iter().map(|t| t.bytes))
    }
    fn kv(&self) -> u64 {
        crate::sat_sum(self.terms.iter().filter(|t| t.is_kv).map(|t| t.bytes))
    }
}

/// YES, NO or UNKNOWN.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    Yes,
    No,
    /// The known terms fit, but some are not priced: not a YES.
    Unknown,
}

/// The answer.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Coexistence {
    pub gpu: u32,
    pub total_bytes: u64,
    pub margin_bytes: u64,
    pub seats: Vec<Footprint>,
    pub sum_bytes: u64,
    /// total − sum (negative when over); with unpriced terms, at most this.
    pub left_bytes: i64,
    pub answer: Answer,
    /// `answer == Yes`.
    pub fits: bool,
    /// The arithmetic, one line per term, then the verdict.
    pub lines: Vec<String>,
}

/// Adds the footprints up against `total_bytes`.
pub fn coexist(
    gpu: u32,
    total_bytes: u64,
    margin_bytes: u64,
    seats: Vec<Footprint>,
) -> Coexistence {
    let sum = crate::sat_sum(seats.iter().map(Footprint::total));
    let left = i64::try_from(i128::from(total_bytes) - i128::from(sum)).unwrap_or(i64::MIN);
    let complete = seats.iter().all(|s| s.unpriced.is_empty());
    // Unpriced terms only add: known terms that do not fit are a NO; known terms that fit are
    // not a YES until everything is priced.
    let answer = if left < margin_bytes as i64 {
        Answer::No
    } else if complete {
        Answer::Yes
    } else {
        Answer::Unknown
    };
    let mut lines = vec![format!("GPU {gpu}: {} total", gib(total_bytes))];
    for s in &seats {
        let terms: Vec<String> = s
            .terms
            .iter()
            .map(|t| {
                format!(
                    "{} {}{}",
                    gib(t.bytes),
                    t.what,
                    if t.estimated { " (est.)" } else { "" }
                )
            })
            .collect();
        lines.push(format!(
            "  {} [{}]: {} = {}{}",
            s.seat,
            s.basis,
            if terms.is_empty() {
                "nothing on the GPU".to_owned()
            } else {
                terms.join(" + ")
            },
            if s.unpriced.is_empty() {
                ""
            } else {
                "at least "
            },
            gib(s.total())
        ));
        for u in &s.unpriced {
            lines.push(format!("    not priced: {u}"));
        }
        for n in &s.notes {
            lines.push(format!("    note: {n}"));
        }
    }
    lines.push(format!(
        "  sum {}{} of {}: {}{} left, margin {}",
        if complete { "" } else { "at least " },
        gib(sum),
        gib(total_bytes),
        if complete { "" } else { "at most " },
        gib_signed(i128::from(left)),
        gib(margin_bytes)
    ));
    let kv = crate::sat_sum(seats.iter().map(Footprint::kv));
    let before_kv = i128::from(total_bytes) - i128::from(sum.saturating_sub(kv));
    let verdict = match answer {
        Answer::Yes => format!(
            "YES: {} coexist on GPU {gpu} with {} to spare beyond the margin",
            names(&seats),
            gib_signed(i128::from(left) - i128::from(margin_bytes))
        ),
        Answer::Unknown => format!(
            "UNKNOWN: {} leave at most {} on GPU {gpu} by the terms priced, but {} are not priced (see above): not a YES until they are, or until the seats are measured running",
            names(&seats),
            gib_signed(i128::from(left)),
            seats
                .iter()
                .filter(|s| !s.unpriced.is_empty())
                .map(|s| format!("{}'s {}", s.seat, terms_named(&s.unpriced)))
                .collect::<Vec<_>>()
                .join(" and "),
        ),
        // Only said when some term is KV: otherwise the budget split is unknown.
        Answer::No if kv > 0 && before_kv < i128::from(margin_bytes) => format!(
            "NO: {} do not fit on GPU {gpu} before a byte of KV cache ({} left for KV, activations and margin)",
            names(&seats),
            gib_signed(before_kv)
        ),
        Answer::No => format!(
            "NO: {} leave {}{} on GPU {gpu}, under the {} margin",
            names(&seats),
            if complete { "" } else { "at most " },
            gib_signed(i128::from(left)),
            gib(margin_bytes)
        ),
    };
    lines.push(verdict);
    lines.push("  (vLLM's peak activations are profiled at start, inside its budget)".into());
    Coexistence {
        gpu,
        total_bytes,
        margin_bytes,
        seats,
        sum_bytes: sum,
        left_bytes: left,
        answer,
        fits: answer == Answer::Yes,
        lines,
    }
}

/// `weights`, `budget and weights`: the names of unpriced terms (the text before each colon).
fn terms_named(unpriced: &[String]) -> String {
    unpriced
        .iter()
        .map(|u| u.split(':').next().unwrap_or(u).trim().to_owned())
        .collect::<Vec<_>>()
        .join(" and ")
}

fn names(seats: &[Footprint]) -> String {
    seats
        .iter()
        .map(|s| s.seat.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// The footprint of a seat as planned on a GPU: measured when it runs there, else its claim —
/// the same terms, the same total and the same unpriced terms as the per-GPU section.
pub fn footprint(on_gpu: &SeatOnGpu, _seat: &PlanSeat) -> Footprint {
    let c = &on_gpu.claim;
    let mut notes = c.notes.clone();
    if let Some(m) = &on_gpu.measured {
        let up = m
            .uptime_s
            .map(|s| format!(", up {:.1} h", s as f64 / 3600.0))
            .unwrap_or_default();
        notes.push("a running seat's footprint grows with uptime: a fresh start holds less".into());
        return Footprint {
            seat: c.seat.clone(),
            basis: "measured".into(),
            terms: vec![Term::new(
                format!("held (pids {}{up})", crate::plan::pid_list(&m.pids)),
                m.bytes,
            )],
            unpriced: Vec::new(),
            notes,
        };
    }
    let term = |p: &crate::claims::ClaimPart| {
        let t = Term::new(p.what.clone(), p.bytes);
        let t = if p.what.starts_with("KV") { t.kv() } else { t };
        if p.estimated { t.estimate() } else { t }
    };
    let outside = c.parts.iter().filter(|p| !p.inside_budget).map(term);
    let mut terms = Vec::new();
    match (c.engine, c.budget_bytes) {
        (Engine::Vllm | Engine::Sglang | Engine::Generic, Some(b)) => {
            match c.weights_bytes {
                Some(w) if w <= b => {
                    terms.push(Term::new("weights", w));
                    terms.push(Term::new("KV + activations (rest of the budget)", b - w).kv());
                }
                _ => terms.push(Term::new(
                    if c.utilization_is_default {
                        "budget (engine default util) × total"
                    } else {
                        "budget util × total"
                    },
                    b,
                )),
            }
            terms.extend(outside);
        }
        _ => terms.extend(outside),
    }
    Footprint {
        seat: c.seat.clone(),
        basis: "claimed".into(),
        terms,
        unpriced: c.unpriced.clone(),
        notes,
    }
}

/// The footprint of a seat that runs on the CPU: nothing on any GPU.
pub fn cpu_footprint(seat: &PlanSeat) -> Footprint {
    Footprint {
        seat: seat.name.clone(),
        basis: "cpu".into(),
        terms: Vec::new(),
        unpriced: Vec::new(),
        notes: vec![format!(
            "runs on the CPU ({}): holds no GPU memory",
            seat.cpu_only.as_deref().unwrap_or("no GPU assigned")
        )],
    }
}

#[cfg(test)]
mod saturation_tests {
    use super::*;

    #[test]
    fn hostile_sizes_saturate_instead_of_panicking() {
        let fp = |seat: &str| Footprint {
            seat: seat.into(),
            basis: "claimed".into(),
            terms: vec![
                Term::new("weights", u64::MAX),
                Term::new("KV", u64::MAX).kv(),
            ],
            unpriced: Vec::new(),
            notes: Vec::new(),
        };
        assert_eq!(fp("a").total(), u64::MAX);
        let c = coexist(0, 80 << 30, 2 << 30, vec![fp("a"), fp("b")]);
        assert_eq!(c.sum_bytes, u64::MAX);
        assert!(!c.fits);
    }
}
