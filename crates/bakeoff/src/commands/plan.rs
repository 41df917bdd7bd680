//! `bakeoff plan` and `bakeoff kv`: wiring of bakeoff-seats' fleet file into bakeoff-plan, and
//! of bakeoff-model's KV arithmetic.
//!
//! A seat's command, arguments and environment are read after bakeoff-seats' own placeholder
//! expansion (`bakeoff_seats::process::substitute`: `{cache}`, `{port}`, `{seat}`), so the plan
//! sizes the files the seat really starts with.

use std::collections::BTreeMap;

use bakeoff_plan::fleet::{LaunchSpec, SeatSpec, StrOrList, cuda_visible_devices};
use bakeoff_plan::gpu::{gib, gib_to_bytes};
use bakeoff_plan::{Answer, FleetView, Overheads, PlanOptions, PlanRequest, render_text, run_plan};
use bakeoff_seats::fleet::{Engine, Fleet, Launch};
use bakeoff_seats::process::substitute;

use crate::cli::{KvArgs, PlanArgs};
use crate::exit::{CliError, Exit, failed, usage};

/// A whole-number flag that must be 1 or more: one line naming the flag and the fix.
fn at_least_one(flag: &str, v: i64, fix: &str) -> Result<u64, CliError> {
    u64::try_from(v).ok().filter(|v| *v >= 1).ok_or_else(|| {
        usage(format!(
            "{flag} {v}: must be a whole number, 1 or more; fix: {fix}"
        ))
    })
}

/// A GiB flag that must be a finite number above 0.
fn positive_gib(flag: &str, v: f64, fix: &str) -> Result<f64, CliError> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(usage(format!(
            "{flag} {v}: must be a number of GiB above 0; fix: {fix}"
        )))
    }
}

/// The fleet file (bakeoff-seats' parser) as the plan sees it.
fn view_of(
    fleet: &Fleet,
    a: &PlanArgs,
    gpu_memory_gib: Option<f64>,
) -> Result<FleetView, CliError> {
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
    Ok(FleetView {
        seats,
        gpu_memory,
        local_hosts,
    })
}

/// `HOST:CONTAINER[:ro]` mounts applied backwards to a container path, by the seats' own rule
/// (the longest container prefix wins), so `plan` and `seat up` map a model to one host path; a
/// path outside every mount (or a hub id) is shown as given.
fn host_path(p: &str, mounts: &[String]) -> String {
    bakeoff_seats::hooks::host_path(std::path::Path::new(p), mounts)
        .map(|h| h.display().to_string())
        .unwrap_or_else(|| p.to_owned())
}

pub fn run(a: PlanArgs) -> Result<Exit, CliError> {
    // Every numeric flag is checked before anything is read.
    if !(a.margin.is_finite() && a.margin >= 0.0) {
        return Err(usage(format!(
            "--margin {}: must be a number of GiB, 0 or more; fix: e.g. --margin 2 (0 for no margin)",
            a.margin
        )));
    }
    let gpu_memory_gib = a
        .gpu_memory_gib
        .map(|m| {
            positive_gib(
                "--gpu-memory-gib",
                m,
                "the card's memory as PyTorch reports it, e.g. 94.97 for an H100 NVL",
            )
        })
        .transpose()?;
    let cuda_context_gib = positive_gib(
        "--cuda-context-gib",
        a.cuda_context_gib,
        "what nvidia-smi shows for a freshly started seat beyond its budget (default 0.5)",
    )?;
    let cuda_graphs_gib = positive_gib(
        "--cuda-graphs-gib",
        a.cuda_graphs_gib,
        "what a pre-v0.21 vLLM seat's graphs hold (default 1.0); a seat with --enforce-eager is already priced without graphs",
    )?;
    let gpu = a
        .gpu
        .map(|g| {
            u32::try_from(g).map_err(|_| {
                usage(format!(
                    "--gpu {g}: not a GPU index; fix: pass the index nvidia-smi shows (0, 1, …)"
                ))
            })
        })
        .transpose()?;
    let view = match &a.fleet {
        Some(p) => view_of(&Fleet::load(p).map_err(usage)?, &a, gpu_memory_gib)?,
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
            let gpu = gpu.ok_or_else(|| usage("--coexist needs --gpu N"))?;
            Some((x.trim().to_owned(), y.trim().to_owned(), gpu))
        }
    };
    let opts = PlanOptions {
        margin_bytes: gib_to_bytes(a.margin),
        overheads: Overheads {
            cuda_context_bytes: gib_to_bytes(cuda_context_gib),
            cuda_graph_bytes: gib_to_bytes(cuda_graphs_gib),
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
    // A NO or an UNKNOWN to a coexistence question is not a fit (1); headroom warnings are
    // printed but are not failures of the command.
    Ok(match &report.coexistence {
        Some(c) if c.answer != Answer::Yes => Exit::Failed,
        _ => Exit::Ok,
    })
}

pub fn kv(a: KvArgs) -> Result<Exit, CliError> {
    use bakeoff_model::{
        GgufKvGeometry, HfConfig, KvCacheDtype, KvCostOptions, LlamaCppKvParams, kv_capacity,
        kv_cost, llamacpp_ctx_for_budget, llamacpp_kv_buffers, llamacpp_slot_context,
        parse_engine_log, pool_over_max_len_ratio, read_gguf_file,
    };
    // Every numeric flag is checked before anything is read: 0, negative and NaN are refused.
    let max_model_len = a
        .max_model_len
        .map(|v| {
            at_least_one(
                "--max-model-len",
                v,
                "pass the engine's max_model_len in tokens (e.g. 32768), or leave it out to use the model's context length",
            )
        })
        .transpose()?;
    let budget_gib = a
        .budget_gib
        .map(|b| {
            positive_gib(
                "--budget-gib",
                b,
                "pass the KV budget in GiB (vLLM's `Available KV cache memory`, e.g. 20), or leave it out",
            )
        })
        .transpose()?;
    let tp = at_least_one(
        "--tp",
        a.tp,
        "pass the seat's tensor-parallel size (1 without tensor parallelism)",
    )?;
    let ctx_flag = a
        .ctx
        .map(|c| {
            at_least_one(
                "--ctx",
                c,
                "pass llama-server's -c in tokens; for -c 0 (llama-server's \"the model's training context\") leave --ctx out",
            )
        })
        .transpose()?;
    let parallel = at_least_one(
        "--parallel",
        a.parallel,
        "pass llama-server's -np (1 or more)",
    )?;
    let log = match &a.log {
        Some(p) => Some(parse_engine_log(&std::fs::read_to_string(p).map_err(
            |e| usage(format!("{}: cannot read the log ({e})", p.display())),
        )?)),
        None => None,
    };
    let mut out = serde_json::Map::new();
    let mut lines = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut mismatch = false;
    let is_gguf = a.path.extension().is_some_and(|x| x == "gguf");
    if is_gguf {
        let g = read_gguf_file(&a.path).map_err(usage)?;
        let geo = GgufKvGeometry::from_gguf(&g, &a.path).map_err(usage)?;
        // llama.cpp's n_ctx_train: the GGUF's context_length.
        let n_ctx_train = g.context_length().filter(|t| *t > 0);
        let ctx = ctx_flag.or(n_ctx_train).unwrap_or(4096);
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
            ..LlamaCppKvParams::from_server_flags(ctx, parallel, a.kv_unified)
        };
        let est = llamacpp_kv_buffers(&geo, &params)
            .ok_or_else(|| {
                usage(format!(
                    "-c {ctx}: the KV buffers overflow, or a row of {}/{} is not whole quantization blocks; fix: a smaller -c or another cache type",
                    params.cache_type_k, params.cache_type_v
                ))
            })?;
        lines.push(format!(
            "{}: {} ({} layers, {} sliding, window {:?}, training context {}); llama.cpp -c {ctx} -np {parallel}{} -ctk {} -ctv {}",
            a.path.display(),
            geo.architecture,
            geo.block_count,
            geo.swa_layers.iter().filter(|s| **s).count(),
            geo.sliding_window,
            n_ctx_train.map_or_else(|| "unknown".to_owned(), |t| format!("{t}")),
            if a.kv_unified { " -kvu" } else { "" },
            params.cache_type_k,
            params.cache_type_v
        ));
        if let Some(train) = n_ctx_train
            && params.cells > train
        {
            warnings.push(llamacpp_over_train(
                params.cells,
                train,
                &format!(
                    "-c {ctx} -np {parallel}{}",
                    if a.kv_unified { " -kvu" } else { "" }
                ),
            ));
        }
        // At default verbosity llama-server b11434 prints no `llama_kv_cache: size =` lines
        // (they come at -lv 4): absent lines are not a mismatch.
        let log_has_kv = log.as_ref().map(|l| !l.llamacpp_kv_caches.is_empty());
        for c in &est.caches {
            let mut l = format!(
                "  {} cache: {} cells × {} streams × {} layers = {}",
                if c.swa { "SWA" } else { "non-SWA" },
                c.cells,
                c.n_stream,
                c.layers,
                gib(c.size_bytes)
            );
            match (&log, log_has_kv) {
                (Some(log), Some(true)) => {
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
                (Some(_), _) => l.push_str("  [not in the log (raise verbosity: -lv 4)]"),
                (None, _) => {}
            }
            lines.push(l);
        }
        if log_has_kv == Some(false) {
            lines.push("  the log has no `llama_kv_cache: size = …` lines: llama-server prints them only at verbosity 4 (-lv 4); nothing to compare, not a mismatch".into());
        }
        if let Some(has) = log_has_kv {
            out.insert(
                "log_kv_check".into(),
                serde_json::Value::String(
                    match (has, mismatch) {
                        (false, _) => "not in the log (raise verbosity: -lv 4)",
                        (true, false) => "matches",
                        (true, true) => "mismatch",
                    }
                    .into(),
                ),
            );
        }
        // The slot line is printed at the default verbosity: slots, and each one's context
        // (capped at n_ctx_train, as llama-server does).
        let slot_ctx = llamacpp_slot_context(&params, n_ctx_train);
        let mut l = format!("  slots: -np {parallel}, {slot_ctx} tokens each");
        if let Some(slots) = log.as_ref().and_then(|l| l.llamacpp_slots.as_ref()) {
            let same = slots.n_slots == parallel
                && slots.n_ctx_slot == slot_ctx
                && slots.kv_unified.is_none_or(|u| u == a.kv_unified);
            l.push_str(&format!(
                "  [the log {}: n_slots = {}, n_ctx_slot = {}{}]",
                if same { "agrees" } else { "DISAGREES" },
                slots.n_slots,
                slots.n_ctx_slot,
                slots
                    .kv_unified
                    .map(|u| format!(", kv_unified = {u}"))
                    .unwrap_or_default()
            ));
            mismatch |= !same;
            out.insert(
                "log_slots_check".into(),
                serde_json::Value::String(if same { "agrees" } else { "disagrees" }.into()),
            );
        }
        lines.push(l);
        lines.push(format!("  total KV buffers: {}", gib(est.total_bytes)));
        // The pool ÷ max-model-len ratio, in llama.cpp's terms: -c cells hold the pool.
        if let (Some(m), Some(train)) = (max_model_len, n_ctx_train)
            && m > train
        {
            warnings.push(format!(
                "--max-model-len {m} is past the model's training context ({train} tokens, GGUF context_length): llama-server caps each slot at {train}, so no sequence is longer than that"
            ));
        }
        let len = max_model_len.or(n_ctx_train);
        if let Some(len) = len {
            lines.push(format!(
                "  -c {ctx}: the pool holds {:.2}× a full-length ({len}-token) sequence",
                pool_over_max_len_ratio(ctx, len)
            ));
        }
        if let Some(b) = budget_gib {
            let budget = gib_to_bytes(b);
            // `None` only for an unknown cache type, refused above; kept as an error rather
            // than a silent `-c 0` should that ever change.
            let fit = llamacpp_ctx_for_budget(&geo, &params, budget)
                .ok_or_else(|| usage("KV cache types unknown to bakeoff"))?;
            // No slot holds more than n_ctx_train (server-context.cpp `n_ctx_slot`): a -c past
            // n_ctx_train × -np buys cells no sequence can use.
            let useful = n_ctx_train.map(|t| t.saturating_mul(parallel));
            let (answer, capped) = match useful {
                Some(u) if fit > u => (u, true),
                _ => (fit, false),
            };
            let at = LlamaCppKvParams::from_server_flags(answer, parallel, a.kv_unified);
            let mut l = format!(
                "  budget {}: llama-server -c {answer} ({} tokens per sequence with -np {parallel})",
                gib(budget),
                llamacpp_slot_context(&at, n_ctx_train),
            );
            if let Some(len) = len {
                l.push_str(&format!(
                    "; the pool holds {:.2}× a full-length ({len}-token) sequence",
                    pool_over_max_len_ratio(answer, len)
                ));
            }
            lines.push(l);
            if capped && let Some(train) = n_ctx_train {
                let over = LlamaCppKvParams::from_server_flags(fit, parallel, a.kv_unified);
                lines.push(format!(
                    "  capped at the model's training context ({train} tokens per sequence × -np {parallel}): the budget would hold -c {fit}, but llama-server caps each slot at {train}; the rest of the budget buys nothing"
                ));
                warnings.push(llamacpp_over_train(
                    over.cells,
                    train,
                    &format!("the budget's -c {fit}"),
                ));
            }
            out.insert(
                "capacity".into(),
                serde_json::json!({
                    "bytes_budget": budget,
                    "ctx": answer,
                    "ctx_for_budget": fit,
                    "capped_at_training_context": capped,
                    "n_ctx_train": n_ctx_train,
                    "max_model_len": len,
                    "pool_over_max_len_ratio": len.map(|l| pool_over_max_len_ratio(answer, l)),
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
                tensor_parallel_size: tp,
                mamba_ssm_dtype_bytes: None,
            },
        );
        // vLLM's derived max_model_len: the longest it accepts without the env override.
        let derived = cfg.derived_max_model_len();
        let asked = max_model_len
            .or(derived.as_ref().map(|d| d.tokens))
            .or(cfg.summary().max_position_embeddings)
            .ok_or_else(|| usage("no context length in config.json: pass --max-model-len"))?;
        let over = derived.as_ref().filter(|d| asked > d.tokens);
        // The answer is priced at what vLLM accepts; the asked length is shown beside it.
        let len = over.map_or(asked, |d| d.tokens);
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
        if let Some(d) = over {
            warnings.push(format!(
                "--max-model-len {asked} is past the model's context: vLLM derives {} ({} in config.json{}) and refuses to start (`User-specified max_model_len ({asked}) is greater than the derived max_model_len ({} …)`) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, with which positions past {} give NaN under RoPE (vllm/config/model.py `_get_and_verify_max_len`); the answer below is capped at {}",
                d.tokens,
                d.key,
                d.rope_scaling
                    .as_deref()
                    .map(|r| format!(", {r}"))
                    .unwrap_or_default(),
                d.key,
                d.tokens,
                d.tokens
            ));
        }
        lines.push(format!(
            "  one {len}-token sequence: {}",
            gib(cost.bytes_per_sequence(len))
        ));
        let budget = budget_gib
            .map(gib_to_bytes)
            .or_else(|| log.as_ref()?.vllm_available_kv_cache_gib.map(gib_to_bytes));
        if let Some(b) = budget {
            let cap = kv_capacity(b, &cost, len);
            lines.push(format!(
                "  budget {}: {} tokens; the pool holds {:.2}× a full-length ({len}-token) sequence{}",
                gib(b),
                cap.tokens,
                cap.pool_over_max_len_ratio,
                if over.is_some() {
                    format!(" (capped at the model's {len} tokens, not the {asked} asked)")
                } else {
                    String::new()
                }
            ));
            if over.is_some() {
                let at_asked = kv_capacity(b, &cost, asked);
                lines.push(format!(
                    "  with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 at {asked}: {} tokens; the pool holds {:.2}× a full-length ({asked}-token) sequence",
                    at_asked.tokens, at_asked.pool_over_max_len_ratio
                ));
            }
            if let Some(logged) = log.as_ref().and_then(|l| l.vllm_kv_cache_tokens) {
                // The log is of a running engine: compare at the length it ran with.
                let ran = log
                    .as_ref()
                    .and_then(|l| l.vllm_max_concurrency.as_ref())
                    .map_or(asked, |c| c.tokens_per_request);
                let computed = kv_capacity(b, &cost, ran).tokens;
                let diff = (computed as f64 - logged as f64) / logged.max(1) as f64 * 100.0;
                lines.push(format!(
                    "  vLLM logged GPU KV cache size: {logged} tokens ({:.2}× of {ran}); computed {:+.1}% from it",
                    pool_over_max_len_ratio(logged, ran),
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
        if let Some(d) = &derived {
            out.insert(
                "derived_max_model_len".into(),
                serde_json::to_value(d).map_err(usage)?,
            );
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
    out.insert(
        "warnings".into(),
        serde_json::to_value(&warnings).map_err(usage)?,
    );
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out).map_err(usage)?);
    } else {
        // The header line first, then the warnings, then the arithmetic.
        let mut it = lines.iter();
        if let Some(first) = it.next() {
            println!("{first}");
        }
        for w in &warnings {
            println!("WARNING: {w}");
        }
        for l in it {
            println!("{l}");
        }
    }
    if mismatch {
        return Err(failed(
            "the computed KV buffers or slots do not match the log's KV lines (see [NOT in the log] / [the log DISAGREES] above)",
        ));
    }
    Ok(Exit::Ok)
}

/// What llama.cpp does when a slot's context passes the training context (b11434:
/// src/llama-context.cpp and tools/server/server-context.cpp).
fn llamacpp_over_train(cells: u64, train: u64, what: &str) -> String {
    format!(
        "{what} gives each slot {cells} tokens, past the model's training context ({train} tokens, GGUF context_length): llama.cpp warns `n_ctx_seq ({cells}) > n_ctx_train ({train}) -- possible training context overflow` and llama-server caps each slot at {train} (`the slot context ({cells}) exceeds the training context of the model ({train}) - capping`), while still allocating the KV buffers for all of -c"
    )
}

fn bytes_words(b: u64) -> String {
    if b < 1 << 20 {
        format!("{b} B ({:.1} KiB)", b as f64 / 1024.0)
    } else {
        gib(b)
    }
}
