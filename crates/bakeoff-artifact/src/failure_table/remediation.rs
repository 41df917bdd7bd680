//! The failure table's remediations: one text per class, whoever observed it (the rows in
//! `rows.rs` name them).

pub(crate) const R_WEDGE: &str = "the engine stopped logging before it could serve: it is wedged (docs/field-cases.md \
     B1: CUDA-graph capture). Stop it (bakeoff seat down), then split the trigger: --enforce-eager, \
     a smaller --max-model-len, another engine build";
pub(crate) const R_CRASH: &str = "the seat restarts itself and fails again: read the root cause below; give bench seats \
     restart policy \"no\" so a failing seat cannot resurrect itself and block another's restore";
pub(crate) const R_CUDA: &str = "the GPU ran out of memory: lower --gpu-memory-utilization of this or a co-resident seat, \
     --max-model-len or --max-num-seqs; remember the utilization budget does not cover the CUDA \
     context (bakeoff plan)";
pub(crate) const R_KV: &str = "the weights fit but the KV cache does not: raise --gpu-memory-utilization, lower \
     --max-model-len / --max-num-seqs, use an fp8 KV cache, or pick a smaller quantization";
pub(crate) const R_ARCH: &str = "this engine build does not support the model's architecture: use a newer engine image \
     (check its supported-architectures list) or another engine";
pub(crate) const R_MODULE: &str = "a Python module the engine needs is not installed in the image: use an image that \
     ships it, or install it in a derived image";
pub(crate) const R_TYPE: &str = "the image's transformers does not know this model_type: use an engine image with a \
     newer transformers (or a nightly build)";
pub(crate) const R_QUANT: &str = "the quantization flag does not match the checkpoint: drop the hard-coded --quantization \
     for unquantized weights, or point the seat at weights with that quantization config";
pub(crate) const R_HOST: &str = "the container hit its memory limit (host RAM, not GPU): raise the seat's memory limit, \
     or load with mmap so weights are page cache rather than anonymous memory";
pub(crate) const R_HOST_KERNEL: &str = "an OOM killer (the kernel's, or systemd-oomd) ended the engine (host RAM, not GPU): the \
     memory limit of its systemd unit (MemoryMax=), container (memory) or cgroup, or the host's \
     RAM, ran out. Raise \
     that limit or free host RAM, or load with mmap so weights are page cache rather than \
     anonymous memory";
pub(crate) const R_PORT: &str = "another process or seat already binds this port: stop it (bakeoff seat status shows seats \
     on the port), or use seat swap OLD NEW for two seats that share a port";
pub(crate) const R_ADDRESS: &str = "the host address the engine was told to bind is not on this machine (`::1` or a \
     `localhost` that resolves to IPv6 where IPv6 is off, another machine's IP): bind an address \
     this host has, e.g. --host 127.0.0.1 (or 0.0.0.0), and point the seat's probe at it";
pub(crate) const R_EXIT: &str = "the engine exited before it was ready and no known signature matched: read the evidence \
     lines (the deep tail of its log)";
pub(crate) const R_NOT_READY: &str = "no real completion succeeded within --ready-timeout while the server was still loading or \
     logging: wait, or raise --ready-timeout for a load that is slow but moving (a seat's \
     --load-budget projects it); read the engine log for where it stalls";
pub(crate) const R_LOAD: &str = "the model file could not be loaded: check the path the seat gives the engine (and the \
     container's mounts) and that the file is a complete checkpoint";

pub(crate) const R_GPU_BUSY: &str = "other processes already hold this GPU's memory: stop the co-resident seat or process \
     (bakeoff plan shows what each seat claims), or lower this seat's --gpu-memory-utilization";
pub(crate) const R_MODEL_MISSING: &str = "the engine cannot find the model it was given: check the path (for a Docker seat, the \
     path inside the container and the seat's mounts) or the repository id; bakeoff audit checks \
     the path before a start";
pub(crate) const R_ACCESS: &str = "the model repository refused the download (gated or private): accept the model's terms on \
     its page and give the seat a token with access (HF_TOKEN in the seat's env), or point it at \
     a local copy";
pub(crate) const R_GPU_UNSUPPORTED: &str = "this GPU lacks what the engine or the weights need (compute capability, kernels built \
     for it): use --dtype half instead of bfloat16 on compute capability < 8.0, an engine image \
     built for this GPU's architecture, or weights in a quantization this GPU supports";
pub(crate) const R_NO_GPU: &str = "the engine saw no usable GPU: check the seat's GPU request (gpus in the fleet file and \
     the NVIDIA container toolkit), CUDA_VISIBLE_DEVICES, and the driver (nvidia-smi)";
pub(crate) const R_DISK: &str = "a disk the engine writes to is full: free space where the model cache lives (HF_HOME, \
     the seat's mounts) or in the container's writable layer, or mount the cache from a larger \
     disk";
pub(crate) const R_CONTEXT: &str = "the requested context is longer than the model allows: lower --max-model-len (vLLM, \
     SGLang --context-length) to the model's context (bakeoff kv shows it); override the check \
     (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1) only with rope scaling that really extends the model";
pub(crate) const R_BAD_ARGUMENT: &str = "the engine refused an argument: read the quoted line, fix the flag or its value in the \
     seat's launch (`--help` of this engine version lists what it accepts); flags differ between \
     engine versions";

// Endpoint remediations (the preflight, `eval run`): the observation that led to the class is
// prefixed by the caller, the fix is the table's.
pub(crate) const R_UNREACHABLE: &str =
    "check the address and port, and that the server is running (bakeoff seat status)";
pub(crate) const R_NOT_HTTP: &str = "check the port (another service may hold it) and that the URL points at the engine's \
     API server";
pub(crate) const R_AUTH: &str = "set the key in BAKEOFF_API_KEY, or name the variable holding it with --api-key-env NAME \
     (a key given wins over user:password in the URL)";
pub(crate) const R_SERVER_ERROR: &str = "read the engine's log for the first error";
pub(crate) const R_HANGING: &str = "the wedge of docs/field-cases.md B1 — an engine up on its control endpoints \
     whose inference never returns. Read the engine's log, restart it, and split the trigger \
     (--enforce-eager, a smaller --max-model-len)";
pub(crate) const R_FAILING: &str = "read the engine log for the first error (a crashed engine core, a bad request for this \
     model), then rerun the preflight";
pub(crate) const R_NOT_SERVED: &str =
    "pass --model with one of the ids the server lists (/v1/models)";
pub(crate) const R_NOT_MEASURABLE: &str = "supply what the suites asked for (e.g. --max-model-len N, --tokenizer PATH) and rerun; \
     when every family is an instrument failure, the scores are below chance beyond doubt: \
     check the battery's answer keys and the extraction (docs/statistics.md) before reading \
     anything about the model";
