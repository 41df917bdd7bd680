//! `bakeoff plan` and `bakeoff kv`: wiring of bakeoff-seats' fleet file into bakeoff-plan, and
//! of bakeoff-model's KV arithmetic.

use std::collections::BTreeMap;

use bakeoff_plan::fleet::{LaunchSpec, SeatSpec, StrOrList};
use bakeoff_plan::gpu::{gib, gib_to_bytes};
use bakeoff_plan::{FleetView, Overheads, PlanOptions, PlanRequest, render_text, run_plan};
use bakeoff_seats::fleet::{Engine, Fleet, Launch};

use crate::cli::{KvArgs, PlanArgs};
use crate::exit::{CliError, Exit, failed, usage};

/// The fleet file (bakeoff-seats' parser) as the plan sees it.
fn view_of(fleet: &Fleet, a: &PlanArgs) -> Result<FleetView, CliError> {
    let mut versions = BTreeMap::new();
    for v in &a.engine_versions {
        let (s, ver) = v
            .split_once('=')
            .ok_or_else(|| usage(format!("--engine-version {v:?}: write it as SEAT=VERSION")))?;
        versions.insert(s.to_owned(), ver.to_owned());
    }
    let mut gpu_memory = BTreeMap::new();
    let mut local_hosts = Vec::new();
    for (name, h) in &fleet.hosts {
        let local = h.docker.as_deref().is_none_or(|d| d.starts_with("unix://"))
            && matches!(h.address.as_str(), "127.0.0.1" | "localhost" | "::1" | "");
        if local {
            local_hosts.push(name.clone());
        }
        if let Some(m) = a.gpu_memory_gib {
            for i in 0..h.gpus.max(1) {
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
            let host_gpus = fleet.hosts.get(&s.host).map_or(1, |h| h.gpus.max(1));
            let (launch, mounts) = match &s.launch {
                Launch::Process(p) => {
                    let gpus = p
                        .env
                        .get("CUDA_VISIBLE_DEVICES")
                        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect());
                    (
                        LaunchSpec {
                            command: Some(StrOrList::One(p.command.clone())),
                            args: p.args.clone(),
                            image: None,
                            name: None,
                            gpus,
                        },
                        Vec::new(),
                    )
                }
                Launch::Docker(d) => {
                    let gpus = if d.gpus.iter().any(|g| g == "all") {
                        Some((0..host_gpus).collect())
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
                            command: Some(StrOrList::Many(d.command.clone())),
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
                engine: match s.engine {
                    Engine::Vllm => "vllm",
                    Engine::Sglang => "sglang",
                    Engine::LlamaCpp => "llama.cpp",
                    Engine::Generic => "generic",
                }
                .to_owned(),
                engine_version: versions.get(&s.name).cloned(),
                port: Some(s.port),
                served_names: s.served_model_names.clone(),
                gpu_memory_utilization: s.gpu_memory_utilization,
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
    Ok(FleetView {
        seats,
        gpu_memory,
        local_hosts,
    })
}

/// `HOST:CONTAINER[:ro]` mounts applied backwards to a container path.
fn host_path(p: &str, mounts: &[String]) -> String {
    for m in mounts {
        let mut it = m.split(':');
        if let (Some(h), Some(c)) = (it.next(), it.next())
            && let Some(rest) = p.strip_prefix(c)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return format!("{h}{rest}");
        }
    }
    p.to_owned()
}

pub fn run(a: PlanArgs) -> Result<Exit, CliError> {
    if !(a.margin.is_finite() && a.margin >= 0.0) {
        return Err(usage("--margin must be a number of GiB, 0 or more"));
    }
    let view = match &a.fleet {
        Some(p) => view_of(&Fleet::load(p).map_err(usage)?, &a)?,
        None => FleetView {
            seats: Vec::new(),
            gpu_memory: BTreeMap::new(),
            local_hosts: vec!["local".into()],
        },
    };
    let coexist = match &a.coexist {
        None => None,
        Some(c) => {
            let (x, y) = c
                .split_once(',')
                .ok_or_else(|| usage("--coexist takes two seat names: --coexist A,B"))?;
            let gpu = a.gpu.ok_or_else(|| usage("--coexist needs --gpu N"))?;
            Some((x.trim().to_owned(), y.trim().to_owned(), gpu))
        }
    };
    let opts = PlanOptions {
        margin_bytes: gib_to_bytes(a.margin),
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
        coexist,
        nvidia_smi: Some(&a.nvidia_smi),
    };
    let report = run_plan(&req, &opts).map_err(usage)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(usage)?);
    } else {
        // Seat names, paths and process names come from files and the driver: escaped.
        for l in render_text(&report).lines() {
            println!("{}", bakeoff_report::escape::for_terminal(l, 2000));
        }
    }
    // A "no" to a coexistence question is a checked-and-failed answer; headroom warnings
    // are printed but are not failures of the command.
    Ok(match &report.coexistence {
        Some(c) if !c.fits => Exit::Failed,
        _ => Exit::Ok,
    })
}

pub fn kv(a: KvArgs) -> Result<Exit, CliError> {
    use bakeoff_model::{
        GgufKvGeometry, HfConfig, KvCacheDtype, KvCostOptions, LlamaCppKvParams, kv_capacity,
        kv_cost, llamacpp_ctx_for_budget, llamacpp_kv_buffers, parse_engine_log,
        pool_over_max_len_ratio, read_gguf_file,
    };
    if let Some(b) = a.budget_gib
        && !(b.is_finite() && b >= 0.0)
    {
        return Err(usage("--budget-gib must be a number of GiB, 0 or more"));
    }
    let log = match &a.log {
        Some(p) => Some(parse_engine_log(&std::fs::read_to_string(p).map_err(
            |e| usage(format!("{}: cannot read the log ({e})", p.display())),
        )?)),
        None => None,
    };
    let mut out = serde_json::Map::new();
    let mut lines = Vec::new();
    let mut mismatch = false;
    let is_gguf = a.path.extension().is_some_and(|x| x == "gguf");
    if is_gguf {
        let g = read_gguf_file(&a.path).map_err(usage)?;
        let geo = GgufKvGeometry::from_gguf(&g, &a.path).map_err(usage)?;
        let ctx = a.ctx.or(g.context_length()).unwrap_or(4096);
        for (flag, t) in [
            ("--cache-type-k", &a.cache_type_k),
            ("--cache-type-v", &a.cache_type_v),
        ] {
            if bakeoff_model::ggml_types::cache_type_id(t).is_none() {
                return Err(usage(format!(
                    "{flag} {t}: not a llama.cpp cache type; use f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1 or iq4_nl"
                )));
            }
        }
        let params = LlamaCppKvParams {
            cache_type_k: a.cache_type_k.to_ascii_lowercase(),
            cache_type_v: a.cache_type_v.to_ascii_lowercase(),
            ..LlamaCppKvParams::from_server_flags(ctx, a.parallel, a.kv_unified)
        };
        let est = llamacpp_kv_buffers(&geo, &params)
            .ok_or_else(|| {
                usage(format!(
                    "-c {ctx}: the KV buffers overflow, or a row of {}/{} is not whole quantization blocks; fix: a smaller -c or another cache type",
                    params.cache_type_k, params.cache_type_v
                ))
            })?;
        lines.push(format!(
            "{}: {} ({} layers, {} sliding, window {:?}); llama.cpp -c {ctx} -np {}{} -ctk {} -ctv {}",
            a.path.display(),
            geo.architecture,
            geo.block_count,
            geo.swa_layers.iter().filter(|s| **s).count(),
            geo.sliding_window,
            a.parallel,
            if a.kv_unified { " -kvu" } else { "" },
            params.cache_type_k,
            params.cache_type_v
        ));
        for c in &est.caches {
            let mut l = format!(
                "  {} cache: {} cells × {} streams × {} layers = {}",
                if c.swa { "SWA" } else { "non-SWA" },
                c.cells,
                c.n_stream,
                c.layers,
                gib(c.size_bytes)
            );
            if let Some(log) = &log {
                let found = log
                    .llamacpp_kv_caches
                    .iter()
                    .any(|line| c.matches_log(line));
                l.push_str(if found {
                    "  [matches the log]"
                } else {
                    "  [NOT in the log]"
                });
                mismatch |= !found;
            }
            lines.push(l);
        }
        lines.push(format!("  total KV buffers: {}", gib(est.total_bytes)));
        // The pool ÷ max-model-len ratio, in llama.cpp's terms: -c cells hold the pool.
        let len = a.max_model_len.or(g.context_length());
        if let Some(len) = len {
            lines.push(format!(
                "  -c {ctx}: the pool holds {:.2}× a full-length ({len}-token) sequence",
                pool_over_max_len_ratio(ctx, len)
            ));
        }
        if let Some(b) = a.budget_gib {
            let budget = gib_to_bytes(b);
            // `None` only for an unknown cache type, refused above; kept as an error rather
            // than a silent `-c 0` should that ever change.
            let fit = llamacpp_ctx_for_budget(&geo, &params, budget)
                .ok_or_else(|| usage("KV cache types unknown to bakeoff"))?;
            let mut l = format!(
                "  budget {}: llama-server -c {fit} ({} tokens per sequence with -np {})",
                gib(budget),
                LlamaCppKvParams::from_server_flags(fit, a.parallel, a.kv_unified).cells,
                a.parallel.max(1)
            );
            if let Some(len) = len {
                l.push_str(&format!(
                    "; the pool holds {:.2}× a full-length ({len}-token) sequence",
                    pool_over_max_len_ratio(fit, len)
                ));
            }
            lines.push(l);
            out.insert(
                "capacity".into(),
                serde_json::json!({
                    "bytes_budget": budget,
                    "ctx": fit,
                    "max_model_len": len,
                    "pool_over_max_len_ratio": len.map(|l| pool_over_max_len_ratio(fit, l)),
                }),
            );
        }
        out.insert(
            "geometry".into(),
            serde_json::to_value(&geo).map_err(usage)?,
        );
        out.insert(
            "llamacpp".into(),
            serde_json::to_value(&est).map_err(usage)?,
        );
    } else {
        let cfg_path = if a.path.is_dir() {
            a.path.join("config.json")
        } else {
            a.path.clone()
        };
        let cfg = HfConfig::read(&cfg_path).map_err(usage)?;
        let geo = cfg.kv_geometry().map_err(usage)?;
        let dtype = KvCacheDtype::parse(&a.kv_cache_dtype)
            .ok_or_else(|| usage(format!("--kv-cache-dtype {}: unknown", a.kv_cache_dtype)))?;
        let cost = kv_cost(
            &geo,
            &KvCostOptions {
                kv_cache_dtype: dtype,
                tensor_parallel_size: a.tp,
                mamba_ssm_dtype_bytes: None,
            },
        );
        let len = a
            .max_model_len
            .or(cfg.summary().max_position_embeddings)
            .ok_or_else(|| usage("no context length in config.json: pass --max-model-len"))?;
        lines.push(format!(
            "{}: {} per token in full-attention layers, {} per token in sliding-window layers (window {:?}), {} state per sequence; tp {} ({} KV heads per GPU{})",
            cfg_path.display(),
            bytes_words(cost.full_attention_bytes_per_token),
            bytes_words(cost.sliding_window_bytes_per_token),
            cost.sliding_window,
            bytes_words(cost.state_bytes_per_sequence),
            cost.tensor_parallel_size,
            cost.kv_heads_per_gpu,
            if cost.kv_heads_replicated { ", replicated" } else { "" }
        ));
        lines.push(format!(
            "  one {len}-token sequence: {}",
            gib(cost.bytes_per_sequence(len))
        ));
        let budget = a
            .budget_gib
            .map(gib_to_bytes)
            .or_else(|| log.as_ref()?.vllm_available_kv_cache_gib.map(gib_to_bytes));
        if let Some(b) = budget {
            let cap = kv_capacity(b, &cost, len);
            lines.push(format!(
                "  budget {}: {} tokens; the pool holds {:.2}× a full-length ({len}-token) sequence",
                gib(b),
                cap.tokens,
                cap.pool_over_max_len_ratio
            ));
            if let Some(logged) = log.as_ref().and_then(|l| l.vllm_kv_cache_tokens) {
                let diff = (cap.tokens as f64 - logged as f64) / logged.max(1) as f64 * 100.0;
                lines.push(format!(
                    "  vLLM logged GPU KV cache size: {logged} tokens ({:.2}× of {len}); computed {:+.1}% from it",
                    pool_over_max_len_ratio(logged, len),
                    diff
                ));
            }
            out.insert(
                "capacity".into(),
                serde_json::to_value(&cap).map_err(usage)?,
            );
        } else {
            lines.push("  no budget: pass --budget-gib, or --log with vLLM's `Available KV cache memory` line".into());
        }
        out.insert(
            "geometry".into(),
            serde_json::to_value(&geo).map_err(usage)?,
        );
        out.insert("cost".into(), serde_json::to_value(&cost).map_err(usage)?);
    }
    if let Some(l) = &log {
        out.insert("log".into(), serde_json::to_value(l).map_err(usage)?);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out).map_err(usage)?);
    } else {
        for l in &lines {
            println!("{l}");
        }
    }
    if mismatch {
        return Err(failed(
            "the computed KV buffers do not match the log's KV lines",
        ));
    }
    Ok(Exit::Ok)
}

fn bytes_words(b: u64) -> String {
    if b < 1 << 20 {
        format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
    } else {
        gib(b)
    }
}
