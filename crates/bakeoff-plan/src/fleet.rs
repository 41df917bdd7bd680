//! A seat as the plan needs it.
//!
//! The fleet file (`fleet.toml`, docs/fleet.md) is parsed by bakeoff-seats; the binary turns
//! each of its seats into a [`SeatSpec`] here, and [`SeatSpec::to_plan_seat`] searches the
//! launch arguments for the flags that size memory (`--gpu-memory-utilization`,
//! `--max-model-len`, `-c`, `-np`, …).

/// A command as one string, split on whitespace (a process seat's `command = "vllm serve X"`),
/// or as a list of arguments (a Docker seat's `command = ["--model", …]`).
#[derive(Debug, Clone)]
pub enum StrOrList {
    One(String),
    Many(Vec<String>),
}

impl StrOrList {
    fn args(&self) -> Vec<String> {
        match self {
            Self::One(s) => s.split_whitespace().map(str::to_owned).collect(),
            Self::Many(v) => v.clone(),
        }
    }
}

/// How a seat is launched: a process or a Docker container.
#[derive(Debug, Clone, Default)]
pub struct LaunchSpec {
    pub command: Option<StrOrList>,
    pub args: Vec<String>,
    pub image: Option<String>,
    /// The container name.
    pub name: Option<String>,
    pub gpus: Option<Vec<u32>>,
}

#[derive(Debug, Clone, Default)]
pub struct SeatSpec {
    pub name: String,
    pub host: Option<String>,
    pub engine: Engine,
    /// Engine version (`0.26.0`), when not readable from a Docker image tag.
    pub engine_version: Option<String>,
    /// The model path or id, when not in the launch arguments.
    pub model: Option<String>,
    pub port: Option<u16>,
    pub served_names: Vec<String>,
    pub gpu_memory_utilization: Option<f64>,
    pub role: Option<String>,
    pub gpus: Option<Vec<u32>>,
    /// GPUs the seat's host declares (`[hosts.NAME] gpus`); `Some(0)`: a CPU-only host, whose
    /// seats hold no GPU memory.
    pub host_gpus: Option<u32>,
    pub quantization: Option<String>,
    pub max_model_len: Option<u64>,
    pub launch: Option<LaunchSpec>,
    pub process: Option<LaunchSpec>,
    pub docker: Option<LaunchSpec>,
}

/// The engines the plan knows how to price: the one vocabulary enum (its JSON is `"llama.cpp"`,
/// as in every other file bakeoff writes).
pub use bakeoff_artifact::EngineKind as Engine;

/// A seat normalized for planning: fields from the seat table first, then from its launch
/// arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanSeat {
    pub name: String,
    pub host: String,
    pub engine: Engine,
    pub engine_version: Option<String>,
    /// The GPUs it uses; empty for a seat that runs on the CPU (`cpu_only` says why).
    pub gpus: Vec<u32>,
    /// Why the seat holds no GPU memory: its host declares `gpus = 0`, or its launch hides every
    /// GPU (`CUDA_VISIBLE_DEVICES=""`). `None` for a GPU seat.
    pub cpu_only: Option<String>,
    pub port: Option<u16>,
    pub container_name: Option<String>,
    pub model: Option<String>,
    pub gpu_memory_utilization: Option<f64>,
    pub quantization: Option<String>,
    pub max_model_len: Option<u64>,
    pub tensor_parallel_size: u64,
    pub args: Vec<String>,
}

/// The one reading of engine flags (shared with the seats' checkpoint audit).
pub use bakeoff_model::args::flag_value;

/// The GPU indexes a `CUDA_VISIBLE_DEVICES` value exposes, as CUDA reads it: `Some(vec![])` when
/// it hides every GPU (empty, or an invalid first entry such as `-1`: CUDA stops at the first
/// invalid entry), `None` when it names GPUs by UUID (`GPU-…`, `MIG-…`), which no index here maps.
pub fn cuda_visible_devices(value: &str) -> Option<Vec<u32>> {
    let entries: Vec<&str> = value.split(',').map(str::trim).collect();
    if entries
        .iter()
        .any(|e| e.starts_with("GPU-") || e.starts_with("MIG-"))
    {
        return None;
    }
    Some(
        entries
            .iter()
            .map_while(|e| e.parse::<u32>().ok())
            .collect(),
    )
}

/// Whether a boolean flag is present.
pub fn has_flag(args: &[String], names: &[&str]) -> bool {
    args.iter().any(|a| names.contains(&a.as_str()))
}

/// `vllm/vllm-openai:v0.10.1` → `0.10.1`.
fn version_from_image(image: &str) -> Option<String> {
    let tag = image.rsplit_once(':')?.1;
    let v = tag.strip_prefix('v').unwrap_or(tag);
    v.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
        .then(|| v.to_owned())
}

impl SeatSpec {
    /// Normalizes this seat for the plan; `default_host` when the seat names none.
    pub fn to_plan_seat(&self, default_host: &str) -> PlanSeat {
        let launches: Vec<&LaunchSpec> = [&self.launch, &self.process, &self.docker]
            .into_iter()
            .flatten()
            .collect();
        let mut args = Vec::new();
        for l in &launches {
            if let Some(c) = &l.command {
                args.extend(c.args());
            }
            args.extend(l.args.iter().cloned());
        }
        let image = launches.iter().find_map(|l| l.image.as_deref());
        let model = self.model.clone().or_else(|| {
            // `--model` first: `python -m vllm.entrypoints.openai.api_server --model DIR`.
            bakeoff_model::args::flag_value_by_priority(&args, &["--model", "--model-path", "-m"])
                .map(str::to_owned)
                .or_else(|| {
                    // `vllm serve MODEL`
                    args.iter()
                        .position(|a| a == "serve")
                        .and_then(|i| args.get(i + 1))
                        .filter(|a| !a.starts_with('-'))
                        .cloned()
                })
        });
        let num = |names: &[&str]| flag_value(&args, names).and_then(|v| v.parse::<u64>().ok());
        let host = self.host.clone().unwrap_or_else(|| default_host.to_owned());
        let assigned = self
            .gpus
            .clone()
            .or_else(|| launches.iter().find_map(|l| l.gpus.clone()));
        let (gpus, cpu_only) = match (self.host_gpus, assigned) {
            (Some(0), _) => (Vec::new(), Some(format!("host {host} declares gpus = 0"))),
            (_, Some(g)) if g.is_empty() => (
                Vec::new(),
                Some("its launch hides every GPU (CUDA_VISIBLE_DEVICES names none)".to_owned()),
            ),
            (_, Some(g)) => (g, None),
            // No assignment on a host with GPUs: CUDA's first device.
            (_, None) => (vec![0], None),
        };
        PlanSeat {
            name: self.name.clone(),
            host,
            engine: self.engine,
            engine_version: self
                .engine_version
                .clone()
                .or_else(|| image.and_then(version_from_image)),
            gpus,
            cpu_only,
            port: self.port,
            container_name: launches.iter().find_map(|l| l.name.clone()),
            model,
            gpu_memory_utilization: self.gpu_memory_utilization.or_else(|| {
                flag_value(
                    &args,
                    &["--gpu-memory-utilization", "--mem-fraction-static"],
                )
                .and_then(|v| v.parse().ok())
            }),
            quantization: self
                .quantization
                .clone()
                .or_else(|| flag_value(&args, &["--quantization", "-q"]).map(str::to_owned)),
            max_model_len: self
                .max_model_len
                .or_else(|| num(&["--max-model-len", "--context-length"])),
            tensor_parallel_size: num(&["--tensor-parallel-size", "-tp", "--tp-size", "--tp"])
                .unwrap_or(1)
                .max(1),
            args,
        }
    }
}
