//! `bakeoff plan` and `bakeoff kv`: wiring of bakeoff-seats' fleet file into bakeoff-plan
//! (through `bakeoff_campaign::fleet_view`, the one bridge, shared with a campaign's memory
//! check), and of bakeoff-model's KV arithmetic.

use std::collections::BTreeMap;

use bakeoff_campaign::fleet_view::{ViewOptions, view_of};
use bakeoff_campaign::host_readings::read_hosts;
use bakeoff_gpu::MachineReadings;
use bakeoff_gpu::units::gib_to_bytes;
use bakeoff_model::parse_engine_log;
use bakeoff_plan::gpu_table::gpu_table_at;
use bakeoff_plan::kv_report::kv_report;
use bakeoff_plan::{Answer, FleetView, Overheads, PlanOptions, PlanRequest, render_text, run_plan};
use bakeoff_seats::fleet::Fleet;

use crate::config::{KvConfig, PlanConfig};
use crate::exit::{Error, Exit};

pub async fn run(a: PlanConfig) -> Result<Exit, Error> {
    let fleet = a.fleet.as_deref().map(Fleet::load).transpose()?;
    // The other hosts' GPUs, over the channel each is reached by (all at once, each bounded).
    let remote = match &fleet {
        Some(f) => read_hosts(f).await,
        None => BTreeMap::new(),
    };
    let view = match &fleet {
        Some(f) => view_of(
            f,
            &ViewOptions {
                engine_versions: a.engine_versions.clone(),
                gpu_memory_gib: a.gpu_memory_gib,
            },
        ),
        None => FleetView {
            seats: Vec::new(),
            gpu_memory: BTreeMap::new(),
            local_hosts: vec!["local".into()],
        },
    };
    let opts = PlanOptions {
        margin_bytes: gib_to_bytes(a.margin_gib),
        overheads: Overheads {
            cuda_context_bytes: gib_to_bytes(a.cuda_context_gib),
            cuda_graph_bytes: gib_to_bytes(a.cuda_graphs_gib),
            ..Overheads::default()
        },
        ..PlanOptions::default()
    };
    let req = PlanRequest {
        view,
        fleet: a.fleet.as_deref(),
        coexist: a.coexist.clone(),
        remote,
    };
    // NVML and nvidia-smi (up to 15 s on a wedged driver) are read on the blocking pool.
    let machine = MachineReadings::read_off_runtime(&a.nvidia_smi).await;
    let report = run_plan(&req, machine, &opts)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(Error::json)?
        );
    } else {
        // The per-GPU summary first, then the arithmetic behind it.
        if let Some(t) = gpu_table_at(&report.gpus, bakeoff_report::table::width()) {
            println!("{t}");
        }
        // Seat names, paths and process names come from files and the driver: escaped.
        for l in render_text(&report).lines() {
            println!("{}", bakeoff_report::escape::for_terminal(l, 2000));
        }
    }
    // A NO or an UNKNOWN to a coexistence question is not a fit (1); headroom warnings are
    // printed but are not failures of the command.
    Ok(match &report.coexistence {
        Some(c) if c.answer != Answer::Yes => Exit::Failed,
        _ => Exit::Ok,
    })
}

pub fn kv(cfg: KvConfig) -> Result<Exit, Error> {
    let mut req = cfg.request;
    if let Some(p) = &cfg.log {
        let text = std::fs::read_to_string(p)
            .map_err(|e| Error::usage(format!("{}: cannot read the log ({e})", p.display())))?;
        req.log = Some(parse_engine_log(&text));
    }
    let r = kv_report(&req)?;
    if cfg.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&r.json).map_err(Error::json)?
        );
    } else {
        // The header line first, then the warnings, then the arithmetic.
        let mut it = r.lines.iter();
        if let Some(first) = it.next() {
            println!("{first}");
        }
        for w in &r.warnings {
            println!("WARNING: {w}");
        }
        for l in it {
            println!("{l}");
        }
    }
    if r.mismatch {
        return Err(Error::failed(
            "the computed KV buffers or slots do not match the log's KV lines (see [NOT in the log] / [the log DISAGREES] above)",
        ));
    }
    Ok(Exit::Ok)
}
