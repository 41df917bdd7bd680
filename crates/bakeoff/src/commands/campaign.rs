//! `bakeoff campaign run|status|restore`: wiring of bakeoff-campaign — the campaign's progress
//! drawn on stderr (a spinner on a terminal, plain lines otherwise), its table and files on
//! stdout.

use bakeoff_artifact::campaign::CampaignRecord;
use bakeoff_campaign::record::{NEGATIVE_RESULTS, RECORD};
use bakeoff_progress::campaign::reporter;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::CampaignCommand;
use bakeoff_flags::config::{CampaignRestoreConfig, CampaignRunConfig, CampaignStatusConfig};

pub async fn run(c: CampaignCommand) -> Result<Exit, Error> {
    match c {
        CampaignCommand::Run(a) => campaign_run(a.validate()?).await,
        CampaignCommand::Status(a) => status(a.validate()?),
        CampaignCommand::Restore(a) => restore(a.validate()?).await,
    }
}

async fn campaign_run(cfg: CampaignRunConfig) -> Result<Exit, Error> {
    let c = &cfg.campaign;
    let needs_confirm = !c.displaced_production().is_empty() && !cfg.options.confirm;
    if cfg.dry_run || needs_confirm {
        for l in bakeoff_campaign::dry_run::plan(c, &cfg.options).await? {
            stdoutln!(
                "{}",
                super::screen(&bakeoff_report::escape::for_terminal(&l, 4000))
            );
        }
        if cfg.dry_run {
            return Ok(Exit::Ok);
        }
    }
    let stop = super::stop_signal::watch();
    let reporter = reporter();
    let result = bakeoff_campaign::run::run(c, &cfg.options, stop.rx.clone(), &reporter).await;
    drop(stop);
    let summary = result?;
    for a in &summary.recovered {
        stderrln!("[campaign] recovery: {a}");
    }
    if summary.taken_up == 0 && !summary.interrupted {
        // A resumed campaign with nothing left says so, rather than reprint the table as if
        // it had run (finished variants are never run again: docs/campaign.md).
        if cfg.json {
            stderrln!("{}", nothing_left_text());
        } else {
            stdoutln!("{}", super::screen(nothing_left_text()));
        }
    }
    if cfg.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&summary.record).map_err(Error::json)?
        );
    } else {
        stdout!(
            "{}",
            super::screen(&bakeoff_report::campaign::ladder_table(&summary.record))
        );
        for f in [RECORD, NEGATIVE_RESULTS] {
            stdoutln!(
                "{}",
                super::screen(&format!("wrote {}", c.out.join(f).display()))
            );
        }
        stdoutln!("{}", super::screen(&campaign_conditions(&summary.record)));
    }
    if summary.restore_failed {
        return Err(Error::failed(
            "a displaced seat was NOT restored (see above): bring it up by hand with `bakeoff seat up NAME --confirm`",
        ));
    }
    if summary.interrupted {
        return Err(Error::failed(
            "the campaign was interrupted; displaced seats were restored and the interrupted variant runs again on the next `campaign run`",
        ));
    }
    Ok(Exit::Ok)
}

/// What a `campaign run` with every selected variant already decided says.
fn nothing_left_text() -> &'static str {
    "nothing to run: every variant has an outcome (finished variants are never run again); --fresh to re-run them all (the old files are kept), --out DIR to run into another directory"
}

fn status(cfg: CampaignStatusConfig) -> Result<Exit, Error> {
    let (dir, json) = (cfg.dir.as_path(), cfg.json);
    let mut rec: CampaignRecord = bakeoff_artifact::read_versioned(&dir.join(RECORD))?;
    // `--allow contaminated` here renders the verdicts the run withheld (campaign.json keeps
    // what the run was given).
    rec.allow_contaminated |= cfg.allow_contaminated;
    if json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&rec).map_err(Error::json)?
        );
    } else {
        stdout!(
            "{}",
            super::screen(&bakeoff_report::campaign::ladder_table(&rec))
        );
        if let Some(l) = bakeoff_campaign::journal::in_flight(dir) {
            stdoutln!(
                "{}",
                super::screen(&bakeoff_report::escape::for_terminal(&l, 2000))
            );
        }
        stdoutln!("{}", super::screen(&campaign_conditions(&rec)));
    }
    Ok(Exit::Ok)
}

async fn restore(cfg: CampaignRestoreConfig) -> Result<Exit, Error> {
    let actions = bakeoff_campaign::run::restore(&cfg.campaign, &cfg.options, &reporter()).await?;
    if actions.is_empty() {
        stdoutln!(
            "{}",
            super::screen(&format!(
                "{}: nothing to recover (no seat left up, none displaced, no variant interrupted)",
                cfg.dir.display()
            ))
        );
    }
    let mut failed = false;
    for a in &actions {
        failed |= a.is_failure();
        stdoutln!(
            "{}",
            super::screen(&bakeoff_report::escape::for_terminal(&a.to_string(), 2000))
        );
    }
    Ok(Exit::from_ok(!failed))
}

/// The last line of `campaign run` and `campaign status`: the variants' conditions. Process
/// names come from `/proc`, where anything can name itself: escaped.
fn campaign_conditions(rec: &CampaignRecord) -> String {
    bakeoff_term::escape::for_terminal(&bakeoff_report::campaign::conditions_line(rec), 2000)
}
