//! `bakeoff plan` and `bakeoff kv`: wiring of bakeoff-seats' fleet file into bakeoff-plan
//! (through `bakeoff_campaign::fleet_view`, the one bridge, shared with a campaign's memory
//! check), and of bakeoff-model's KV arithmetic.

use std::collections::BTreeMap;

use bakeoff_campaign::fleet_view::{ViewOptions, view_of};
use bakeoff_campaign::host_readings::read_hosts;
use bakeoff_gpu::MachineReadings;
use bakeoff_gpu::units::gib_to_bytes;
use bakeoff_model::parse_engine_log;
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

/// One row per GPU — host, GPU, total, claimed, measured, headroom (GiB), seats — laid out for
/// `width` columns; `None` when the plan has no GPU. Headroom is the planned one (running seats
/// as measured), `≤` when some claim has unpriced terms.
fn gpu_table_at(gpus: &[bakeoff_plan::GpuPlan], width: u16) -> Option<String> {
    use bakeoff_report::escape::for_terminal;
    use bakeoff_report::table::{Grid, Kind, render};
    if gpus.is_empty() {
        return None;
    }
    let gib = |b: Option<u64>| {
        b.map(|b| format!("{:.2}", b as f64 / 1024f64.powi(3)))
            .unwrap_or_else(|| "-".into())
    };
    let mut t = Grid::new();
    t.column("host", Kind::Name(40))
        .column("GPU", Kind::Number)
        .secondary("name", Kind::Text)
        .column("total (GiB)", Kind::Number)
        .column("claimed (GiB)", Kind::Number)
        .column("measured (GiB)", Kind::Number)
        .column("headroom (GiB)", Kind::Number)
        .column("seats", Kind::Words);
    for g in gpus {
        let headroom = match g.headroom_planned_bytes {
            Some(b) => format!(
                "{}{:.2}",
                if g.headroom_is_upper_bound {
                    "≤ "
                } else {
                    ""
                },
                b as f64 / 1024f64.powi(3)
            ),
            None => "unknown".into(),
        };
        let seats: Vec<&str> = g.seats.iter().map(|s| s.claim.seat.as_str()).collect();
        t.row(vec![
            for_terminal(&g.host, 200),
            g.index.to_string(),
            for_terminal(g.name.as_deref().unwrap_or("-"), 80),
            gib(g.total_bytes),
            gib(g.claimed_bytes),
            gib(g.measured_used_bytes),
            headroom,
            if seats.is_empty() {
                "-".into()
            } else {
                for_terminal(&seats.join(", "), 400)
            },
        ]);
    }
    Some(render(&t, width))
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn gpu(host: &str, index: u32, seats: &[&str], upper: bool) -> bakeoff_plan::GpuPlan {
        let claim = |seat: &str| {
            serde_json::json!({
                "claim": {
                    "seat": seat, "engine": "vllm", "engine_version": "0.19.0", "gpu": index,
                    "gpu_memory_utilization": 0.45, "utilization_is_default": false,
                    "budget_bytes": null, "rule": "-", "parts": [], "expected_bytes": null,
                    "unpriced": [], "weights_bytes": null, "notes": [],
                },
                "measured": null, "effective_bytes": null,
            })
        };
        let gib = 1u64 << 30;
        serde_json::from_value(serde_json::json!({
            "host": host, "index": index, "name": "NVIDIA H200", "total_bytes": 141 * gib,
            "total_source": "nvml",
            "seats": seats.iter().map(|s| claim(s)).collect::<Vec<_>>(),
            "utilization_sum": 0.9, "claimed_bytes": 127 * gib,
            "measured_used_bytes": 98 * gib + gib / 3, "other_processes": [],
            "headroom_by_claims_bytes": 14 * gib, "headroom_planned_bytes": -(3 * gib as i64),
            "headroom_is_upper_bound": upper, "alternatives": [], "warnings": [], "notes": [],
        }))
        .unwrap()
    }

    #[test]
    fn the_per_gpu_table_at_each_width() {
        let gpus = vec![
            gpu(
                "local",
                0,
                &["gemma-vllm", "qwen-sglang-with-a-long-name"],
                false,
            ),
            gpu("gpu-box-2.internal.example.org", 1, &[], true),
        ];
        assert!(gpu_table_at(&[], 120).is_none());
        let zero = bakeoff_report::table::width_from(None, Some(0));
        for (w, name) in [(60, "60"), (100, "100"), (200, "200"), (zero, "reported_0")] {
            let text = gpu_table_at(&gpus, w).unwrap();
            assert!(text.contains("-3.00") && text.contains("141.00"), "{text}");
            insta::assert_snapshot!(format!("gpu_table_{name}"), text);
        }
    }
}
