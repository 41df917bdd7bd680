//! `bakeoff plan` and `bakeoff kv`: wiring of bakeoff-seats' fleet file into bakeoff-plan
//! (through `bakeoff_campaign::fleet_view`, the one bridge, shared with a campaign's memory
//! check), and of bakeoff-model's KV arithmetic.

use bakeoff_campaign::fleet_plan::{self, FleetPlan};
use bakeoff_campaign::fleet_view::ViewOptions;
use bakeoff_host::units::gib_to_bytes;
use bakeoff_model::parse_engine_log;
use bakeoff_plan::kv_report::kv_report;
use bakeoff_plan::terminal::{kv_terminal, terminal};
use bakeoff_plan::{Answer, Overheads, PlanOptions};
use bakeoff_seats::fleet::Fleet;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::{KvConfig, PlanConfig};

pub async fn run(a: PlanConfig) -> Result<Exit, Error> {
    let fleet = a.fleet.as_deref().map(Fleet::load).transpose()?;
    let report = fleet_plan::plan(FleetPlan {
        fleet: fleet.as_ref().zip(a.fleet.as_deref()),
        view: ViewOptions {
            engine_versions: a.engine_versions.clone(),
            gpu_memory_gib: a.gpu_memory_gib,
        },
        coexist: a.coexist.clone(),
        options: PlanOptions {
            margin_bytes: gib_to_bytes(a.margin_gib),
            overheads: Overheads {
                cuda_context_bytes: gib_to_bytes(a.cuda_context_gib),
                cuda_graph_bytes: gib_to_bytes(a.cuda_graphs_gib),
                ..Overheads::default()
            },
            ..PlanOptions::default()
        },
        nvidia_smi: &a.nvidia_smi,
    })
    .await?;
    if a.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(Error::json)?
        );
    } else {
        stdout!(
            "{}",
            super::screen(&terminal(&report, bakeoff_report::table::width()))
        );
    }
    // A NO or an UNKNOWN to a coexistence question is not a fit (1); headroom warnings are
    // printed but are not failures of the command.
    Ok(match &report.coexistence {
        Some(c) if c.answer != Answer::Yes => Exit::Failed,
        _ => Exit::Ok,
    })
}

pub fn kv(cfg: KvConfig) -> Result<Exit, Error> {
    let log = cfg.read_log()?;
    let mut req = cfg.request;
    req.log = log.as_deref().map(parse_engine_log);
    let r = kv_report(&req)?;
    if cfg.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&r.json).map_err(Error::json)?
        );
    } else {
        stdout!("{}", super::screen(&kv_terminal(&r)));
    }
    if r.mismatch {
        return Err(Error::failed(
            "the computed KV buffers or slots do not match the log's KV lines (see [NOT in the log] / [the log DISAGREES] above)",
        ));
    }
    Ok(Exit::Ok)
}
