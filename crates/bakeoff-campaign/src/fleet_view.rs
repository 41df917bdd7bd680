//! The fleet file (bakeoff-seats' parser) as bakeoff-plan sees it: the one bridge, for
//! `bakeoff plan` and for a campaign's memory check before it starts a variant ([`crate::fits`]).
//!
//! A seat's command, arguments and environment are read after bakeoff-seats' own placeholder
//! expansion (`bakeoff_seats::process::substitute`: `{cache}`, `{port}`, `{seat}`), so the plan
//! sizes the files the seat really starts with.

use std::collections::BTreeMap;

use bakeoff_plan::FleetView;
use bakeoff_plan::fleet::{LaunchSpec, SeatSpec, StrOrList, cuda_visible_devices};
use bakeoff_seats::Fleet;
use bakeoff_seats::fleet::{Launch, Seat};
use bakeoff_seats::process::substitute;

/// Plan inputs that do not come from the fleet file.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Engine version by seat (`bakeoff plan --engine-version SEAT=VERSION`), for seats whose
    /// image tag does not say it.
    pub engine_versions: BTreeMap<String, String>,
    /// The size of every GPU of every host, in GiB, where no reading gives it
    /// (`bakeoff plan --gpu-memory-gib`, a campaign file's `gpu_memory_gib`).
    pub gpu_memory_gib: Option<f64>,
}

/// The fleet file (bakeoff-seats' parser) as the plan sees it.
pub fn view_of(fleet: &Fleet, opts: &ViewOptions) -> FleetView {
    let mut gpu_memory = BTreeMap::new();
    let mut local_hosts = Vec::new();
    for (name, h) in &fleet.hosts {
        let local = h.docker.as_deref().is_none_or(|d| d.starts_with("unix://"))
            && matches!(h.address.as_str(), "127.0.0.1" | "localhost" | "::1" | "");
        if local {
            local_hosts.push(name.clone());
        }
        // The command line's size (`--gpu-memory-gib`) over the fleet file's `[hosts.NAME]
        // gpu_memory_gib`: the operator's latest word wins.
        if let Some(m) = opts.gpu_memory_gib.or(h.gpu_memory_gib) {
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
            let (launch, mounts) = launch_of(s, host_gpus);
            let spec = SeatSpec {
                name: s.name.clone(),
                host: Some(s.host.clone()),
                engine: s.engine,
                engine_version: opts.engine_versions.get(&s.name).cloned(),
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

/// A seat's launch as the plan reads it (placeholders expanded by the seat's own rule, as
/// `seat up` applies it), and its container's mounts (none for a process seat).
fn launch_of(s: &Seat, host_gpus: Option<u32>) -> (LaunchSpec, Vec<String>) {
    let sub = |x: &str| substitute(x, s);
    match &s.launch {
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
                    command: Some(StrOrList::Many(d.command.iter().map(|x| sub(x)).collect())),
                    args: Vec::new(),
                    image: Some(d.image.clone()),
                    name: s.container_name(),
                    gpus,
                },
                d.mounts.clone(),
            )
        }
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
