use super::summary::{GpuSample, Scope, counter_delta, integrate_mj, scope, summarize};
use super::*;
use bakeoff_artifact::{EnergyMethod, TelemetryScope};
use bakeoff_host::nvml::{DriverError, TelemetryError};

const G0: &str = "GPU-0";
const G1: &str = "GPU-1";

fn gpu(index: u32, uuid: &str, watts: f64, counter: Option<u64>) -> GpuSample {
    GpuSample {
        index,
        uuid: uuid.into(),
        name: "NVIDIA H200".into(),
        power_w: Some(watts),
        energy_mj: counter,
        utilization_pct: Some(50.0 + f64::from(index)),
        memory_used_bytes: Some(1000 + u64::from(index)),
    }
}

fn all() -> Scope {
    Scope {
        engine_gpus: None,
        detail: "all".into(),
    }
}

#[test]
fn the_counter_delta_is_the_energy_and_a_backwards_counter_is_unavailable() {
    assert_eq!(counter_delta(1_000, 51_000), Ok(50_000));
    let e = counter_delta(51_000, 200).unwrap_err().to_string();
    assert!(e.contains("backwards") && e.contains("unavailable"), "{e}");

    // The counter wins over the power samples: 300 J by the counter, whatever power said.
    let s = vec![
        Sample {
            t_s: 0.0,
            gpus: vec![gpu(0, G0, 100.0, Some(1_000_000))],
        },
        Sample {
            t_s: 1.0,
            gpus: vec![gpu(0, G0, 500.0, Some(1_300_000))],
        },
    ];
    let t = summarize("nvml", 250, &s, &all(), vec![]);
    assert_eq!(t.energy_j, Some(300.0));
    assert_eq!(t.energy_method, Some(EnergyMethod::NvmlEnergyCounter));
    assert_eq!((t.power_w_mean, t.power_w_max), (Some(300.0), Some(500.0)));
    assert_eq!(t.gpus[0].utilization_pct_max, Some(50.0));
    assert_eq!(t.gpus[0].memory_used_bytes_max, Some(1000));

    // A driver reload mid-step resets the counter: no energy, no tokens per joule.
    let mut reset = s.clone();
    reset[1].gpus[0].energy_mj = Some(5);
    let t = with_tokens(summarize("nvml", 250, &reset, &all(), vec![]), 900);
    assert_eq!(t.energy_j, None);
    assert_eq!(t.output_tokens_per_joule, None);
    assert!(
        t.gpus[0]
            .energy_unavailable
            .as_deref()
            .unwrap()
            .contains("backwards")
    );
    // Power is still reported.
    assert_eq!(t.power_w_max, Some(500.0));
}

#[test]
fn without_a_counter_power_is_integrated_and_marked_so() {
    // Trapezoids: (100+200)/2 × 1 s + (200+200)/2 × 1 s = 350 J.
    assert_eq!(
        integrate_mj(&[(0.0, 100.0), (1.0, 200.0), (2.0, 200.0)]),
        Some(350_000.0)
    );
    assert_eq!(integrate_mj(&[(0.0, 100.0)]), None);
    let s: Vec<Sample> = [(0.0, 100.0), (1.0, 200.0), (2.0, 200.0)]
        .iter()
        .map(|(t, w)| Sample {
            t_s: *t,
            gpus: vec![gpu(0, G0, *w, None)],
        })
        .collect();
    let t = with_tokens(summarize("nvidia-smi", 500, &s, &all(), vec![]), 700);
    assert_eq!(t.energy_j, Some(350.0));
    assert_eq!(t.energy_method, Some(EnergyMethod::IntegratedPower));
    assert_eq!(t.gpus[0].energy_method, Some(EnergyMethod::IntegratedPower));
    assert_eq!(t.output_tokens_per_joule, Some(2.0));
    // One sample: nothing to integrate.
    let t = summarize("nvidia-smi", 500, &s[..1], &all(), vec![]);
    assert_eq!(t.energy_j, None);
    assert!(t.gpus[0].energy_unavailable.is_some());
}

#[test]
fn tokens_per_joule_divides_output_tokens_by_energy() {
    let mut t = GpuTelemetry::unavailable("nvml", "x");
    assert_eq!(with_tokens(t.clone(), 100).output_tokens_per_joule, None);
    t.energy_j = Some(0.0);
    assert_eq!(with_tokens(t.clone(), 100).output_tokens_per_joule, None);
    t.energy_j = Some(400.0);
    assert_eq!(with_tokens(t, 1000).output_tokens_per_joule, Some(2.5));
}

#[test]
fn only_the_engines_gpus_count_when_they_can_be_told() {
    let s = vec![
        Sample {
            t_s: 0.0,
            gpus: vec![gpu(0, G0, 300.0, Some(0)), gpu(1, G1, 70.0, Some(0))],
        },
        Sample {
            t_s: 2.0,
            gpus: vec![
                gpu(0, G0, 500.0, Some(800_000)),
                gpu(1, G1, 70.0, Some(140_000)),
            ],
        },
    ];
    // The engine (100) started a worker (101) which holds GPU 1's memory... no: GPU 0's.
    let procs = vec![(G0.to_string(), 101), (G1.to_string(), 555)];
    let tree: HashSet<u32> = [100, 101].into();
    let sc = scope(Some(100), &tree, "pid 100 listens", &procs, &s[1].gpus);
    assert!(sc.detail.contains("GPU 0"), "{}", sc.detail);
    let t = with_tokens(summarize("nvml", 250, &s, &sc, vec![]), 1600);
    assert_eq!(t.scope, Some(TelemetryScope::EngineGpus));
    assert_eq!(t.energy_j, Some(800.0));
    assert_eq!(t.output_tokens_per_joule, Some(2.0));
    assert_eq!((t.gpus[0].in_scope, t.gpus[1].in_scope), (true, false));
    assert_eq!(t.power_w_max, Some(500.0));

    // The engine unknown, or on no GPU: every GPU counts, and the artifact says so.
    for sc in [
        scope(
            None,
            &HashSet::new(),
            "no socket listens on port 8080",
            &procs,
            &[],
        ),
        scope(Some(7), &[7].into(), "pid 7", &procs, &[]),
    ] {
        assert!(sc.detail.contains("all GPUs"), "{}", sc.detail);
        let t = summarize("nvml", 250, &s, &sc, vec![]);
        assert_eq!(t.scope, Some(TelemetryScope::AllGpus));
        assert_eq!(t.energy_j, Some(940.0));
        assert_eq!(t.power_w_max, Some(570.0));
    }
}

/// A fake source whose counter climbs 1 J a reading, and whose second read fails.
struct Climbing {
    reads: u64,
}

impl GpuSource for Climbing {
    fn name(&self) -> &'static str {
        "nvml"
    }
    fn read(&mut self) -> Result<Vec<GpuSample>, SourceError> {
        self.reads += 1;
        if self.reads == 2 {
            return Err(SourceError::Nvml(TelemetryError::Reading {
                index: 0,
                what: "power",
                source: DriverError::GpuLost,
            }));
        }
        Ok(vec![gpu(0, G0, 200.0, Some(self.reads * 1000))])
    }
    fn processes(&mut self) -> Result<Vec<(String, u32)>, SourceError> {
        Ok(vec![(G0.into(), 42)])
    }
}

/// A source that reports each of its reads on a channel: a test waits for reads, not for time.
struct Notifying<S> {
    inner: S,
    reads: std::sync::mpsc::Sender<()>,
}

impl<S: GpuSource> GpuSource for Notifying<S> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn read(&mut self) -> Result<Vec<GpuSample>, SourceError> {
        let r = self.inner.read();
        let _ = self.reads.send(());
        r
    }
    fn processes(&mut self) -> Result<Vec<(String, u32)>, SourceError> {
        self.inner.processes()
    }
}

/// `inner` wrapped to report its reads, and the receiving end.
fn notifying<S: GpuSource + 'static>(
    inner: S,
) -> (Box<dyn GpuSource>, std::sync::mpsc::Receiver<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    (Box::new(Notifying { inner, reads: tx }), rx)
}

/// Until the sampler has read `n` times (a generous bound, so a stalled sampler fails the test
/// instead of hanging it).
fn wait_for_reads(rx: &std::sync::mpsc::Receiver<()>, n: usize) {
    for i in 0..n {
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("the sampler read {i} times in 30 s, not {n}"));
    }
}

#[test]
fn the_sampler_thread_reads_until_finish_and_keeps_failures() {
    let (source, reads) = notifying(Climbing { reads: 0 });
    let s = TelemetrySampler::start_with(
        source,
        Duration::from_millis(20),
        Engine {
            pid: Some(42),
            how: "test".into(),
            proc_root: None,
        },
    );
    // Four reads: the second fails, so at least three samples.
    wait_for_reads(&reads, 4);
    let t = s.finish();
    assert_eq!(t.unavailable, None);
    assert!(t.samples >= 3, "{t:?}");
    assert_eq!(t.scope, Some(TelemetryScope::EngineGpus));
    assert_eq!(t.energy_method, Some(EnergyMethod::NvmlEnergyCounter));
    // The first reading was 1 J, the last the number of reads: the delta, exactly.
    let reads = f64::from(t.samples) + 1.0;
    assert_eq!(t.energy_j, Some(reads - 1.0));
    assert_eq!(
        t.problems,
        ["NVML GPU 0 power: device fell off the bus or has otherwise become inacessible"]
    );
}

fn fixture() -> String {
    format!(
        "{}/tests/fixtures/nvidia-smi-power",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The nvidia-smi fallback through a stand-in script: power sampled and integrated (marked so),
/// only the engine's GPU (0) in the totals, the idle GPU 1 listed beside it.
#[test]
fn the_nvidia_smi_fallback_integrates_power_of_the_engines_gpu() {
    let (source, reads) = notifying(SmiSource { bin: fixture() });
    let s = TelemetrySampler::start_with(
        source,
        Duration::from_millis(50),
        Engine {
            pid: Some(5159),
            how: "pid 5159 listens on port 8080".into(),
            proc_root: None,
        },
    );
    // Two readings at least: power integrated over the time between them.
    wait_for_reads(&reads, 3);
    let t = with_tokens(s.finish(), 1000);
    assert_eq!(t.source, "nvidia-smi");
    assert_eq!(t.unavailable, None, "{t:?}");
    assert_eq!(
        t.scope,
        Some(TelemetryScope::EngineGpus),
        "{}",
        t.scope_detail
    );
    assert_eq!(t.gpus.len(), 2);
    assert!(t.gpus[0].in_scope && !t.gpus[1].in_scope);
    assert_eq!(t.gpus[0].name, "NVIDIA H200");
    assert_eq!(t.gpus[0].memory_used_bytes_max, Some(81920 * 1024 * 1024));
    assert_eq!(t.gpus[0].utilization_pct_max, Some(97.0));
    assert_eq!((t.power_w_mean, t.power_w_max), (Some(350.5), Some(350.5)));
    assert_eq!(t.energy_method, Some(EnergyMethod::IntegratedPower));
    let j = t.energy_j.unwrap();
    assert!(j > 0.0);
    assert_eq!(t.output_tokens_per_joule, Some(1000.0 / j));
}

/// This dev machine has no NVIDIA driver: the step records why instead of reading nothing.
#[test]
fn no_nvml_and_no_nvidia_smi_is_unavailable_with_why() {
    if NvmlSource::open().is_ok() {
        eprintln!("NVML is here: nothing to check");
        return;
    }
    let mut ex = Exclude::for_endpoint("127.0.0.1", None);
    ex.nvidia_smi = None;
    let t = TelemetrySampler::start(&ex).finish();
    let why = t.unavailable.unwrap();
    assert!(why.starts_with("unavailable (no NVML)"), "{why}");
    assert!(why.contains("nvidia-smi is not on PATH"), "{why}");
    assert!(t.gpus.is_empty() && t.energy_j.is_none());
}
