//! The memory check before a variant starts: does its claim fit beside the seats that stay up
//! on its GPU(s)? A NO makes the variant `does-not-fit`, with the arithmetic, and it is never
//! started.
//!
//! The arithmetic is `bakeoff plan --coexist`'s, through the one code path
//! (`bakeoff_plan::coexist_on_gpu`), generalized from two seats to the variant and every seat
//! that stays up beside it: each GPU the variant is placed on is sized as `bakeoff plan` sizes it
//! (NVML, else nvidia-smi, when the variant's host is this machine; else the campaign file's
//! `gpu_memory_gib`), a staying seat counts at what it is measured to hold there when the
//! readings show it, else at its claim, and the variant — not running yet — at its claim. Seats
//! that share the variant's host and port are alternatives, never up beside it (the port check
//! or the window handles them): they are never counted. Processes that belong to no seat are
//! not counted either, as in `plan --coexist`.

use bakeoff_artifact::campaign::FitCheck;
use bakeoff_host::MachineReadings;
use bakeoff_host::units::gib_to_bytes;
use bakeoff_plan::{Answer, FleetView, PlanOptions, PlanSeat, coexist_on_gpu, cpu_seats};
use bakeoff_seats::Fleet;

use crate::fleet_view::{ViewOptions, view_of};

/// One GPU's answer, ordered from the best to the worst: the answer over several GPUs is the
/// worst of theirs (a NO anywhere is a NO; a GPU not checked leaves the whole not checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fit {
    Yes,
    Unknown,
    NotChecked,
    No,
}

impl Fit {
    fn of(a: Answer) -> Self {
        match a {
            Answer::Yes => Self::Yes,
            Answer::Unknown => Self::Unknown,
            Answer::No => Self::No,
        }
    }

    /// The word `FitCheck::answer` carries.
    fn word(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::Unknown => "unknown",
            Self::NotChecked => "not-checked",
            Self::No => "no",
        }
    }

    fn check(self, lines: Vec<String>) -> FitCheck {
        FitCheck {
            answer: self.word().to_owned(),
            lines,
        }
    }
}

/// The memory check of one variant: `bakeoff_artifact::campaign::FitCheck` (answer
/// `yes`/`no`/`unknown`/`not-checked`, lines = the arithmetic).
///
/// `fleet` holds every seat including the variant's (named `variant`); `staying` names the
/// seats that stay up beside it (running now and not displaced by the window); GPU totals come
/// from NVML / nvidia-smi readings (as `bakeoff plan` reads them, `nvidia_smi_bin` being the
/// binary) or from `opts.gpu_memory_gib`. `margin_gib` is the headroom a YES must leave.
///
/// The answer over several GPUs is the worst of theirs (no > not-checked > unknown > yes). The
/// lines are every GPU's arithmetic, as `plan --coexist` prints it, with the deciding GPU's
/// verdict moved to the last line.
///
/// The machine's readings (NVML, nvidia-smi: up to 15 s on a wedged driver) are taken on
/// tokio's blocking pool, never on the caller's runtime thread, and only when a GPU is sized.
pub async fn check(
    fleet: &Fleet,
    variant: &str,
    staying: &[String],
    opts: &ViewOptions,
    margin_gib: f64,
    nvidia_smi_bin: &str,
) -> FitCheck {
    let view = view_of(fleet, opts);
    let Some(v) = view.seats.iter().find(|s| s.name == variant) else {
        return Fit::NotChecked.check(vec![format!(
            "seat {variant} is not in the fleet file {}: nothing to check",
            fleet.path.display()
        )]);
    };
    if let Some(c) = cpu_seats(&view).into_iter().find(|c| c.seat == variant) {
        return Fit::NotChecked.check(vec![format!(
            "runs on the CPU: holds no GPU memory ({})",
            c.why
        )]);
    }
    let is_alternative = |s: &PlanSeat| s.host == v.host && s.port.is_some() && s.port == v.port;
    let (alternatives, beside): (Vec<&PlanSeat>, Vec<&PlanSeat>) = view
        .seats
        .iter()
        .filter(|s| s.name != variant && staying.contains(&s.name))
        .partition(|s| is_alternative(s));
    let mut lines = Vec::new();
    if !alternatives.is_empty() {
        lines.push(format!(
            "not counted: {} share{} port {} on {} with {variant}: alternatives, never up beside it",
            names(&alternatives),
            if alternatives.len() == 1 { "s" } else { "" },
            v.port.map(|p| p.to_string()).unwrap_or_default(),
            v.host
        ));
    }
    // The variant is not running yet: its claim, never a measurement — with its port, the
    // processes of a displaced seat still serving that port would be taken for it.
    let mut fresh = v.clone();
    fresh.port = None;
    let machine = MachineReadings::read_off_runtime(nvidia_smi_bin).await;
    let plan_opts = PlanOptions {
        margin_bytes: gib_to_bytes(margin_gib),
        ..PlanOptions::default()
    };
    let mut gpus: Vec<(Fit, Vec<String>)> = Vec::new();
    for &gpu in &v.gpus {
        let here = beside
            .iter()
            .filter(|s| s.host == v.host && s.gpus.contains(&gpu))
            .map(|s| (*s).clone());
        let on_gpu = FleetView {
            seats: std::iter::once(fresh.clone()).chain(here).collect(),
            gpu_memory: view.gpu_memory.clone(),
            local_hosts: view.local_hosts.clone(),
        };
        gpus.push(
            match coexist_on_gpu(
                &on_gpu,
                machine.primary(),
                &|pid| machine.facts_of(pid),
                &machine.container_names,
                &plan_opts,
                &v.host,
                gpu,
            ) {
                Ok(Some(c)) => (Fit::of(c.answer), c.lines),
                Ok(None) => (
                    Fit::NotChecked,
                    vec![format!(
                        "GPU {gpu} on {}: total memory unknown ({}); fix: set gpu_memory_gib in the campaign file, or run on the host that has it",
                        v.host,
                        if view.local_hosts.contains(&v.host) {
                            machine
                                .primary()
                                .unavailable
                                .clone()
                                .unwrap_or_else(|| format!("no reading of GPU {gpu} here"))
                        } else {
                            format!("host {} is not this machine", v.host)
                        }
                    )],
                ),
                Err(e) => (
                    Fit::NotChecked,
                    vec![format!("GPU {gpu} on {}: {e}", v.host)],
                ),
            },
        );
    }
    // The worst GPU decides; its verdict moves to the last line, where a reader finds it.
    let Some((at, worst)) = gpus
        .iter()
        .enumerate()
        .rev()
        .max_by_key(|(_, (fit, _))| *fit)
        .map(|(i, (fit, _))| (i, *fit))
    else {
        return Fit::NotChecked.check(vec![format!("seat {variant} is placed on no GPU")]);
    };
    let mut verdict = None;
    for (i, (_, gpu_lines)) in gpus.into_iter().enumerate() {
        for l in gpu_lines {
            if i == at && verdict.is_none() && is_verdict(worst, &l) {
                verdict = Some(l);
            } else {
                lines.push(l);
            }
        }
    }
    lines.extend(verdict);
    worst.check(lines)
}

/// Whether `line` is the verdict of a GPU whose answer is `fit`: `bakeoff_plan::coexist`'s
/// `YES: …`, `NO: …` or `UNKNOWN: …`, or the one line of a GPU not checked.
fn is_verdict(fit: Fit, line: &str) -> bool {
    match fit {
        Fit::Yes => line.starts_with("YES: "),
        Fit::Unknown => line.starts_with("UNKNOWN: "),
        Fit::No => line.starts_with("NO: "),
        Fit::NotChecked => true,
    }
}

fn names(seats: &[&PlanSeat]) -> String {
    seats
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The memory check `bakeoff seat up|restart|swap` runs before a start
/// ([`bakeoff_seats::ops::PlacementCheck`]): `bakeoff plan --coexist`'s arithmetic through
/// [`check`] (the one code path the campaigns use), GPUs sized by NVML or nvidia-smi on this
/// machine, else by the host's `gpu_memory_gib`, with no margin (a NO is a claim over the card).
pub fn placement_check() -> bakeoff_seats::ops::PlacementCheck {
    std::sync::Arc::new(|fleet, seat, staying| {
        // Owned copies: the future outlives this call (seats awaits it).
        let (fleet, seat, staying) = (fleet.clone(), seat.to_owned(), staying.to_vec());
        Box::pin(async move {
            check(
                &fleet,
                &seat,
                &staying,
                &ViewOptions::default(),
                0.0,
                "nvidia-smi",
            )
            .await
        })
    })
}
