//! `bakeoff eval damage`: the candidate's first-token distribution against a reference's, after
//! the reference's self-check. Wiring only: the measurement is
//! `bakeoff_suites::damage::evaluate_damage`, the text `bakeoff_report::damage` (under the run
//! summary of `bakeoff_report::terminal`).
//!
//! Exit codes as `eval run`: 0 a damage figure was reported; 1 an unfit endpoint (failure
//! artifact), a withheld figure (failed self-check) or an interrupted run, each with its reason
//! on stderr; 2 a bad flag or prompt file.

use std::sync::Arc;

use bakeoff_artifact::StoreError;
use bakeoff_suites::damage::{DamageEvent, DamageHook, DamageRequest, evaluate_damage};
use bakeoff_suites::evaluate::Naming;

use crate::config::DamageConfig;
use crate::exit::{Error, Exit};
use crate::progress::{Progress, secs};

pub async fn run(cfg: DamageConfig) -> Result<Exit, Error> {
    std::fs::create_dir_all(&cfg.naming.out).map_err(|source| StoreError::CreateDir {
        path: cfg.naming.out.clone(),
        source,
    })?;
    let candidate = cfg.candidate.client_for(cfg.candidate_url.clone())?;
    let reference = cfg.reference.client_for(cfg.reference_url.clone())?;
    let mut stop = super::stop_signal::watch();
    let display = Arc::new(Progress::new(false));
    let seed = cfg
        .seed
        .unwrap_or_else(|| bakeoff_suites::context::fresh_seed("damage"));
    let naming = Naming {
        slug: cfg.naming.slug.clone(),
        hardware: cfg.naming.hardware.clone(),
        notes: cfg.naming.notes.clone(),
    };
    let req = DamageRequest {
        candidate: &candidate,
        reference: &reference,
        candidate_preflight: &cfg.candidate.preflight,
        reference_preflight: &cfg.reference.preflight,
        prompts: &cfg.prompts,
        top_k: cfg.top_k,
        tokens: cfg.tokens,
        seed,
        naming: &naming,
        out: &cfg.naming.out,
        replace: cfg.naming.replace,
        run_record: bakeoff_artifact::RunRecord {
            command: Some("eval damage".into()),
            prompts: Some(cfg.prompts_source.clone()),
            prompt_count: Some(cfg.prompts.len() as u64),
            top_k: Some(cfg.top_k),
            tokens: Some(cfg.tokens),
            seed: Some(Some(seed)),
            ..Default::default()
        },
        progress: Some(hook(display.clone())),
    };
    let result = evaluate_damage(req, &mut stop.rx).await;
    drop(stop);
    display.finish();
    let outcome = result.map_err(|e| match e {
        bakeoff_suites::evaluate::EvalError::InterruptedInPreflight => {
            Error::failed("interrupted by the operator during preflight; nothing was measured")
        }
        bakeoff_suites::evaluate::EvalError::Store(s) => Error::Store(s),
    })?;
    let art = &outcome.evaluated.artifact;
    if cfg.json {
        println!(
            "{}",
            serde_json::to_string_pretty(art).map_err(Error::json)?
        );
    } else {
        // The run's summary table, with the damage lines under it (bakeoff_report::damage).
        print!(
            "{}",
            bakeoff_report::terminal::run_summary(
                art,
                &outcome.evaluated.path.display().to_string()
            )
        );
        println!("{}", bakeoff_report::bench_summary::conditions_line(art));
    }
    match outcome.withheld {
        Some(reason) => {
            // One line: a failure artifact measured nothing; a withheld figure was measured
            // and not vouched for.
            let what = if art.kind == bakeoff_artifact::ArtifactKind::Failure {
                "damage not measured"
            } else {
                "damage figure withheld"
            };
            eprintln!(
                "{what}: {}",
                bakeoff_report::escape::for_terminal(&reason, 1000)
            );
            Ok(Exit::Failed)
        }
        None => Ok(Exit::from_ok(outcome.evaluated.ok())),
    }
}

/// Progress lines: each endpoint's preflight, each phase's items, the self-check's verdict.
fn hook(display: Arc<Progress>) -> DamageHook {
    Arc::new(move |e: DamageEvent| {
        let (lasting, text) = render(&e);
        if lasting {
            display.line(&text);
        } else {
            display.status(&text);
        }
    })
}

fn render(e: &DamageEvent) -> (bool, String) {
    use bakeoff_suites::PreflightPhase as P;
    match e {
        DamageEvent::Preflight { side, phase } => {
            let side = side.as_str();
            match phase {
                P::Probing { ready_timeout } => (
                    false,
                    format!(
                        "[{side} preflight] probing with a real completion (up to {}) …",
                        secs(*ready_timeout)
                    ),
                ),
                P::Ready {
                    model,
                    engine,
                    elapsed,
                    ..
                } => (
                    true,
                    format!(
                        "[{side} preflight] ready in {}: {} on {engine}",
                        secs(*elapsed),
                        bakeoff_report::escape::for_terminal(
                            model.as_deref().unwrap_or("(no model id)"),
                            200
                        )
                    ),
                ),
                P::Unfit { class, message, .. } => (
                    true,
                    format!(
                        "[{side} preflight] unfit ({class}): {}",
                        bakeoff_report::escape::for_terminal(message, 400)
                    ),
                ),
                P::CheckingThinking { .. } => (false, format!("[{side} preflight] …")),
            }
        }
        DamageEvent::Started { phase, planned } => (
            false,
            format!("[{}] starting: {planned} prompts", phase.as_str()),
        ),
        DamageEvent::Item {
            phase,
            done,
            planned,
            elapsed,
            kl,
        } => (
            false,
            format!(
                "[{} {done}/{planned}] {} elapsed{}",
                phase.as_str(),
                secs(*elapsed),
                kl.map(|k| format!(" — KL {k:.4}")).unwrap_or_default()
            ),
        ),
        DamageEvent::SelfCheck { passed, high } => (
            true,
            if *passed {
                format!(
                    "[self-check] passed: the reference agrees with itself (KL ≤ {high:.1e} nats)"
                )
            } else {
                format!(
                    "[self-check] FAILED: the reference disagrees with itself (KL up to {high:.3e} nats); the candidate is not measured"
                )
            },
        ),
        DamageEvent::AlongItem {
            phase,
            done,
            planned,
            elapsed,
        } => (
            false,
            format!(
                "[{} {done}/{planned}] {} elapsed",
                phase.as_str(),
                secs(*elapsed)
            ),
        ),
    }
}
