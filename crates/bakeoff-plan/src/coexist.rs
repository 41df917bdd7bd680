//! "Can SEAT-A and SEAT-B coexist on GPU N?": each seat's footprint — weights + KV budget +
//! overheads, or what it measurably holds when it is running — added up against the card,
//! answered yes or no with every term shown.
//!
//! A vLLM seat with a utilization flag holds its whole budget (`util × total`) plus what lies
//! outside it; without the flag, its minimum is the weights plus **one full-length sequence**
//! of KV, because vLLM refuses to start when the KV memory cannot hold one request of
//! `max_model_len` (kv_cache_utils.py `_check_enough_kv_cache_memory`), plus the overheads.
//! Peak activations are profiled by vLLM at start and are not estimated here: the verdict says
//! so.

use std::path::Path;

use serde::{Deserialize, Serialize};

use bakeoff_model::{HfConfig, KvCacheDtype, KvCostOptions, kv_cost};

use crate::fleet::{Engine, PlanSeat, flag_value};
use crate::gpu::{gib, gib_signed};
use crate::plan::SeatOnGpu;

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
    /// `measured`, `claimed` or `minimum`.
    pub basis: String,
    pub terms: Vec<Term>,
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

/// The answer.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
pub struct Coexistence {
    pub gpu: u32,
    pub total_bytes: u64,
    pub margin_bytes: u64,
    pub seats: Vec<Footprint>,
    pub sum_bytes: u64,
    /// total − sum (negative when over).
    pub left_bytes: i64,
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
    let fits = left >= margin_bytes as i64;
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
            "  {} [{}]: {} = {}",
            s.seat,
            s.basis,
            terms.join(" + "),
            gib(s.total())
        ));
        for n in &s.notes {
            lines.push(format!("    note: {n}"));
        }
    }
    lines.push(format!(
        "  sum {} of {}: {} left, margin {}",
        gib(sum),
        gib(total_bytes),
        gib_signed(i128::from(left)),
        gib(margin_bytes)
    ));
    let kv = crate::sat_sum(seats.iter().map(Footprint::kv));
    let before_kv = i128::from(total_bytes) - i128::from(sum.saturating_sub(kv));
    let verdict = if fits {
        format!(
            "YES: {} coexist on GPU {gpu} with {} to spare beyond the margin",
            names(&seats),
            gib_signed(i128::from(left) - i128::from(margin_bytes))
        )
    } else if kv > 0 && before_kv < i128::from(margin_bytes) {
        // Only said when some term is KV: otherwise the budget split is unknown.
        format!(
            "NO: {} do not fit on GPU {gpu} before a byte of KV cache ({} left for KV, activations and margin)",
            names(&seats),
            gib_signed(before_kv)
        )
    } else {
        format!(
            "NO: {} leave {} on GPU {gpu}, under the {} margin",
            names(&seats),
            gib_signed(i128::from(left)),
            gib(margin_bytes)
        )
    };
    lines.push(verdict);
    lines.push("  (vLLM's peak activations are profiled at start and not included)".into());
    Coexistence {
        gpu,
        total_bytes,
        margin_bytes,
        seats,
        sum_bytes: sum,
        left_bytes: left,
        fits,
        lines,
    }
}

fn names(seats: &[Footprint]) -> String {
    seats
        .iter()
        .map(|s| s.seat.as_str())
        .collect::<Vec<_>>()
        .join(" and ")
}

/// KV bytes of one full-length sequence for a local HF checkpoint, per rank.
fn one_sequence_kv(seat: &PlanSeat) -> Option<(u64, u64)> {
    let model = seat.model.as_deref()?;
    let cfg = HfConfig::read(&Path::new(model).join("config.json")).ok()?;
    let geo = cfg.kv_geometry().ok()?;
    let len = seat
        .max_model_len
        .or(cfg.summary().max_position_embeddings)?;
    let dtype = flag_value(&seat.args, &["--kv-cache-dtype"])
        .and_then(KvCacheDtype::parse)
        .unwrap_or(KvCacheDtype::Auto);
    let cost = kv_cost(
        &geo,
        &KvCostOptions {
            kv_cache_dtype: dtype,
            tensor_parallel_size: seat.tensor_parallel_size,
            mamba_ssm_dtype_bytes: None,
        },
    );
    Some((cost.bytes_per_sequence(len), len))
}

/// The footprint of a seat as planned on a GPU: measured when running, else from its claim.
pub fn footprint(on_gpu: &SeatOnGpu, seat: &PlanSeat) -> Footprint {
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
            terms: vec![Term::new(format!("held (pids {:?}{up})", m.pids), m.bytes)],
            notes,
        };
    }
    let outside = c
        .parts
        .iter()
        .filter(|p| !p.inside_budget && !p.what.starts_with("weights"))
        .map(|p| {
            let t = Term::new(p.what.clone(), p.bytes);
            let t = if p.what.starts_with("KV") { t.kv() } else { t };
            if p.estimated { t.estimate() } else { t }
        });
    let budget = seat.gpu_memory_utilization.and(c.budget_bytes);
    if c.engine == Engine::Vllm
        && seat.gpu_memory_utilization.is_none()
        && let Some(b) = c.budget_bytes
    {
        notes.push(format!(
            "no gpu_memory_utilization: vLLM's default would claim {}; the minimum this seat needs is shown",
            gib(b)
        ));
    }
    match (c.engine, budget) {
        (Engine::Vllm | Engine::Sglang | Engine::Generic, Some(b)) => {
            let mut terms = Vec::new();
            match c.weights_bytes {
                Some(w) if w <= b => {
                    terms.push(Term::new("weights", w));
                    terms.push(Term::new("KV + activations (rest of the budget)", b - w).kv());
                }
                _ => terms.push(Term::new("budget util × total", b)),
            }
            terms.extend(outside);
            Footprint {
                seat: c.seat.clone(),
                basis: "claimed".into(),
                terms,
                notes,
            }
        }
        (Engine::Vllm, None) | (Engine::Sglang | Engine::Generic, None) => {
            let mut terms = Vec::new();
            if let Some(w) = c.weights_bytes {
                terms.push(Term::new("weights", w));
            } else {
                notes
                    .push("weights unknown (model not a local path): footprint understated".into());
            }
            match one_sequence_kv(seat) {
                Some((kv, len)) => {
                    terms.push(Term::new(format!("KV for one {len}-token sequence"), kv).kv())
                }
                None => notes
                    .push("KV for one full-length sequence unknown (no local config.json)".into()),
            }
            terms.extend(outside);
            Footprint {
                seat: c.seat.clone(),
                basis: "minimum".into(),
                terms,
                notes,
            }
        }
        (Engine::LlamaCpp, _) => Footprint {
            seat: c.seat.clone(),
            basis: "claimed".into(),
            terms: c
                .parts
                .iter()
                .map(|p| {
                    let t = Term::new(p.what.clone(), p.bytes);
                    let t = if p.what.starts_with("KV") { t.kv() } else { t };
                    if p.estimated { t.estimate() } else { t }
                })
                .collect(),
            notes,
        },
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
            notes: Vec::new(),
        };
        assert_eq!(fp("a").total(), u64::MAX);
        let c = coexist(0, 80 << 30, 2 << 30, vec![fp("a"), fp("b")]);
        assert_eq!(c.sum_bytes, u64::MAX);
        assert!(!c.fits);
    }
}
