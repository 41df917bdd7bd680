//! Every log row of the failure table against the real wordings the engines print
//! (docs/failure-classes.md "The table"), each with its source: the table's coverage, wording by
//! wording.

use bakeoff_seats::classify::root_cause;

use crate::log_signatures::{class_of, lines};

/// Real wordings of every log row, each with its source (docs/failure-classes.md). The research
/// behind them read the engines' sources (vLLM 0.19.1, SGLang 0.5.23 and llama.cpp 0c1e570 from
/// their PyPI packages; older vLLM 0.4.2 and 0.5.4 wheels; TGI, torch, NCCL, huggingface_hub
/// and transformers sources); a line built from a format string fills its fields as that source
/// does, and a wording with no source at hand is a field case (docs/field-cases.md W).
const WORDINGS: &[(&str, &str, &str)] = &[
    // cuda-oom
    (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.74 GiB. GPU 0 has a total capacity of 15.48 GiB of which 953.94 MiB is free.",
        "cuda-oom",
        "torch >= 2.5 c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc",
    ),
    (
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB total capacity; 22.88 GiB already allocated)",
        "cuda-oom",
        "torch c10/cuda/CUDACachingAllocator.cpp, its torch <= 2.0 wording",
    ),
    (
        "RuntimeError: CUDA error: out of memory",
        "cuda-oom",
        "torch c10/cuda/CUDAException.cpp c10_cuda_check_implementation",
    ),
    (
        "RuntimeError: CUDA driver error: out of memory",
        "cuda-oom",
        "torch c10/cuda/driver_api.h C10_CUDA_DRIVER_CHECK",
    ),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "cuda-oom",
        "torch TORCH_CUDABLAS_CHECK",
    ),
    (
        "gpu-box:1234:1290 [0] NCCL WARN Cuda failure 'out of memory'",
        "cuda-oom",
        "NCCL src/include/checks.h CUDACHECK",
    ),
    (
        "ERROR 07-01 10:00:00 [gpu_model_runner.py:4809] Failed to load model - not enough GPU memory. Try lowering --gpu-memory-utilization to free memory for weights, increasing --tensor-parallel-size, or using --quantization.",
        "cuda-oom",
        "vLLM 0.19.1 gpu_model_runner.py load_model",
    ),
    (
        "RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`",
        "cuda-oom",
        "TGI 3.3.7 flash_causal_lm.py FlashCausalLM.warmup",
    ),
    (
        "Error: Warmup(Generation(\"Not enough memory to handle 16000 total tokens with 4096 prefill tokens. You need to decrease `--max-batch-total-tokens` or `--max-batch-prefill-tokens`\"))",
        "cuda-oom",
        "TGI 0.9.0 flash_causal_lm.py FlashCausalLM.warmup",
    ),
    (
        "ValueError: Free memory on device (59.32/79.15 GiB) on startup is less than desired GPU memory utilization (0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        "cuda-oom",
        "vLLM 0.9 v1/worker/gpu_worker.py init_device (0.19.1: v1/worker/utils.py request_memory)",
    ),
    (
        "E ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512",
        "cuda-oom",
        "llama.cpp ggml/src/ggml-alloc.c ggml_gallocr_reserve_n_impl (under ggml_gallocr_reserve_n)",
    ),
    (
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
        "cuda-oom",
        "llama.cpp src/llama-model.cpp load_tensors",
    ),
    // cuda-oom, other accelerators' torch builds and torch's per-process fraction
    (
        "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.66 GiB. GPU 0 has a total capacity of 5.65 GiB of which 5.65 GiB is free. Of the allocated memory 195.50 KiB is allocated by PyTorch, and 1.81 MiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
        "cuda-oom",
        "torch 2.12 c10/xpu/XPUCachingAllocator.cpp",
    ),
    (
        "RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; 15.56 GiB total capacity; 0 bytes already allocated; 0 bytes reserved in total by PyTorch)",
        "cuda-oom",
        "IPEX, the older torch wording with XPU: docs/field-cases.md W1",
    ),
    (
        "(NPURayWorkerWrapper pid=45464) ERROR 06-09 06:57:48 worker_base.py:581] RuntimeError: NPU out of memory. Tried to allocate 30.00 MiB (NPU 3; 60.96 GiB total capacity; 60.34 GiB already allocated; 60.34 GiB current active; 14.24 MiB free; 60.60 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
        "cuda-oom",
        "torch_npu torch_npu/csrc/core/npu/NPUCachingAllocator.cpp, under vLLM-Ascend",
    ),
    (
        "RuntimeError: MPS backend out of memory (MPS allocated: 19.13 GiB, other allocations: 6.17 GiB, max allowed: 36.27 GiB). Tried to allocate 12.06 GiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
        "cuda-oom",
        "torch aten/src/ATen/mps/MPSAllocator.mm",
    ),
    (
        "2024-06-01T10:00:00.000000Z ERROR shard-manager: text_generation_launcher: Shard complete standard error output: torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)",
        "cuda-oom",
        "torch c10/cuda/CUDACachingAllocator.cpp under TGI --cuda-memory-fraction",
    ),
    (
        "RuntimeError: Allocation on device 0 would exceed allowed memory. (out of memory)",
        "cuda-oom",
        "torch CUDACachingAllocator.cpp (set_per_process_memory_fraction)",
    ),
    // kv-cache-budget
    (
        "ValueError: To serve at least one request with the models's max seq len (131072), (4.54 GiB KV cache is needed, which is larger than the available KV cache memory (1.71 GiB). Based on the available memory, the estimated maximum model length is 49000.",
        "kv-cache-budget",
        "vLLM 0.19.1 kv_cache_utils.py _check_enough_kv_cache_memory",
    ),
    (
        "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token. Try increasing `gpu_memory_utilization`.",
        "kv-cache-budget",
        "vLLM 0.19.1 kv_cache_utils.py _auto_fit_max_model_len",
    ),
    (
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (23840). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        "kv-cache-budget",
        "vLLM V0 worker.py raise_if_cache_size_invalid",
    ),
    (
        "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
        "kv-cache-budget",
        "SGLang 0.5.23 pool_configurator.py",
    ),
    (
        "[2025-07-02 07:41:59 DP0 TP0] max_total_tokens=131072 is larger than the profiled value -561981. Use the profiled value instead.",
        "kv-cache-budget",
        "SGLang 0.5.23 kv_cache_configurator.py (a negative profiled value)",
    ),
    (
        "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.8. Raise --mem-fraction-static above 0.912 (minimum viable = 1 - available/pre = 0.9120).",
        "kv-cache-budget",
        "SGLang 0.5.23 kv_cache_configurator.py",
    ),
    (
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        "kv-cache-budget",
        "llama.cpp src/llama-context.cpp llama_init_from_model",
    ),
    (
        "llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache",
        "kv-cache-budget",
        "older llama.cpp llama.cpp llama_new_context_with_model",
    ),
    // quantization-mismatch
    (
        "ValueError: Quantization method specified in the model config (fp8) does not match the quantization method specified in the `quantization` argument (gguf).",
        "quantization-mismatch",
        "vLLM 0.19.1 config/model.py _verify_quantization",
    ),
    (
        "ValueError: Quantization method specified in the model config (gptq) does not match the quantization method specified in the quantization argument (gptq_marlin).",
        "quantization-mismatch",
        "an older vLLM, without the backticks: docs/field-cases.md W3",
    ),
    (
        "ValueError: Unknown quantization method: awq_v9. Must be one of ['aqlm', 'awq', 'fp8'].",
        "quantization-mismatch",
        "vLLM 0.19.1 config/model.py _verify_quantization",
    ),
    (
        "ValueError: Cannot find the config file for gptq",
        "quantization-mismatch",
        "vLLM 0.19.1 weight_utils.py get_quant_config",
    ),
    (
        "NotImplementedError: No compressed-tensors compatible scheme was found.",
        "quantization-mismatch",
        "vLLM compressed_tensors.py",
    ),
    // context-too-long
    (
        "ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len (None=8192 in model's config.json). This may lead to incorrect model outputs or CUDA errors.",
        "context-too-long",
        "vLLM 0.19.1 config/model.py _get_and_verify_max_len",
    ),
    // gpu-unsupported
    (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-32GB GPU has compute capability 7.0. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.",
        "gpu-unsupported",
        "vLLM 0.19.1 platforms/cuda.py check_if_supports_dtype",
    ),
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "gpu-unsupported",
        "torch c10/cuda/CUDAException.cpp (cudaGetErrorString)",
    ),
    (
        "RuntimeError: GPUs with compute capability below 7.0 are not supported.",
        "gpu-unsupported",
        "a vLLM source build on a pre-Volta GPU: docs/field-cases.md W2",
    ),
    (
        "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 80.",
        "gpu-unsupported",
        "vLLM 0.19.1 config/vllm.py _get_quantization_config",
    ),
    (
        "RuntimeError: ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')",
        "gpu-unsupported",
        "vLLM compressed_tensors.py _check_scheme_supported",
    ),
    // no-gpu
    (
        "RuntimeError: No CUDA GPUs are available",
        "no-gpu",
        "torch CUDAFunctions.cpp",
    ),
    (
        "RuntimeError: Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose logging to help debug the issue.",
        "no-gpu",
        "vLLM 0.19.1 config/device.py DeviceConfig.__post_init__",
    ),
    (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        "no-gpu",
        "torch CUDAFunctions.cpp device_count_impl",
    ),
    // model-file-missing
    (
        "gguf_init_from_file: failed to open GGUF file '/models/x.gguf' (No such file or directory)",
        "model-file-missing",
        "llama.cpp ggml/src/gguf.cpp; measured here",
    ),
    (
        "gguf_init_from_reader: failed to read magic",
        "model-file-missing",
        "llama.cpp ggml/src/gguf.cpp (an empty file)",
    ),
    (
        "ValueError: Invalid repository ID or local directory specified: '/models/nope'.",
        "model-file-missing",
        "vLLM 0.19.1 transformers_utils/config.py get_config",
    ),
    (
        "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/data/models/cache/qwen'. Use `repo_type` argument if needed.",
        "model-file-missing",
        "huggingface_hub 0.34.4 utils/_validators.py validate_repo_id",
    ),
    (
        "OSError: /models/qwen is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
        "model-file-missing",
        "transformers utils/hub.py cached_files",
    ),
    (
        "OSError: /models/qwen does not appear to have a file named config.json. Checkout 'https://huggingface.co//models/qwen/tree/None' for available files.",
        "model-file-missing",
        "transformers utils/hub.py",
    ),
    // model-access-denied
    (
        "OSError: You are trying to access a gated repo.",
        "model-access-denied",
        "transformers 4.51.3 utils/hub.py cached_files",
    ),
    (
        "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-3.2-1B-Instruct/resolve/main/config.json.",
        "model-access-denied",
        "huggingface_hub 0.34.4 utils/_http.py hf_raise_for_status",
    ),
    (
        "Access to model meta-llama/Llama-3.2-1B-Instruct is restricted. You must have access to it and be authenticated to access it. Please log in.",
        "model-access-denied",
        "the Hub's X-Error-Message, appended by huggingface_hub 0.34.4 utils/_http.py _format",
    ),
    // disk-full
    (
        "OSError: [Errno 28] No space left on device",
        "disk-full",
        "OS ENOSPC (CPython OSError, errno 28)",
    ),
    (
        "Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: \"No space left on device\" })",
        "disk-full",
        "safetensors",
    ),
    (
        "Error: write /root/.ollama/models/blobs/sha256-6a0746a1ec1a-partial: no space left on device",
        "disk-full",
        "Go syscall.ENOSPC text, lowercase (Ollama pull)",
    ),
    // unsupported-architecture, unknown-model-type
    (
        "ValueError: Model architectures ['DeepseekV4ForCausalLM'] are not supported for now. Supported architectures: dict_keys([...])",
        "unsupported-architecture",
        "vLLM registry.py _raise_for_unsupported",
    ),
    (
        "ValueError: Model architecture Phi3SmallForCausalLM was supported in vLLM until v0.10.2, and is not supported anymore.",
        "unsupported-architecture",
        "vLLM 0.19.1 registry.py",
    ),
    (
        "E llama_model_load: error loading model: unknown model architecture: ''",
        "unsupported-architecture",
        "llama.cpp b11434 src/llama-model.cpp:373",
    ),
    (
        "llama_model_load: error loading model: error loading model vocabulary: unknown pre-tokenizer type: 'qwen35'",
        "unsupported-architecture",
        "llama.cpp src/llama-vocab.cpp",
    ),
    (
        "ValueError: Unrecognized model in /models/x. Should have a `model_type` key in its config.json",
        "unknown-model-type",
        "transformers configuration_auto.py",
    ),
    // port-in-use (the API server's own bind lines)
    (
        "main: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080",
        "port-in-use",
        "llama.cpp b11434 tools/server/server-http.cpp:517",
    ),
    (
        "couldn't bind to server socket: hostname=127.0.0.1 port=8080",
        "port-in-use",
        "older llama.cpp examples/server/server.cpp (as llamafile ships it)",
    ),
    (
        "ERROR (uvicorn.error):  [Errno 98] error while attempting to bind on address ('0.0.0.0', 7878): address already in use",
        "port-in-use",
        "uvicorn 0.30.6 Server.startup over CPython 3.11 asyncio create_server",
    ),
    (
        "Error: listen tcp 127.0.0.1:11434: bind: address already in use",
        "port-in-use",
        "Go net.Listen (Ollama)",
    ),
    (
        "ERROR text_generation_router::server: router/src/server.rs:2322: Failed to bind to 0.0.0.0:80: Address already in use (os error 98)",
        "port-in-use",
        "TGI router/src/server.rs",
    ),
    // address-unavailable (errno 99: the host address is not on this machine)
    (
        "ERROR:    [Errno 99] error while attempting to bind on address ('::1', 8000, 0, 0): cannot assign requested address",
        "address-unavailable",
        "uvicorn 0.30.6 Server.startup over CPython 3.11 asyncio create_server",
    ),
    (
        "Error: listen tcp [::1]:11434: bind: cannot assign requested address",
        "address-unavailable",
        "Go net.Listen (Ollama)",
    ),
    // bad-argument (the engine rejected its command line)
    (
        "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9",
        "bad-argument",
        "measured here: llama.cpp b11434 llama-server --cache-type-k q9_9",
    ),
    (
        "error: invalid argument: --no-such-flag",
        "bad-argument",
        "measured here: llama.cpp b11434 llama-server --no-such-flag",
    ),
    (
        "error while handling environment variable \"LLAMA_ARG_CTX_SIZE\": stoi",
        "bad-argument",
        "measured here: llama.cpp b11434 llama-server with LLAMA_ARG_CTX_SIZE=abc",
    ),
    (
        "vllm serve: error: argument --load-format: invalid choice: 'sharded_state' (choose from 'auto', 'pt', 'safetensors', 'npcache', 'dummy', 'tensorizer', 'bitsandbytes')",
        "bad-argument",
        "CPython argparse ArgumentError (`invalid choice`), prog `vllm serve`",
    ),
    (
        "vllm serve: error: argument --quantization/-q: invalid choice: 'x' (choose from 'aqlm', 'awq', 'fp8', 'gguf')",
        "bad-argument",
        "CPython argparse ArgumentError over an option with a short alias (`--quantization/-q`)",
    ),
    (
        "vllm serve: error: argument --max-model-len: invalid human_readable_int_or_auto value: 'abc'",
        "bad-argument",
        "CPython argparse _get_value (`invalid %(type)s value: %r`), vLLM argparse_utils.py type",
    ),
    (
        "api_server.py: error: unrecognized arguments: --api-key token-temp",
        "bad-argument",
        "CPython argparse parse_args, prog `api_server.py`",
    ),
    (
        "vllm: error: unrecognized arguments: --config",
        "bad-argument",
        "CPython argparse parse_args, prog `vllm`",
    ),
    (
        "launch_server.py: error: unrecognized arguments: --enable-reasoning",
        "bad-argument",
        "CPython argparse parse_args, prog `launch_server.py`",
    ),
    (
        "error: unrecognized arguments: --served-model-name minimax-h3",
        "bad-argument",
        "CPython argparse, the SystemExit printed without the prog",
    ),
    (
        "vllm serve: error: the following arguments are required: model_tag",
        "bad-argument",
        "CPython argparse (`the following arguments are required`), prog `vllm serve`",
    ),
    // host-oom, in the host's words (the test in log_signatures.rs reads them in context)
    (
        "Dec 07 05:45:05 gpu1 systemd[1]: vllm.service: A process of this unit has been killed by the OOM killer.",
        "host-oom",
        "systemd src/core/unit.c unit_check_oom, as journalctl prints it",
    ),
    (
        "[  183.859201] Memory cgroup out of memory: Killed process 8610 (python3) total-vm:2317516kB, anon-rss:16040kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:120kB oom_score_adj:0",
        "host-oom",
        "Linux mm/oom_kill.c __oom_kill_process, as dmesg prints it",
    ),
    (
        "Dec 07 05:45:05 gpu1 systemd-oomd[612]: Killed /system.slice/vllm.service due to memory pressure for /system.slice being 81.19% > 80.00% for > 20s with reclaim activity",
        "host-oom",
        "systemd-oomd src/oom/oomd-manager.c",
    ),
    (
        "    Reason:       OOMKilled",
        "host-oom",
        "kubectl describe pod, a container's last state",
    ),
    // missing-module (secondary)
    (
        "(VllmWorkerProcess pid=4575) ERROR 08-23 16:49:54 multiproc_worker_utils.py:226] Exception in worker VllmWorkerProcess while processing method load_model: No module named 'einops', Traceback (most recent call last):",
        "missing-module",
        "vLLM 0.5.4 executor/multiproc_worker_utils.py _run_worker_process",
    ),
    (
        "/usr/bin/python3: No module named vllm.entrypoints.openai.api_server",
        "missing-module",
        "CPython runpy (python -m, unquoted)",
    ),
    (
        "ImportError: This modeling file requires the following packages that were not found in your environment: einops. Run `pip install einops`",
        "missing-module",
        "transformers 4.51.3 dynamic_module_utils.py check_imports",
    ),
];

#[test]
fn every_wording_is_classified_as_its_source_says() {
    for (line, class, source) in WORDINGS {
        let got = class_of(line).map(|c| c.to_string());
        assert_eq!(got.as_deref(), Some(*class), "{source}: {line}");
    }
}

#[test]
fn every_log_row_of_the_table_has_a_real_wording() {
    use bakeoff_seats::classify::{SignatureKind, TABLE};
    for row in TABLE {
        let SignatureKind::Log(_) = row.signature else {
            continue;
        };
        // The generic bind rows need their API-server context and the bare KeyError its
        // CONFIG_MAPPING frames; they have their own tests (log_signatures.rs).
        if row.scope != bakeoff_seats::classify::Scope::Any {
            continue;
        }
        let covered = WORDINGS
            .iter()
            .chain(SEEDS)
            .filter_map(|(l, _, _)| root_cause(&lines(l)))
            .any(|c| c.source == row.source);
        assert!(
            covered,
            "no wording in the tests for the row sourced {:?}",
            row.source
        );
    }
}

/// Wordings the older tests above already cover, for the coverage check.
const SEEDS: &[(&str, &str, &str)] = &[
    (
        "E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory",
        "cuda-oom",
        "llama.cpp",
    ),
    (
        "ValueError: No available memory for the cache blocks.",
        "kv-cache-budget",
        "docs/field-cases.md B4",
    ),
    (
        "INFO Available KV cache memory: -0.66 GiB",
        "kv-cache-budget",
        "docs/field-cases.md B4",
    ),
    (
        "ValueError: The checkpoint you are trying to load has model type `deepseek_v4` but Transformers does not recognize this architecture.",
        "unknown-model-type",
        "docs/field-cases.md B5",
    ),
    (
        "TypeError: CompressedTensorsConfig.__init__() missing 6 required positional arguments",
        "quantization-mismatch",
        "docs/field-cases.md F7",
    ),
    (
        "Bind for 0.0.0.0:8181 failed: port is already allocated",
        "port-in-use",
        "Docker",
    ),
];
