//! The failure-class table against real engine log excerpts. Each excerpt cites where it came
//! from: the field cases (docs/field-cases.md, quoted verbatim where they quote the log), the
//! engine and library sources named beside it (with the versions read), or llama.cpp b11434
//! logs measured on this machine. Classes produced by the watchdog rather than one line (init-wedge,
//! crash-loop, host-oom, exited, port-in-use for llama.cpp) are produced for real in
//! process_backend.rs and docker_backend.rs.

use bakeoff_artifact::FailureClass as C;
use bakeoff_seats::classify::root_cause;
use bakeoff_seats::progress;

pub(crate) fn lines(s: &str) -> Vec<String> {
    s.lines().map(str::to_string).collect()
}

pub(crate) fn class_of(s: &str) -> Option<C> {
    root_cause(&lines(s)).map(|c| c.class)
}

#[test]
fn cuda_oom_field_case_f1_crash_loop() {
    // docs/field-cases.md F1, quoted log (vLLM char-rp seat, 13 restarts).
    let log = "INFO Graph capturing finished in 8 secs\n\
               torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB.\n\
               GPU 0 has a total capacity of 94.97 GiB of which 195.19 MiB is free.";
    assert_eq!(class_of(log), Some(C::CudaOom));
}

#[test]
fn kv_cache_budget_field_case_b4_ladder() {
    // docs/field-cases.md B4: "died at cache-block allocation (\"No available memory for the cache
    // blocks\")"; wording of the full line from vLLM vllm/v1/core/kv_cache_utils.py.
    assert_eq!(
        class_of(
            "ValueError: No available memory for the cache blocks. Try increasing gpu_memory_utilization when initializing the engine."
        ),
        Some(C::KvCacheBudget)
    );
    // vLLM vllm/v1/worker/gpu_worker.py: `Available KV cache memory: -0.3 GiB` precedes the check.
    assert_eq!(
        class_of("INFO [gpu_worker.py:298] Available KV cache memory: -0.66 GiB"),
        Some(C::KvCacheBudget)
    );
    // A positive budget is not a failure.
    assert_eq!(class_of("INFO Available KV cache memory: 13.33 GiB"), None);
    // vLLM vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`.
    assert_eq!(
        class_of(
            "ValueError: To serve at least one request with the models's max seq len (32768), (4.0 GiB KV cache is needed, which is larger than the available KV cache memory (1.2 GiB). Based on the available memory, the estimated maximum model length is 9800."
        ),
        Some(C::KvCacheBudget)
    );
}

#[test]
fn unsupported_architecture_is_root_and_missing_module_secondary() {
    // docs/field-cases.md B2: pydantic ValidationError "not supported for now", with a secondary
    // `ModuleNotFoundError: mamba_ssm` in the same image; pydantic wraps the error of vLLM's
    // ModelConfig validator this way. The module error comes first in the log, and is still
    // not the root cause.
    let log = "WARNING ModuleNotFoundError: No module named 'mamba_ssm'\n\
               pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n\
               Value error, Model architectures ['NemotronH_Nano_Omni_Reasoning_V3'] are not supported for now. Supported architectures: dict_keys([...])";
    let c = root_cause(&lines(log)).unwrap();
    assert_eq!(c.class, C::UnsupportedArchitecture);
    assert_eq!(c.line_index, 2);
    // Alone, the missing module is the cause.
    assert_eq!(
        class_of("ModuleNotFoundError: No module named 'mamba_ssm'"),
        Some(C::MissingModule)
    );
    // vLLM registry.py _raise_for_unsupported, when the model class did not import.
    assert_eq!(
        class_of("ValueError: Model architectures ['Foo'] failed to be inspected."),
        Some(C::UnsupportedArchitecture)
    );
    // llama.cpp b11434 src/llama-model.cpp:373.
    assert_eq!(
        class_of(
            "E llama_model_load: error loading model: error loading model architecture: unknown model architecture: 'nemotron_h_omni'"
        ),
        Some(C::UnsupportedArchitecture)
    );
}

#[test]
fn unknown_model_type_field_case_b5_deepseek_v4() {
    // docs/field-cases.md B5 (NGC 26.04 transformers does not recognize deepseek_v4); message from
    // transformers configuration_auto.py (`AutoConfig.from_pretrained`), with and without
    // the backticks.
    assert_eq!(
        class_of(
            "ValueError: The checkpoint you are trying to load has model type `deepseek_v4` but Transformers does not recognize this architecture."
        ),
        Some(C::UnknownModelType)
    );
    assert_eq!(
        class_of(
            "The checkpoint you are trying to load has model type deepseek_v4 but Transformers does not recognize this architecture"
        ),
        Some(C::UnknownModelType)
    );
}

#[test]
fn quantization_mismatch_field_case_f7_thirty_five_restarts() {
    // docs/field-cases.md F7, quoted (wrapped there over two lines; one line in the engine's log).
    assert_eq!(
        class_of(
            "TypeError: CompressedTensorsConfig.__init__() missing 3 required positional arguments: 'target_scheme_map', 'ignore', 'quant_format'"
        ),
        Some(C::QuantizationMismatch)
    );
    // vLLM compressed_tensors.py: a compressed-tensors config no scheme of this build fits.
    assert_eq!(
        class_of("NotImplementedError: No compressed-tensors compatible scheme was found."),
        Some(C::QuantizationMismatch)
    );
}

#[test]
fn the_wrapper_is_never_the_root_cause() {
    // vLLM v1/engine/utils.py `wait_for_engine_startup`: the real cause sits above a ~40-line
    // traceback and the `Engine core initialization failed` wrapper.
    let mut log = vec!["(EngineCore_DP0 pid=311) ERROR torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.17 GiB.".to_string()];
    for i in 0..40 {
        log.push(format!(
            "  File \"/usr/lib/python3/vllm/v1/engine/core.py\", line {i}, in run"
        ));
    }
    log.push("RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}".into());
    let c = root_cause(&log).unwrap();
    assert_eq!(c.class, C::CudaOom);
    assert_eq!(c.line_index, 0);
    // The wrapper alone classifies as nothing: the watchdog then says `exited`.
    assert_eq!(
        class_of(
            "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
        ),
        None
    );
}

#[test]
fn cuda_oom_llama_cpp() {
    // llama.cpp b11434 ggml/src/ggml-cuda/ggml-cuda.cu:888 format string.
    assert_eq!(
        class_of(
            "E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory"
        ),
        Some(C::CudaOom)
    );
}

#[test]
fn port_in_use_lines() {
    // Measured here: llama.cpp b11434 with the port held by another listener.
    assert_eq!(
        class_of(
            "0.00.003.770 E srv         start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 18557"
        ),
        Some(C::PortInUse)
    );
    // uvicorn (vLLM's API server) bind error.
    assert_eq!(
        class_of(
            "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address already in use"
        ),
        Some(C::PortInUse)
    );
}

#[test]
fn an_engine_that_rejects_its_command_line_is_bad_argument() {
    // Measured here: llama.cpp b11434 `llama-server -m … --cache-type-k q9_9`, its whole
    // output (exit code 1). The error comes first; the flag's usage and the `-h` hint follow,
    // and the last line is not the cause.
    let log = "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9\n\
               \n\
               usage:\n\
               -ctk,  --cache-type-k TYPE              KV cache data type for K\n\
               \x20                                       allowed values: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1\n\
               \x20                                       (default: f16)\n\
               \x20                                       (env: LLAMA_ARG_CACHE_TYPE_K)\n\
               \n\
               \n\
               to show complete usage, run with -h";
    let c = root_cause(&lines(log)).unwrap();
    assert_eq!(c.class, C::BadArgument);
    assert_eq!(c.line_index, 0);
    assert_eq!(
        c.line,
        "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9"
    );
    // Measured here: an unknown flag, and a flag given no value.
    assert_eq!(
        class_of("error: invalid argument: --no-such-flag"),
        Some(C::BadArgument)
    );
    assert_eq!(
        class_of("error while handling argument \"--port\": expected value for argument"),
        Some(C::BadArgument)
    );
    // argparse (vLLM, SGLang): the usage comes first, then `PROG: error: …` (CPython
    // Lib/argparse.py ArgumentParser.error, prog `vllm serve`).
    let log = "INFO 08-15 10:00:00 __init__.py:190] Automatically detected platform cuda.\n\
               usage: vllm serve <model_tag> [options]\n\
               vllm serve: error: argument --load-format: invalid choice: 'sharded_state' (choose from 'auto', 'pt', 'safetensors', 'npcache', 'dummy', 'tensorizer', 'bitsandbytes')";
    let c = root_cause(&lines(log)).unwrap();
    assert_eq!(c.class, C::BadArgument);
    assert_eq!(c.line_index, 2);
    // Lines that only look alike are not a rejected command line: a CUDA error string and a
    // Python TypeError.
    assert_eq!(class_of("RuntimeError: CUDA error: invalid argument"), None);
    assert_eq!(
        class_of("TypeError: argument of type 'NoneType' is not iterable"),
        None
    );
}

#[test]
fn a_clean_llama_cpp_start_has_no_cause() {
    // Measured here: llama.cpp b11434 start-up (default verbosity).
    let log = "0.00.003.594 I srv  llama_server: initializing ...\n\
               0.00.009.932 I srv    load_model: loading model '/models/model.gguf'\n\
               0.00.828.319 W load: control-looking token:    212 '</s>' was not control-type; this is probably a bug in the model. its type will be overridden\n\
               0.01.616.771 I srv  llama_server: model loaded\n\
               0.01.616.916 I srv  llama_server: listening on http://0.0.0.0:8080";
    assert_eq!(class_of(log), None);
}

#[test]
fn vllm_shard_progress_in_s_per_it_projects_the_field_case_b5_load() {
    // docs/field-cases.md B5: ~80 s per shard × 46 shards, aborted at 18/46 after ~36 min. The bar format
    // is vLLM's `_BAR_FORMAT` (vllm/model_executor/model_loader/weight_utils.py).
    let l =
        "Loading safetensors checkpoint shards:  39% Completed | 18/46 [24:00<37:20, 80.00s/it]";
    let r = progress::parse(l).unwrap();
    assert_eq!(r.source, "vllm-safetensors");
    assert_eq!((r.done, r.total), (Some(18), Some(46)));
    assert_eq!(r.seconds_per_item, Some(80.0));
    let rec = r.to_record(Some(600.0));
    assert_eq!(
        rec.projected_total_s,
        Some(24.0 * 60.0 + 37.0 * 60.0 + 20.0)
    );
    assert!(rec.over_budget);
}

#[test]
fn vllm_shard_progress_in_it_per_s_and_the_first_frame() {
    let r = progress::parse("(EngineCore_DP0 pid=88) Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:01<00:01,  1.60it/s]").unwrap();
    assert_eq!(r.seconds_per_item, Some(1.0 / 1.6));
    assert!(!r.to_record(Some(600.0)).over_budget);
    // tqdm's first frame: unknown remaining and rate.
    let r = progress::parse(
        "Loading safetensors checkpoint shards:   0% Completed | 0/46 [00:00<?, ?it/s]",
    )
    .unwrap();
    assert_eq!(r.done, Some(0));
    assert_eq!(r.projected_total_s(), None);
    // A `\r`-redrawn frame holding several bars: the last one wins.
    let r = progress::parse("Loading pt checkpoint shards:  25% Completed | 1/4 [00:10<00:30, 10.00s/it]\rLoading pt checkpoint shards:  50% Completed | 2/4 [00:20<00:20, 10.00s/it]").unwrap();
    assert_eq!((r.source, r.done), ("vllm-pt", Some(2)));
}

#[test]
fn llama_cpp_load_tensors_lines() {
    // Measured here at -lv 4: llama.cpp b11434.
    let r = progress::parse("0.00.997.651 I load_tensors: loading model tensors, this can take a while... (load_mode = mmap)").unwrap();
    assert_eq!(r.source, "llama.cpp");
    // llama.cpp src/llama-model.cpp load_tensors (`offloaded %d/%d layers to GPU`).
    let r = progress::parse("load_tensors: offloaded 15/49 layers to GPU").unwrap();
    assert_eq!((r.done, r.total), (Some(15), Some(49)));
}

#[test]
fn docs_failure_classes_md_is_the_table() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/failure-classes.md"
    ))
    .unwrap();
    let table = bakeoff_seats::classify::markdown_table();
    assert!(
        doc.contains(&table),
        "docs/failure-classes.md is out of step with classify::TABLE; paste this table:\n{table}"
    );
}

#[test]
fn a_message_wrapped_across_two_lines_is_still_its_cause() {
    // Terminals and pasted logs hard-wrap long messages mid-word with no prefix on the
    // continuation (`disable_sliding_wind` / `ow=False`), or at a space.
    let log = "(EngineCore_DP0 pid=9) ERROR 10-25 13:08:43 [core.py:708] ValueError: To serve at least one request with the models's max seq len (131072), (4.54 GiB KV cach\n\
               e is needed, which is larger than the available KV cache memory (1.71 GiB).";
    let c = root_cause(&lines(log)).unwrap();
    assert_eq!(c.class, C::KvCacheBudget);
    assert_eq!(c.line_index, 0);
    let log = "RuntimeError: Not enough memory. Please try to increase\n--mem-fraction-static.";
    assert_eq!(class_of(log), Some(C::KvCacheBudget));
    // A signature wholly inside the second line is that line's, found on its own turn.
    let c = root_cause(&lines(
        "INFO loading\nRuntimeError: No CUDA GPUs are available",
    ))
    .unwrap();
    assert_eq!((c.class, c.line_index), (C::NoGpu, 1));
}

#[test]
fn a_kv_cache_allocation_that_runs_out_of_gpu_memory_is_the_kv_cache() {
    // Older llama.cpp (llama.cpp llama_new_context_with_model): the cudaMalloc failure is the KV
    // cache's allocation.
    let log = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out of memory\n\
               llama_kv_cache_init: failed to allocate buffer for kv cache\n\
               llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache";
    assert_eq!(class_of(log), Some(C::KvCacheBudget));
}

#[test]
fn harmless_warnings_and_hints_are_never_the_cause() {
    for line in [
        // vLLM: an optional extension that did not import (CPU, ROCm, Ascend builds).
        "WARNING 02-19 16:02:59 _custom_ops.py:19] Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")",
        "WARNING 08-27 13:59:59 _custom_ops.py:15] Failed to import from vllm._C with ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')",
        // vLLM INFO hint (vLLM 0.4.2 worker/model_runner.py capture_model): "out of memory"
        // alone is not an OOM.
        "INFO 03-01 10:00:00 llm_engine.py:100] If you are running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager mode.",
        "(EngineCore_DP0 pid=9) ERROR 10-25 13:08:43 [core.py:708] EngineCore failed to start.",
    ] {
        assert_eq!(class_of(line), None, "{line}");
    }
}

#[test]
fn a_bind_failure_is_port_in_use_only_for_the_api_port() {
    use bakeoff_seats::classify::root_cause_for;
    // NCCL RAS's own socket (NCCL misc/socket.cc): not the API port.
    let nccl = "gpu-box:12:34 [0] misc/socket.cc:409 NCCL WARN Call to bind failed: Address already in use";
    assert_eq!(root_cause_for(&lines(nccl), Some(8000)), None);
    // torch c10d's store on MASTER_PORT (a vLLM worker's log): not the API port.
    let c10d = "ERROR 11-28 11:22:27 [multiproc_executor.py:743] torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 56065, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use";
    assert_eq!(root_cause_for(&lines(c10d), Some(8000)), None);
    // vLLM's get_open_port probe for an internal port (vLLM 0.5.4 vllm/utils.py).
    let probe = "  File \"/usr/local/lib/python3.10/dist-packages/vllm/utils.py\", line 572, in get_open_port\n    s.bind((\"\", 0))\nOSError: [Errno 98] Address already in use";
    assert_eq!(root_cause_for(&lines(probe), Some(8000)), None);
    // vLLM's API server binding its own socket (vLLM 0.19.1 api_server.py create_server_socket):
    // the seat's port.
    let api = "  File \"/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py\", line 550, in setup_server\n    sock = create_server_socket(sock_addr)\n  File \"/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py\", line 500, in create_server_socket\n    sock.bind(addr)\nOSError: [Errno 98] Address already in use";
    let c = root_cause_for(&lines(api), Some(8000)).unwrap();
    assert_eq!((c.class, c.line_index), (C::PortInUse, 4));
    // A generic line that names the seat's own port is the seat's port.
    assert_eq!(
        root_cause_for(
            &lines("OSError: [Errno 98] Address already in use: ('0.0.0.0', 8000)"),
            Some(8000)
        )
        .map(|c| c.class),
        Some(C::PortInUse)
    );
    assert_eq!(
        root_cause_for(
            &lines("OSError: [Errno 98] Address already in use: ('0.0.0.0', 18000)"),
            Some(8000)
        ),
        None
    );
}

/// errno 99 is a host address that is not on this machine, never a port conflict, in every
/// wording: uvicorn's (CPython asyncio create_server's), Go's, and CPython's bare `OSError` under vLLM's
/// create_server_socket.
#[test]
fn cannot_assign_requested_address_is_not_port_in_use() {
    use bakeoff_seats::classify::root_cause_for;
    let uvicorn = "INFO:     Application startup complete.\nERROR:    [Errno 99] error while attempting to bind on address ('::1', 8000, 0, 0): cannot assign requested address\nINFO:     Waiting for application shutdown.";
    let c = root_cause_for(&lines(uvicorn), Some(8000)).unwrap();
    assert_eq!((c.class, c.line_index), (C::AddressUnavailable, 1));
    assert!(
        c.remediation.contains("--host 127.0.0.1"),
        "{}",
        c.remediation
    );
    let vllm = "  File \"/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py\", line 500, in create_server_socket\n    sock.bind(addr)\nOSError: [Errno 99] Cannot assign requested address";
    assert_eq!(
        root_cause_for(&lines(vllm), Some(8000)).map(|c| c.class),
        Some(C::AddressUnavailable)
    );
    // An outgoing connection out of local ports (NCCL) says the same: not the API server's.
    let nccl = "gpu-box:12:34 [0] misc/socket.cc:480 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43525> failed : Cannot assign requested address";
    assert_eq!(root_cause_for(&lines(nccl), Some(8000)), None);
}

/// An older transformers raises a bare `KeyError: '<model_type>'` from its CONFIG_MAPPING
/// (transformers 4.51 in vLLM 0.8.5's image; the frames of configuration_auto.py
/// AutoConfig.from_pretrained and _LazyConfigMapping.__getitem__).
/// It is the unknown model type with its frames near it, and nothing without them.
#[test]
fn a_config_mapping_key_error_is_an_unknown_model_type() {
    let tb = r#"Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/vllm/transformers_utils/config.py", line 245, in get_config
    config = AutoConfig.from_pretrained(
  File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 1360, in from_pretrained
    config_class = CONFIG_MAPPING[config_dict["model_type"]]
                   ~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/usr/local/lib/python3.12/dist-packages/transformers/models/auto/configuration_auto.py", line 1048, in __getitem__
    raise KeyError(key)
KeyError: 'qwen2_5_omni'"#;
    let c = root_cause(&lines(tb)).unwrap();
    assert_eq!((c.class, c.line_index), (C::UnknownModelType, 8));
    // The same log pasted newest line first.
    let rev: Vec<String> = lines(tb).into_iter().rev().collect();
    let c = root_cause(&rev).unwrap();
    assert_eq!((c.class, c.line_index), (C::UnknownModelType, 0));
    // A KeyError of someone else's is no cause.
    assert_eq!(
        class_of(
            "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    x = d['in_dim']\nKeyError: 'in_dim'"
        ),
        None
    );
}

/// A log pasted newest line first is read in time order: the cause is the first line in time,
/// not the top one. The log below is vLLM's KV-cache failure of field case B4 (in the wording
/// of vLLM 0.19.1 kv_cache_utils.py _check_enough_kv_cache_memory) with the disk-full distractor a shutdown logs after it; reversed, the distractor
/// stands on top. Both the timestamps and the traceback's frames say which way it runs.
#[test]
fn a_log_pasted_newest_first_is_classified_in_time_order() {
    let forward = r#"INFO 07-01 10:00:00 [api_server.py:1000] vLLM API server version 0.19.1
INFO 07-01 10:00:05 [gpu_worker.py:300] Available KV cache memory: 1.71 GiB
ERROR 07-01 10:00:06 [core.py:700] EngineCore failed to start.
ERROR 07-01 10:00:06 [core.py:700] Traceback (most recent call last):
ERROR 07-01 10:00:06 [core.py:700]   File "/usr/local/lib/python3.12/dist-packages/vllm/v1/core/kv_cache_utils.py", line 700, in _check_enough_kv_cache_memory
ERROR 07-01 10:00:06 [core.py:700]     raise ValueError(
ERROR 07-01 10:00:06 [core.py:700] ValueError: To serve at least one request with the models's max seq len (131072), (4.54 GiB KV cache is needed, which is larger than the available KV cache memory (1.71 GiB).
WARNING 07-01 10:00:07 [logger.py:50] could not write the usage stats: [Errno 28] No space left on device"#;
    let c = root_cause(&lines(forward)).unwrap();
    assert_eq!((c.class, c.line_index), (C::KvCacheBudget, 6));
    let rev: Vec<String> = lines(forward).into_iter().rev().collect();
    assert!(bakeoff_seats::classify::newest_first(&rev));
    assert!(!bakeoff_seats::classify::newest_first(&lines(forward)));
    let c = root_cause(&rev).unwrap();
    assert_eq!((c.class, c.line_index), (C::KvCacheBudget, 1), "{}", c.line);
    // Without timestamps the traceback's shape alone says it.
    let bare: Vec<String> = lines(forward)
        .iter()
        .map(|l| {
            l.split_once("] ")
                .map_or(l.as_str(), |(_, r)| r)
                .to_string()
        })
        .rev()
        .collect();
    assert_eq!(root_cause(&bare).map(|c| c.class), Some(C::KvCacheBudget));
}

#[test]
fn journald_and_kernel_wordings_of_an_oom_kill_are_host_oom() {
    // An engine run as a systemd unit, read through its journal: vLLM's last lines, then
    // systemd's (src/core/unit.c unit_check_oom, v243+; src/core/service.c service_enter_dead
    // with the service result `oom-kill`), as journalctl prints them.
    let log = "Dec 07 05:45:01 gpu1 vllm[2201]: INFO 12-07 05:45:01 [default_loader.py:262] Loading weights took 41.20 seconds\n\
               Dec 07 05:45:05 gpu1 systemd[1]: vllm.service: A process of this unit has been killed by the OOM killer.\n\
               Dec 07 05:45:05 gpu1 systemd[1]: vllm.service: Main process exited, code=killed, status=9/KILL\n\
               Dec 07 05:45:05 gpu1 systemd[1]: vllm.service: Failed with result 'oom-kill'.\n\
               Dec 07 05:45:05 gpu1 systemd[1]: vllm.service: Consumed 1min 2.310s CPU time, 31.2G memory peak, 0B memory swap peak.";
    let c = root_cause(&lines(log)).unwrap();
    assert_eq!(c.class, C::HostOom);
    assert_eq!(c.line_index, 1);
    // Each wording alone (a journal read from the end, `journalctl -u … -n 2`).
    assert_eq!(
        class_of("vllm.service: Failed with result 'oom-kill'."),
        Some(C::HostOom)
    );
    // systemd-run --wait (src/run/run.c) around a process seat.
    assert_eq!(class_of("Finished with result: oom-kill"), Some(C::HostOom));
    // A SIGKILL alone says nothing of who sent it: not host-oom (the watchdog's `exited`, with
    // the signal named).
    assert_eq!(
        class_of("vllm.service: Main process exited, code=killed, status=9/KILL"),
        None
    );
    assert_eq!(class_of("vllm.service: Failed with result 'signal'."), None);
    // The kernel's lines (mm/oom_kill.c), measured here for a container over its 16 MiB limit
    // (Linux 6.18, Docker 20.10.24, cgroup v1; docker_backend.rs produces them for real).
    let kernel = "[  183.859048] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=6c2133,mems_allowed=0,oom_memcg=/docker/6c2133,task_memcg=/docker/6c2133,task=sh,pid=8610,uid=0\n\
                  [  183.859076] Memory cgroup out of memory: Killed process 8610 (sh) total-vm:31276kB, anon-rss:15988kB, file-rss:64kB, shmem-rss:0kB, UID:0 pgtables:84kB oom_score_adj:0";
    assert_eq!(class_of(kernel), Some(C::HostOom));
    assert_eq!(
        class_of(
            "kernel: Out of memory: Killed process 6439 (python3) total-vm:127921280kB, anon-rss:60906104kB"
        ),
        Some(C::HostOom)
    );
    // systemd-oomd (src/oom/oomd-manager.c, v248+).
    assert_eq!(
        class_of(
            "systemd-oomd[812]: Killed /system.slice/vllm.service due to memory pressure for /system.slice being 71.20% > 50.00% for > 20s with reclaim activity"
        ),
        Some(C::HostOom)
    );
    // A container runtime's record printed into the log: `docker inspect` and `kubectl
    // describe pod`.
    assert_eq!(
        class_of(r#"{"Status":"exited","Running":false,"OOMKilled":true,"ExitCode":137}"#),
        Some(C::HostOom)
    );
    assert_eq!(class_of("      Reason:       OOMKilled"), Some(C::HostOom));
    assert_eq!(class_of(r#"{"OOMKilled":false,"ExitCode":137}"#), None);
    // A CUDA OOM stays a CUDA OOM.
    assert_eq!(
        class_of("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 336.00 MiB."),
        Some(C::CudaOom)
    );
}
