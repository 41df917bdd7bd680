//! The rows of the one failure table (see the module above); their remediations, one text per
//! class whoever observed it, are in `remediation.rs`.

use super::remediation::*;
use super::row::{Row, Scope, SignatureKind, endpoint, log, watch};
use crate::FailureClass;

use FailureClass as C;

/// The table. Order matters only for display; matching takes the earliest line in the log.
/// Sources are engine and library source files (with the versions read), the project's field
/// cases (docs/field-cases.md) and lines measured here; the tests in
/// `crates/bakeoff-seats/tests/it/log_signatures.rs` replay each wording.
pub const TABLE: &[Row] = &[
    watch(
        C::InitWedge,
        "no log line for --silence-timeout while not ready, while the seat's port answered (a port that only refused is not-listening)",
        "docs/field-cases.md B1 (vLLM v0.19, Nemotron-3-Nano NVFP4: last line FLASHINFER backend selection, \
         44+ min of silence, /v1/models answering); vLLM vllm/entrypoints/serve/instrumentator/health.py \
         (`/health` 200 is an error-flag check: it does not detect a wedge)",
        R_WEDGE,
    ),
    watch(
        C::CrashLoop,
        "Docker inspect top-level RestartCount rising by --crash-loop-restarts within --crash-loop-window",
        "Docker Engine API container inspect, bollard 0.22 ContainerInspectResponse.restart_count \
         (RestartCount is top-level, not in State); docs/field-cases.md F1 (13 restarts on a \
         CUDA OOM) and F7 (35 restarts on a quantization mismatch)",
        R_CRASH,
    ),
    log(
        C::CudaOom,
        r"(torch\.(cuda\.)?OutOfMemoryError|(CUDA|HIP|XPU|NPU) out of memory|MPS backend out of memory)",
        "torch c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc (`CUDA out of \
         memory. Tried to allocate …`; torch >= 2.5 `torch.OutOfMemoryError`, older \
         `torch.cuda.OutOfMemoryError`); docs/field-cases.md F1. Other accelerators' torch builds \
         word it their way: torch 2.12 c10/xpu/XPUCachingAllocator.cpp (`XPU out of memory. Tried \
         to allocate …`; IPEX's older `RuntimeError: XPU out of memory`, docs/field-cases.md W1), \
         torch_npu torch_npu/csrc/core/npu/NPUCachingAllocator.cpp (`RuntimeError: NPU out of \
         memory. Tried to allocate … (NPU 0; …)`, under vLLM-Ascend and SGLang), torch \
         aten/src/ATen/mps/MPSAllocator.mm (`MPS backend out of memory (MPS allocated: …, other \
         allocations: …, max allowed: …)`)",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"Allocation on device \d* ?would exceed allowed memory",
        "torch c10/cuda/CUDACachingAllocator.cpp DeviceCachingAllocator::malloc under \
         set_per_process_memory_fraction (`Allocation on device 0 would exceed allowed memory. \
         (out of memory)` then `Currently allocated : …`, `Device limit : …`): TGI's \
         --cuda-memory-fraction sets that fraction, so its shards refuse an allocation this way",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"CUDA (driver )?error: out of memory",
        "torch c10/cuda/CUDAException.cpp c10_cuda_check_implementation (`CUDA error: ` + \
         cudaGetErrorString) and c10/cuda/driver_api.h C10_CUDA_DRIVER_CHECK (`CUDA driver error: \
         ` + cuGetErrorString): `RuntimeError: CUDA error: out of memory`",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"CUBLAS_STATUS_ALLOC_FAILED|NCCL WARN Cuda failure 'out of memory'",
        "torch aten/src/ATen/cuda/Exceptions.h TORCH_CUDABLAS_CHECK (`CUDA error: \
         CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)`); NCCL src/include/checks.h \
         CUDACHECK (`NCCL WARN Cuda failure 'out of memory'`)",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"Failed to load model - not enough GPU memory",
        "vLLM 0.19.1 vllm/v1/worker/gpu_model_runner.py GPUModelRunner.load_model (except \
         torch.cuda.OutOfMemoryError)",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"Not enough memory to handle (\d+ (prefill|total) tokens|`max_total_tokens=)",
        "TGI 3.3.7 server/text_generation_server/models/flash_causal_lm.py FlashCausalLM.warmup \
         (`Not enough memory to handle N prefill tokens. You need to decrease \
         `--max-batch-prefill-tokens``; TGI 0.9.0: `… N total tokens with M prefill tokens`); TGI \
         3.3.7 backends/v3/src/lib.rs V3Error::NotEnoughMemory (`Not enough memory to handle \
         `max_total_tokens=N``)",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"Free memory on device .{0,60}on startup is less than desired GPU memory utilization",
        "vLLM 0.19.1 vllm/v1/worker/utils.py request_memory (0.9.x: v1/worker/gpu_worker.py \
         init_device)",
        R_GPU_BUSY,
    ),
    log(
        C::CudaOom,
        r"cudaMalloc failed: out of memory",
        "llama.cpp b11434 ggml/src/ggml-cuda/ggml-cuda.cu:888 (`allocating %.2f MiB on device %d: \
         cudaMalloc failed: %s`)",
        R_CUDA,
    ),
    log(
        C::CudaOom,
        r"(failed|unable) to allocate (CUDA|ROCm|Vulkan|Metal)\d* buffer",
        "llama.cpp ggml/src/ggml-alloc.c ggml_gallocr_reserve_n and alloc_tensor_range (`failed to \
         allocate CUDA0 buffer of size N`), src/llama-model.cpp load_tensors (`unable to allocate \
         CUDA0 buffer`)",
        R_CUDA,
    ),
    log(
        C::KvCacheBudget,
        r"No available memory for the cache blocks",
        "vLLM 0.19.1 vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory (V0: \
         worker/worker.py raise_if_cache_size_invalid); docs/field-cases.md B4 (the Gemma-4 KV-cache OOM \
         ladder)",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"Available KV cache memory: -\d",
        "vLLM 0.19.1 vllm/v1/worker/gpu_worker.py determine_available_memory (`Available KV cache \
         memory: %s GiB`, negative when the weights leave nothing); docs/field-cases.md B4 (−0.66 … −3.21 GiB)",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"KV cache is needed, which is larger than the available|Cannot auto-fit max_model_len|is larger than the maximum number of tokens that can be stored in KV cache",
        "vLLM 0.19.1 vllm/v1/core/kv_cache_utils.py _check_enough_kv_cache_memory (`To serve at \
         least one request with the models's max seq len (N), (X GiB KV cache is needed, which is \
         larger than the available KV cache memory (Y GiB)`) and _auto_fit_max_model_len; V0 \
         `The model's max seq len (N) is larger than the maximum number of tokens that can be \
         stored in KV cache (M)`",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"Not enough memory\. Please try to increase --mem-fraction-static|larger than the profiled value -\d|Loaded weights leave no GPU memory for the KV cache|leaves no room for the full KV pool|state cache is too small to serve any requests",
        "SGLang 0.5.23 python/sglang/srt/model_executor/pool_configurator.py (`Not enough memory. \
         Please try to increase --mem-fraction-static.`, `SWA pool cap … leaves no room for the \
         full KV pool`), mem_cache/kv_cache_configurator.py (`Loaded weights leave no GPU memory \
         for the KV cache under --mem-fraction-static=…`, `max_total_tokens=N is larger than the \
         profiled value M`: negative M is a negative KV budget; hybrid `state cache is too small`)",
        R_KV,
    ),
    log(
        C::KvCacheBudget,
        r"failed to allocate buffer for (kv|rs) cache|llama_kv_cache_init\(\) failed",
        "llama.cpp b11434 src/llama-kv-cache.cpp:288 (`failed to allocate buffer for kv cache`), \
         src/llama-memory-recurrent.cpp:121; older builds' llama.cpp llama_new_context_with_model \
         (`llama_kv_cache_init() failed for self-attention cache`)",
        R_KV,
    ),
    log(
        C::UnsupportedArchitecture,
        r"(Model architectures \[.*\] (are not supported for now|failed to be inspected)|architecture .{0,80}not supported (for now|anymore|in-tree anymore)|Cannot find model module\.)",
        "vLLM 0.19.1 vllm/model_executor/models/registry.py _raise_for_unsupported (`Model \
         architectures [...] are not supported for now`, `… failed to be inspected`, `… is not \
         supported anymore`, `Cannot find model module.`); docs/field-cases.md B2 (pydantic ValidationError: \
         architecture \"not supported for now\")",
        R_ARCH,
    ),
    log(
        C::UnsupportedArchitecture,
        r"unknown model architecture: '|unknown pre-tokenizer type: '",
        "llama.cpp b11434 src/llama-model.cpp:373 (`unknown model architecture: 'x'`), \
         src/llama-vocab.cpp (`unknown pre-tokenizer type: 'x'`)",
        R_ARCH,
    ),
    log(
        C::UnknownModelType,
        r"has model type .{0,40} but Transformers does not recognize this architecture|Unrecognized model in .{0,200}Should have a .model_type. key",
        "transformers models/auto/configuration_auto.py AutoConfig.from_pretrained; \
         docs/field-cases.md B5 (deepseek_v4 on NGC 26.04)",
        R_TYPE,
    ),
    Row {
        class: C::UnknownModelType,
        signature: SignatureKind::Log(r"KeyError: '[\w.-]+'"),
        source: "transformers models/auto/configuration_auto.py AutoConfig.from_pretrained \
                 (`config_class = CONFIG_MAPPING[config_dict[\"model_type\"]]`) and \
                 _LazyConfigMapping.__getitem__ (`raise KeyError(key)`): an older transformers \
                 (4.51 in vLLM 0.8.5's image) raises a bare `KeyError: 'qwen2_5_omni'`. \
                 Claimed only with those frames near it: a KeyError elsewhere is someone else's",
        remediation: R_TYPE,
        secondary: false,
        scope: Scope::Near(&["CONFIG_MAPPING[", "configuration_auto.py"]),
    },
    log(
        C::QuantizationMismatch,
        r"CompressedTensorsConfig\.__init__\(\) missing \d+ required positional argument",
        "docs/field-cases.md F7 (hard-coded --quantization compressed-tensors over BF16 weights, 35 restarts)",
        R_QUANT,
    ),
    log(
        C::QuantizationMismatch,
        r"No compressed-tensors compatible scheme was found|does not match the quantization method specified in the .?quantization.? argument|Unknown quantization method: |Cannot find the config file for ",
        "vLLM 0.19.1 vllm/config/model.py ModelConfig._verify_quantization (`Quantization method \
         specified in the model config (fp8) does not match the quantization method specified in \
         the `quantization` argument (gguf).`, `Unknown quantization method: …`), \
         model_loader/weight_utils.py get_quant_config (`Cannot find the config file for …`), \
         compressed_tensors.py (`No compressed-tensors compatible scheme was found.`); vLLM \
         0.4.2 vllm/config.py ModelConfig._verify_quantization (the same check before the \
         config package)",
        R_QUANT,
    ),
    log(
        C::ContextTooLong,
        r"is greater than the derived max_model_len|context length .{0,40}exceeds the model's",
        "vLLM 0.19.1 vllm/config/model.py _get_and_verify_max_len (`User-specified max_model_len \
         (N) is greater than the derived max_model_len (…)`; vLLM 0.4.2 vllm/config.py \
         _get_and_verify_max_len, the same words)",
        R_CONTEXT,
    ),
    log(
        C::GpuUnsupported,
        r"Bfloat16 is only supported on GPUs with compute capability|no kernel image is available for execution on the device|GPUs with compute capability below \d|is not supported for the current GPU\. Minimum capability|Quantization scheme is not supported for|quantization is currently not supported in ",
        "vLLM 0.19.1 vllm/platforms/cuda.py check_if_supports_dtype (`Bfloat16 is only supported on \
         GPUs with compute capability of at least 8.0`), vllm/config/vllm.py \
         _get_quantization_config, compressed_tensors.py _check_scheme_supported, \
         platforms/interface.py verify_quantization; torch c10/cuda/CUDAException.cpp (`CUDA error: ` + cudaGetErrorString: `no kernel image is \
         available for execution on the device`); vLLM 0.4.2 vllm/worker/worker.py (the bfloat16 \
         check before the platforms package); a vLLM source build on a GPU below compute \
         capability 7.0 (docs/field-cases.md W2)",
        R_GPU_UNSUPPORTED,
    ),
    log(
        C::NoGpu,
        r"No CUDA GPUs are available|Found no NVIDIA driver on your system|CUDA driver initialization failed|Failed to infer device type|The NVIDIA driver on your system is too old",
        "torch c10/cuda/CUDAFunctions.cpp device_count_impl / device_count_ensure_non_zero; vLLM \
         0.19.1 vllm/config/device.py DeviceConfig.__post_init__ (`Failed to infer device type`)",
        R_NO_GPU,
    ),
    log(
        C::ModelFileMissing,
        r"failed to open GGUF file .{0,400}\(No such file or directory\)|gguf_init_from_\w+: failed to read magic",
        "llama.cpp b11434 ggml/src/gguf.cpp gguf_init_from_file (`failed to open GGUF file '%s' \
         (%s)`, strerror) and gguf_init_from_reader (`failed to read magic`: an empty file); \
         measured here (a seat given a missing path)",
        R_MODEL_MISSING,
    ),
    log(
        C::ModelFileMissing,
        r"Invalid repository ID or local directory specified|Could not detect config format for no config file found|Repo id must be in the form|is not a local folder and is not a valid model identifier|does not appear to have a file named",
        "vLLM 0.19.1 vllm/transformers_utils/config.py get_config; huggingface_hub \
         utils/_validators.py validate_repo_id (a local path that does not exist is read as a \
         repo id); transformers 4.51.3 utils/hub.py cached_files (`… is not a local folder and is \
         not a valid model identifier`, `… does not appear to have a file named …`)",
        R_MODEL_MISSING,
    ),
    log(
        C::ModelAccessDenied,
        r"Cannot access gated repo|You are trying to access a gated repo|Access to model .{0,200} is restricted|is gated\. You must be authenticated|401 Client Error|403 Client Error",
        "huggingface_hub 0.34.4 utils/_http.py hf_raise_for_status (`401 Client Error … Cannot \
         access gated repo for url …`), with the Hub's own X-Error-Message appended by _format \
         (`Access to model … is restricted. You must have access to it and be authenticated to \
         access it. Please log in.`); transformers 4.51.3 utils/hub.py cached_files (`You are \
         trying to access a gated repo.`)",
        R_ACCESS,
    ),
    log(
        C::DiskFull,
        r"(?i)no space left on device|StorageFull",
        "OS ENOSPC (`OSError: [Errno 28] No space left on device`), safetensors (`IoError(Os { code: \
         28, kind: StorageFull, … })`); Go's syscall.ENOSPC text is lowercase (Ollama, llama-swap, \
         Docker: `write /root/.ollama/models/blobs/…: no space left on device`, Go 1.22 \
         syscall/zerrors_linux_amd64.go); matched in any case",
        R_DISK,
    ),
    log(
        C::BadArgument,
        r#"error while handling (argument|environment variable) "[^"]*": |error: invalid argument: "#,
        "llama.cpp b11434 common/arg.cpp common_params_parse_ex (`error while handling argument \
         \"%s\": %s` then `usage:`, the flag's help and `to show complete usage, run with -h`; \
         `error: invalid argument: %s` for an unknown flag; `error while handling environment \
         variable \"%s\"` for a LLAMA_ARG_* value), exit code 1; measured here (`--cache-type-k \
         q9_9`: `Unsupported cache type: q9_9`; `--no-such-flag`; `LLAMA_ARG_CTX_SIZE=abc`: `stoi`)",
        R_BAD_ARGUMENT,
    ),
    log(
        C::BadArgument,
        r"error: (unrecognized arguments: |argument -{1,2}[\w.-]+(/-{1,2}[\w.-]+)*: |ambiguous option: |the following arguments are required: )",
        "CPython Lib/argparse.py ArgumentParser.error (`%(prog)s: error: %(message)s`, exit code \
         2) with parse_args (`unrecognized arguments: %s`), ArgumentError (`argument %s: %s`: \
         `invalid choice: %r (choose from %s)`, `invalid %(type)s value: %r`, `expected one \
         argument`), `ambiguous option: …`, `the following arguments are required: %s`; vLLM \
         0.19.1 vllm/utils/argparse_utils.py FlexibleArgumentParser.error (argparse's, prog \
         `vllm serve`; `vllm` and `api_server.py` for the older entry points); SGLang \
         launch_server.py (prog `launch_server.py`; a SystemExit printed without the prog)",
        R_BAD_ARGUMENT,
    ),
    // Before port-in-use: uvicorn words both failures `error while attempting to bind on
    // address`, and only the errno text tells them apart.
    log(
        C::AddressUnavailable,
        r"(?i)(error while attempting to bind on address|bind: ).{0,120}cannot assign requested address",
        "CPython 3.11 Lib/asyncio/base_events.py BaseEventLoop.create_server (`error while \
         attempting to bind on address %r: %s`, the strerror lowercased), logged by uvicorn \
         0.30.6 server.py Server.startup (`ERROR: [Errno 99] error while attempting to bind on \
         address ('::1', 8000, 0, 0): cannot assign requested address`: vLLM, SGLang, LiteLLM \
         given --host localhost or ::1 without IPv6); Go net.Listen (`listen tcp \
         [::1]:11434: bind: cannot assign requested address`: Ollama, llama-swap)",
        R_ADDRESS,
    ),
    Row {
        class: C::AddressUnavailable,
        signature: SignatureKind::Log(
            r"(?i)\[Errno 99\]|cannot assign requested address|EADDRNOTAVAIL",
        ),
        source: "CPython socket.bind (`OSError: [Errno 99] Cannot assign requested address`, \
                 errno 99 EADDRNOTAVAIL on Linux), as vLLM 0.19.1 create_server_socket \
                 (`sock.bind(addr)`) raises it. Claimed only for the API server's bind, like the \
                 generic port-in-use row: an outgoing connection that ran out of local ports \
                 (NCCL, torch's c10d store) says the same",
        remediation: R_ADDRESS,
        secondary: false,
        scope: Scope::ApiPort,
    },
    log(
        C::PortInUse,
        r"couldn't bind (HTTP server|to server) socket",
        "llama.cpp b11434 tools/server/server-http.cpp:517 (`couldn't bind HTTP server socket, \
         hostname: H, port: P`); older examples/server/server.cpp `couldn't bind to \
         server socket: hostname=H port=P`; \
         measured here with a held port",
        R_PORT,
    ),
    log(
        C::PortInUse,
        r"error while attempting to bind on address|port is already allocated|Failed to bind to .{0,80}[Aa]ddress already in use|listen tcp [^ ]*: bind: address already in use",
        "uvicorn 0.30.6 Server.startup over CPython 3.11 asyncio create_server (`[Errno 98] error \
         while attempting to bind on address ('0.0.0.0', 8000): address already in use`: SGLang, \
         LiteLLM, vLLM before ~0.6.1); TGI 3.3.7 router/src/server.rs (`Failed to bind to …`); Go \
         net.Listen (Ollama, llama-swap: `listen tcp 127.0.0.1:11434: bind: address already in \
         use`); Docker daemon `Bind for 0.0.0.0:P failed: port is already allocated`",
        R_PORT,
    ),
    Row {
        class: C::PortInUse,
        signature: SignatureKind::Log(r"\[Errno (98|48)\]|[Aa]ddress already in use|EADDRINUSE"),
        source: "vLLM 0.19.1 vllm/entrypoints/openai/api_server.py create_server_socket (`sock.bind(addr)` \
                 then `OSError: [Errno 98] Address already in use`). Claimed only for the \
                 API port: the line names the seat's port, or a create_server_socket / uvicorn frame \
                 stands just above it. Never NCCL (`NCCL WARN Call to bind failed: Address already \
                 in use`, from its misc/socket.cc), torch's c10d store (`The server socket has \
                 failed to listen … port: 29500 … EADDRINUSE`), or vLLM's get_open_port (vLLM \
                 0.5.4 vllm/utils.py)",
        remediation: R_PORT,
        secondary: false,
        scope: Scope::ApiPort,
    },
    log(
        C::MissingModule,
        r"This modeling file requires the following packages that were not found",
        "transformers 4.51.3 dynamic_module_utils.py check_imports (remote code needs a package \
         the image lacks)",
        R_MODULE,
    ),
    Row {
        class: C::MissingModule,
        signature: SignatureKind::Log(
            r"No module named ['\x22]?[A-Za-z_][\w.]*|cannot open shared object file: No such file or directory",
        ),
        source: "docs/field-cases.md B2 (secondary `ModuleNotFoundError: mamba_ssm` beside the unsupported \
                 architecture); CPython import system (`ModuleNotFoundError: No module named 'x'`, \
                 runpy's unquoted `python3: No module named x`), vLLM V0 worker lines without the \
                 class (`… while processing method load_model: No module named 'einops'`: vLLM \
                 0.5.4 vllm/executor/multiproc_worker_utils.py _run_worker_process); a missing \
                 shared library (the dynamic loader's `cannot open shared object file`, glibc 2.36 \
                 ld.so)",
        remediation: R_MODULE,
        // Engines log optional imports that fail as warnings; the one in docs/field-cases.md B2 was
        // secondary.
        secondary: true,
        scope: Scope::Any,
    },
    watch(
        C::HostOom,
        "Docker inspect State.OOMKilled = true",
        "Docker Engine API ContainerState (docs.docker.com, API v1.57; bollard 0.22): OOMKilled is a \
         host-cgroup OOM, not a CUDA OOM; measured here with a 96 MiB limit and --load-mode none",
        R_HOST,
    ),
    log(
        C::HostOom,
        r"A process of this unit has been killed by the OOM killer|Failed with result 'oom-kill'|Finished with result: oom-kill",
        "systemd's journal for a unit (src/core/unit.c unit_check_oom, logged since v243 with \
         OOMPolicy=: `UNIT: A process of this unit has been killed by the OOM killer.`; \
         src/core/service.c service_enter_dead `Failed with result '%s'.` with the service result \
         `oom-kill`), and systemd-run --wait's `Finished with result: oom-kill` (src/run/run.c)",
        R_HOST_KERNEL,
    ),
    log(
        C::HostOom,
        r"(?:Memory cgroup out of memory|Out of memory): Killed process \d+|oom-kill:constraint=CONSTRAINT_|oom_reaper: reaped process \d+",
        "the kernel's OOM killer in the kernel log (journalctl -k, dmesg): Linux mm/oom_kill.c \
         __oom_kill_process (`Memory cgroup out of memory: Killed process N (comm) …` under a \
         cgroup limit, `Out of memory: Killed process N` for the whole host), dump_oom_summary \
         (`oom-kill:constraint=CONSTRAINT_MEMCG,…`) and oom_reap_task_mm; measured here (Linux \
         6.18, Docker 20.10.24 on cgroup v1, a container over a 16 MiB limit)",
        R_HOST_KERNEL,
    ),
    log(
        C::HostOom,
        r"systemd-oomd\[\d+\]: Killed \S+ due to (?:memory pressure|swap used)",
        "systemd-oomd (src/oom/oomd-manager.c, v248+: `Killed CGROUP due to memory pressure for \
         … being …% > …% for > …` and `Killed CGROUP due to swap used (…) / total (…) being more \
         than …`): the userspace OOM killer ended the engine's cgroup",
        R_HOST_KERNEL,
    ),
    log(
        C::HostOom,
        r#""OOMKilled":\s*true|OOMKilled: true|Reason:\s+OOMKilled"#,
        "a container runtime's own record of an OOM kill printed into the log: Docker's \
         `docker inspect` State (moby daemon/monitor.go sets State.OOMKilled on containerd's \
         TaskOOM event; `\"OOMKilled\":true`), containerd's CRI and `kubectl describe pod` \
         (`Reason: OOMKilled` with `Exit Code: 137`); the watchdog reads Docker's field itself \
         (the row above)",
        R_HOST_KERNEL,
    ),
    watch(
        C::Exited,
        "the process or container exited before ready and no log signature matched (the code is recorded)",
        "process exit status / Docker State.ExitCode (128 + n is signal n: 137 is SIGKILL, sent \
         by the OOM killer, `docker kill` or `docker stop` after its timeout alike; only \
         State.OOMKilled or a kernel / systemd line above says it was the OOM killer); llama.cpp b11434 tools/server/server.cpp:491 \
         (`exiting due to model loading error`)",
        R_EXIT,
    ),
    watch(
        C::NotReady,
        "--ready-timeout passed while the seat's port answered and the seat was still logging, and no real completion (the preflight's check) had succeeded",
        "bakeoff's readiness definition (docs/fleet.md: ready means a real completion succeeds); docs/field-cases.md B1 \
         (/v1/models answering is not ready); a container logging every 20 ms measured here \
         (docker_backend.rs a_chatty_seat_still_reaches_the_ready_timeout)",
        R_NOT_READY,
    ),
    watch(
        C::NotListening,
        "every readiness probe of the watch was refused (silence or --ready-timeout): nothing listened on the seat's port",
        "bakeoff's readiness probe (seat.readiness.refused = attempts); measured here (a process \
         that logs a line and never listens)",
        "the engine never opened the seat's port: check its --host/--port against the seat (a \
         server bound to another address or port, or one stuck before it binds: read the last log \
         lines)",
    ),
    watch(
        C::WrongPort,
        "the log says the server listens on another port than the seat's (llama.cpp `listening on http://H:P`, uvicorn `Uvicorn running on`, vLLM `Starting vLLM (API )?server (N )?on`, Ollama `Listening on`), and the seat's port refused after that line",
        "llama.cpp tools/server/server.cpp, uvicorn server.py _log_started_message, vLLM 0.19.1 \
         entrypoints/openai/api_server.py build_and_serve, Ollama server/routes.go; measured here \
         (llama-server given another --port)",
        "make the engine's --port and the seat's port agree (for a Docker seat, container_port \
         is the port inside the container)",
    ),
    watch(
        C::ModelNameMismatch,
        "the server's /v1/models lists ids, none of them the seat's first served_model_names entry, and the completion is refused for that id",
        "vLLM entrypoints/openai/serving_engine.py _check_model (404 `The model `m` does not \
         exist.`); bakeoff's readiness probe (seat.readiness.served_model_ids)",
        "set the seat's served_model_names to what the engine serves, or make the engine serve \
         that name (vLLM/SGLang --served-model-name, llama-server --alias); gateways route by \
         these names",
    ),
    endpoint(
        C::Unreachable,
        "every connection refused (or timed out connecting), control calls and completions",
        "bakeoff's discovery and readiness probes; measured here \
         (a closed port on 127.0.0.1)",
        R_UNREACHABLE,
    ),
    endpoint(
        C::NotHttp,
        "something answered, but no reply was HTTP (another service on the port)",
        "bakeoff's HTTP/1 head parser; measured here (a TCP listener that \
         answers with text)",
        R_NOT_HTTP,
    ),
    endpoint(
        C::AuthFailed,
        "a completion answered 401 or 403: final at once, never retried",
        "llama.cpp tools/server/server.cpp (401 `Invalid API Key` under --api-key), vLLM \
         entrypoints/openai/api_server.py (401 under --api-key), LiteLLM proxy (401/403 for a bad \
         or unauthorized key); tested with a scripted 401",
        R_AUTH,
    ),
    endpoint(
        C::ServerError,
        "every call, control and completion, answered 5xx (not all 503)",
        "bakeoff's readiness probes (the statuses of every call)",
        R_SERVER_ERROR,
    ),
    endpoint(
        C::NotReady,
        "the completions answered 503 (llama.cpp \"Loading model\") or timed out while nothing else answered",
        "llama.cpp tools/server/server.cpp (503 `Loading model` on every path while it loads); \
         bakeoff's readiness definition (docs/fleet.md: ready means a real completion succeeds)",
        R_NOT_READY,
    ),
    endpoint(
        C::InferenceHanging,
        "connections accepted and control endpoints answering, every completion timed out: the wedge of docs/field-cases.md B1",
        "docs/field-cases.md B1 (/v1/models answering while every inference hung); measured here (a scripted \
         server whose completions never answer)",
        R_HANGING,
    ),
    endpoint(
        C::InferenceFailing,
        "control endpoints answer, completions fail otherwise (errors, empty replies, cut streams), or every suite request failed after a passing preflight",
        "docs/field-cases.md B1 (an engine core died while /v1/models kept answering); bakeoff's readiness \
         probes",
        R_FAILING,
    ),
    endpoint(
        C::ModelNotServed,
        "`--model` is not among `/v1/models` ids (engines that route by id)",
        "vLLM entrypoints/openai/serving_engine.py _check_model (404 `The model `m` does not \
         exist.`); SGLang and LiteLLM route by id the same way",
        R_NOT_SERVED,
    ),
    endpoint(
        C::NotMeasurable,
        "the suites refused (unknown window, no tokenizer route), or every requested suite measured nothing valid (each family `instrument-failure`)",
        "bakeoff's suites (a suite that measured nothing is a failure, never a pass)",
        R_NOT_MEASURABLE,
    ),
];

/// Lines that wrap the real error and must never be chosen as the root cause.
pub const WRAPPERS: &[(&str, &str)] = &[
    (
        r"Engine core initialization failed|EngineCore failed to start",
        "vLLM v1/engine/utils.py wait_for_engine_startup and v1/engine/core.py run_engine_core",
    ),
    (
        r"Initialization failed\. Please see the error messages above|Received sigquit from a child process",
        "SGLang entrypoints/engine.py and http_server.py",
    ),
    (
        r"Failed to import from vllm\._C|Failed to import from (amdsmi|vllm\._rocm_C)",
        "vLLM _custom_ops.py / platforms: a warning that an optional extension did not import \
         (ROCm, CPU, Ascend builds), harmless",
    ),
];
