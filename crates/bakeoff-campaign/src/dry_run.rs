//! `campaign run --dry-run` (and the plan printed when `--confirm` is missing): every variant
//! with its exact launch, its delta, the seats it displaces and their state now, and the
//! memory check — read-only: nothing is started, stopped or written.

use bakeoff_seats::{Role, Seats};

use crate::error::CampaignError;
use crate::file::Campaign;
use crate::fleet_view::ViewOptions;
use crate::journal::{JOURNAL, replay};
use crate::options::RunOptions;
use crate::variant::fleet_with;

/// The plan, one line per fact.
/// Only the variants `--only` selects are planned; a name the campaign lacks is refused, as a
/// real run refuses it.
pub async fn plan(c: &Campaign, opts: &RunOptions) -> Result<Vec<String>, CampaignError> {
    let selected = crate::run::select(c, &opts.only)?;
    let seats = Seats::new(
        fleet_with(&c.fleet, &c.variants),
        c.out.clone(),
        opts.watch.clone(),
    );
    let done = replay(&c.out.join(JOURNAL)).ok();
    let mut up = Vec::new();
    for s in &c.fleet.seats {
        if seats.status_of(s).await.observed.is_up() {
            up.push(s.name.clone());
        }
    }
    let mut lines = vec![format!(
        "campaign {} ({}): {} variant(s) of {} candidate(s){}; suites {}{}; results in {}",
        c.name,
        c.path.display(),
        c.variants.len(),
        c.candidates.len(),
        if opts.only.is_empty() {
            String::new()
        } else {
            format!(", {} selected by --only", selected.len())
        },
        c.suites
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(","),
        c.limit.map(|l| format!(" (limit {l})")).unwrap_or_default(),
        c.out.display()
    )];
    for v in c.variants.iter().filter(|v| selected.contains(&v.slug)) {
        lines.push(String::new());
        lines.push(format!(
            "#{} {} (candidate {}, base seat {})",
            v.index, v.slug, v.candidate, v.base_seat
        ));
        lines.push(format!("   launch: {}", v.launch_line()));
        if !v.delta.is_empty() {
            lines.push(format!("   delta: {}", v.delta.join("; ")));
        }
        if let Some(why) = crate::engine_help::unknown_flags(&c.fleet, v).await {
            lines.push(format!(
                "   UNKNOWN FLAG: {why}; this variant would be skipped (pre-start)"
            ));
        }
        let window = c
            .candidate(&v.candidate)
            .and_then(|cand| cand.window.clone());
        let displaces: Vec<String> = window.iter().flat_map(|w| w.displaces.clone()).collect();
        if let Some(w) = &window {
            let each: Vec<String> = w
                .displaces
                .iter()
                .map(|name| {
                    let role = match c.fleet.seat(name).map(|s| s.role) {
                        Some(Role::Production) => "production",
                        Some(Role::Bench) => "bench",
                        Some(Role::Dormant) => "dormant",
                        None => "?",
                    };
                    let state = if up.contains(name) { "up" } else { "not up" };
                    format!("{name} ({role}, {state})")
                })
                .collect();
            lines.push(format!(
                "   displaces: {} — each waited for until idle {} s (within {} s), stopped, restored after",
                each.join(", "),
                w.idle_for_s,
                w.idle_timeout_s
            ));
        }
        let staying: Vec<String> = up
            .iter()
            .filter(|s| !displaces.contains(s))
            .cloned()
            .collect();
        let fit = crate::fits::check(
            &seats.fleet,
            &v.slug,
            &staying,
            &ViewOptions {
                gpu_memory_gib: c.gpu_memory_gib,
                ..Default::default()
            },
            c.margin_gib,
            &opts.nvidia_smi,
        )
        .await;
        lines.push(format!("   memory check: {}", fit.answer));
        for l in &fit.lines {
            lines.push(format!("      {l}"));
        }
        if let Some(row) = done.as_ref().and_then(|d| d.rows.get(&v.slug)) {
            lines.push(format!(
                "   journal: {} (attempt {}){}",
                row.outcome_label,
                row.attempts,
                if row.outcome.kind.is_final() {
                    "; not run again"
                } else {
                    "; runs again"
                }
            ));
        }
    }
    for cand in c.candidates.iter().filter(|x| x.isolate.is_some()) {
        lines.push(String::new());
        lines.push(format!("candidate {}:", cand.name));
        lines.extend(
            crate::isolate::dry_run_lines(c, &cand.name)
                .into_iter()
                .map(|l| format!("   {l}")),
        );
    }
    Ok(lines)
}
