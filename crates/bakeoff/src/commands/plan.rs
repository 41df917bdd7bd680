//! `bakeoff plan` and `bakeoff kv`: wiring of bakeoff-seats' fleet file into bakeoff-plan, and
//! of bakeoff-model's KV arithmetic.
//!
//! A seat's command, arguments and environment are read after bakeoff-seats' own placeholder
//! expansion (`bakeoff_seats::process::substitute`: `{cache}`, `{port}`, `{seat}`), so the plan
//! sizes the files the seat really starts with.

use std::collections::BTreeMap;

use bakeoff_model::parse_engine_log;
use bakeoff_plan::fleet::{LaunchSpec, SeatSpec, StrOrList, cuda_visible_devices};
use bakeoff_plan::gpu::gib_to_bytes;
use bakeoff_plan::kv_report::kv_report;
use bakeoff_plan::{Answer, FleetView, Overheads, PlanOptions, PlanRequest, render_text, run_plan};
use bakeoff_seats::fleet::{Fleet, Launch};
use bakeoff_seats::process::substitute;

use crate::config::{KvConfig, PlanConfig};
use crate::exit::{Error, Exit};

/// The fleet file (bakeoff-seats' parser) as the plan sees it.
fn view_of(fleet: &Fleet, cfg: &PlanConfig) -> FleetView {
    let versions = &cfg.engine_versions;
    let gpu_memory_gib = cfg.gpu_memory_gib;
    let mut gpu_memory = BTreeMap::new();
    let mut local_hosts = Vec::new();
    for (name, h) in &fleet.hosts {
        let local = h.docker.as_deref().is_none_or(|d| d.starts_with("unix://"))
            && matches!(h.address.as_str(), "127.0.0.1" | "localhost" | "::1" | "");
        if local {
            local_hosts.push(name.clone());
        }
        if let Some(m) = gpu_memory_gib {
            for i in 0..h.gpus {
                gpu_memory.insert((name.clone(), i), m);
            }
        }
    }
    if fleet.hosts.is_empty() {
        local_hosts.push("local".into());
    }
    let seats = fleet
        .seats
        .iter()
        .map(|s| {
            let host_gpus = fleet.hosts.get(&s.host).map(|h| h.gpus);
            // The seat's own placeholder rule, as `seat up` applies it.
            let sub = |x: &str| substitute(x, s);
            let (launch, mounts) = match &s.launch {
                Launch::Process(p) => {
                    let gpus = p
                        .env
                        .get("CUDA_VISIBLE_DEVICES")
                        .and_then(|v| cuda_visible_devices(&sub(v)));
                    (
                        LaunchSpec {
                            command: Some(StrOrList::One(sub(&p.command))),
                            args: p.args.iter().map(|x| sub(x)).collect(),
                            image: None,
                            name: None,
                            gpus,
                        },
                        Vec::new(),
                    )
                }
                Launch::Docker(d) => {
                    let gpus = if d.gpus.iter().any(|g| g == "all") {
                        Some((0..host_gpus.unwrap_or(1)).collect())
                    } else if d.gpus.is_empty() {
                        None
                    } else {
                        Some(
                            d.gpus
                                .iter()
                                .filter_map(|g| g.trim().parse().ok())
                                .collect(),
                        )
                    };
                    (
                        LaunchSpec {
                            command: Some(StrOrList::Many(
                                d.command.iter().map(|x| sub(x)).collect(),
                            )),
                            args: Vec::new(),
                            image: Some(d.image.clone()),
                            name: s.container_name(),
                            gpus,
                        },
                        d.mounts.clone(),
                    )
                }
            };
            let spec = SeatSpec {
                name: s.name.clone(),
                host: Some(s.host.clone()),
                engine: s.engine.to_string(),
                engine_version: versions.get(&s.name).cloned(),
                port: Some(s.port),
                served_names: s.served_model_names.clone(),
                gpu_memory_utilization: s.gpu_memory_utilization,
                host_gpus,
                launch: Some(launch),
                ..SeatSpec::default()
            };
            let mut ps = spec.to_plan_seat(&s.host);
            // A container path of the model maps back to the host through the mounts.
            if let Some(m) = &ps.model {
                ps.model = Some(host_path(m, &mounts));
            }
            ps
        })
        .collect();
    FleetView {
        seats,
        gpu_memory,
        local_hosts,
    }
}

/// `HOST:CONTAINER[:ro]` mounts applied backwards to a container path, by the seats' own rule
/// (the longest container prefix wins), so `plan` and `seat up` map a model to one host path; a
/// path outside every mount (or a hub id) is shown as given.
fn host_path(p: &str, mounts: &[String]) -> String {
    bakeoff_seats::hooks::host_path(std::path::Path::new(p), mounts)
        .map(|h| h.display().to_string())
        .unwrap_or_else(|| p.to_owned())
}

pub fn run(a: PlanConfig) -> Result<Exit, Error> {
    let view = match &a.fleet {
        Some(p) => view_of(&Fleet::load(p)?, &a),
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
        nvidia_smi: Some(&a.nvidia_smi),
    };
    let report = run_plan(&req, &opts)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(Error::json)?
        );
    } else {
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
