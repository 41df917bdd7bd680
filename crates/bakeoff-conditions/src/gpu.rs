//! The GPU part, through nvidia-smi (its CSV parsing and runner are `bakeoff_host::nvidia_smi`'s):
//! each GPU's SM clock and active clock-event (throttle) reasons, and the compute processes on
//! it. `clocks_event_reasons.active` is the current spelling; drivers before it know only
//! `clocks_throttle_reasons.active`, so that is tried when the first is refused.

use std::collections::HashSet;

use bakeoff_artifact::{GpuConditions, GpuOther, GpuState};
use bakeoff_host::nvidia_smi::{QUERY_APPS, parse_compute_apps, run};

const REASON_FIELDS: [&str; 2] = [
    "clocks_event_reasons.active",
    "clocks_throttle_reasons.active",
];

/// NVML's `nvmlClocksEventReason*` bits (nvml.h), as written in the artifact.
const REASONS: [(u64, &str); 9] = [
    (0x1, "gpu-idle"),
    (0x2, "applications-clocks-setting"),
    (0x4, "sw-power-cap"),
    (0x8, "hw-slowdown"),
    (0x10, "sync-boost"),
    (0x20, "sw-thermal-slowdown"),
    (0x40, "hw-thermal-slowdown"),
    (0x80, "hw-power-brake-slowdown"),
    (0x100, "display-clock-setting"),
];

/// Reasons that mean the GPU ran slower because it was hot.
pub const THERMAL: [&str; 3] = ["sw-thermal-slowdown", "hw-thermal-slowdown", "hw-slowdown"];
/// Reasons that mean the GPU ran slower because of its power limit.
pub const POWER: [&str; 2] = ["sw-power-cap", "hw-power-brake-slowdown"];

/// The named reasons in a `0x…` bitmask (`gpu-idle` dropped: an idle GPU is not throttled).
pub fn reasons(mask: &str) -> Option<Vec<String>> {
    let m = u64::from_str_radix(mask.trim().trim_start_matches("0x"), 16).ok()?;
    Some(
        REASONS
            .iter()
            .filter(|(bit, name)| m & bit != 0 && *name != "gpu-idle")
            .map(|(_, n)| (*n).to_owned())
            .collect(),
    )
}

/// One line of `--query-gpu=index,uuid,clocks.sm,<reasons>`: `(index, uuid, sm MHz, reasons)`.
pub fn parse_clocks_line(line: &str) -> Option<(u32, String, Option<u32>, Vec<String>)> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    match f.as_slice() {
        [index, uuid, sm, mask] => Some((
            index.parse().ok()?,
            (*uuid).to_owned(),
            sm.parse().ok(),
            reasons(mask).unwrap_or_default(),
        )),
        _ => None,
    }
}

/// What the GPU sampler keeps between samples.
pub struct GpuSampler {
    bin: String,
    field: Option<&'static str>,
    state: GpuConditions,
}

impl GpuSampler {
    /// `bin`: the nvidia-smi to run; `None` when it is not on PATH.
    pub fn new(bin: Option<String>) -> Self {
        let state = match &bin {
            Some(_) => GpuConditions {
                source: "nvidia-smi".into(),
                unavailable: None,
                gpus: Vec::new(),
                others: Vec::new(),
            },
            None => GpuConditions::unavailable(
                "nvidia-smi",
                "nvidia-smi is not on PATH (no NVIDIA driver here)",
            ),
        };
        Self {
            bin: bin.unwrap_or_default(),
            field: None,
            state,
        }
    }

    /// One reading; `excluded` are bakeoff's and the engine's pids, `engine` the engine's.
    pub fn sample(&mut self, excluded: &HashSet<u32>, engine: Option<u32>) {
        if self.bin.is_empty() || self.state.unavailable.is_some() {
            return;
        }
        let fmt = "--format=csv,noheader,nounits".to_owned();
        let clocks = match self.field {
            Some(f) => run(
                &self.bin,
                &[format!("--query-gpu=index,uuid,clocks.sm,{f}"), fmt.clone()],
            ),
            None => {
                let query = |f: &str| {
                    run(
                        &self.bin,
                        &[format!("--query-gpu=index,uuid,clocks.sm,{f}"), fmt.clone()],
                    )
                };
                let [first, second] = REASON_FIELDS;
                match query(first) {
                    Ok(t) => {
                        self.field = Some(first);
                        Ok(t)
                    }
                    Err(_) => query(second).inspect(|_| self.field = Some(second)),
                }
            }
        };
        let clocks = match clocks {
            Ok(t) => t,
            Err(e) => {
                self.state.unavailable = Some(e.to_string());
                return;
            }
        };
        let apps = match run(
            &self.bin,
            &[format!("--query-compute-apps={QUERY_APPS}"), fmt],
        ) {
            Ok(t) => parse_compute_apps(&t).0,
            Err(e) => {
                self.state.unavailable =
                    Some(format!("GPU clocks read, but not its processes: {e}"));
                Vec::new()
            }
        };
        let engine_gpus: HashSet<String> = apps
            .iter()
            .filter(|(_, p)| Some(p.pid) == engine || excluded.contains(&p.pid))
            .map(|(u, _)| u.clone())
            .collect();
        for line in clocks.lines().filter(|l| !l.trim().is_empty()) {
            let Some((index, uuid, sm, rs)) = parse_clocks_line(line) else {
                continue;
            };
            let under_test = engine.map(|_| engine_gpus.contains(&uuid));
            let g = match self.state.gpus.iter_mut().position(|g| g.uuid == uuid) {
                Some(i) => &mut self.state.gpus[i],
                None => {
                    self.state.gpus.push(GpuState {
                        index,
                        uuid: uuid.clone(),
                        under_test,
                        sm_clock_mhz_min: None,
                        sm_clock_mhz_max: None,
                        throttle_reasons: Vec::new(),
                    });
                    let n = self.state.gpus.len() - 1;
                    &mut self.state.gpus[n]
                }
            };
            if under_test == Some(true) {
                g.under_test = Some(true);
            }
            if let Some(sm) = sm {
                g.sm_clock_mhz_min = Some(g.sm_clock_mhz_min.map_or(sm, |m| m.min(sm)));
                g.sm_clock_mhz_max = Some(g.sm_clock_mhz_max.map_or(sm, |m| m.max(sm)));
            }
            for r in rs {
                if !g.throttle_reasons.contains(&r) {
                    g.throttle_reasons.push(r);
                }
            }
        }
        // Others on a GPU under test; every GPU counts when the engine is not on one we saw.
        for (uuid, p) in apps {
            if excluded.contains(&p.pid) || Some(p.pid) == engine {
                continue;
            }
            if !engine_gpus.is_empty() && !engine_gpus.contains(&uuid) {
                continue;
            }
            match self
                .state
                .others
                .iter_mut()
                .find(|o| o.pid == p.pid && o.gpu_uuid == uuid)
            {
                Some(o) => {
                    o.used_bytes = match (o.used_bytes, p.used_bytes) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    }
                }
                None => self.state.others.push(GpuOther {
                    gpu_uuid: uuid,
                    pid: p.pid,
                    name: p.name,
                    used_bytes: p.used_bytes,
                }),
            }
        }
    }

    pub fn finish(self) -> GpuConditions {
        self.state
    }
}

/// `nvidia-smi` on PATH, if any.
pub fn nvidia_smi_on_path() -> Option<String> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nvidia-smi"))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn throttle_masks_name_their_reasons() {
        assert_eq!(reasons("0x0000000000000001").unwrap(), Vec::<String>::new());
        assert_eq!(
            reasons("0x0000000000000024").unwrap(),
            ["sw-power-cap", "sw-thermal-slowdown"]
        );
        let l = parse_clocks_line("0, GPU-abc, 1980, 0x0000000000000040").unwrap();
        assert_eq!(
            l,
            (
                0,
                "GPU-abc".into(),
                Some(1980),
                vec!["hw-thermal-slowdown".into()]
            )
        );
        let na = parse_clocks_line("1, GPU-d, [N/A], [N/A]").unwrap();
        assert_eq!((na.2, na.3.len()), (None, 0));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod fixture_tests {
    use super::*;

    fn fixture() -> String {
        format!(
            "{}/tests/fixtures/nvidia-smi-shared",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// The fixture stands in for nvidia-smi on a throttled GPU the engine (5159) shares with
    /// another CUDA process (777): the other is recorded with its memory, the engine is not,
    /// and the bitmask names power cap and thermal slowdown.
    #[test]
    fn a_shared_throttled_gpu_reads_through_the_fixture() {
        let mut s = GpuSampler::new(Some(fixture()));
        let excluded: HashSet<u32> = [5159].into();
        s.sample(&excluded, Some(5159));
        s.sample(&excluded, Some(5159));
        let g = s.finish();
        assert_eq!(g.unavailable, None);
        assert_eq!(g.gpus.len(), 1);
        assert_eq!(g.gpus[0].under_test, Some(true));
        assert_eq!(g.gpus[0].sm_clock_mhz_min, Some(1410));
        assert_eq!(
            g.gpus[0].throttle_reasons,
            ["sw-power-cap", "sw-thermal-slowdown"]
        );
        assert_eq!(g.others.len(), 1);
        assert_eq!(g.others[0].pid, 777);
        assert_eq!(g.others[0].used_bytes, Some(20480 * 1024 * 1024));
    }

    /// This machine has no NVIDIA driver: the GPU part says so instead of reading nothing.
    #[test]
    fn no_nvidia_smi_is_unavailable_with_why() {
        let mut s = GpuSampler::new(None);
        s.sample(&HashSet::new(), None);
        let g = s.finish();
        assert!(g.unavailable.unwrap().contains("not on PATH"));
        assert!(g.gpus.is_empty());
    }
}
