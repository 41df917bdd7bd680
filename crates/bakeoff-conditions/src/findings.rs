//! The contamination findings drawn from a step's [`Conditions`], each an instrument flag (a
//! warning) with its evidence. Thresholds: docs/metrics.md, "Conditions".

use bakeoff_artifact::{Conditions, FlagCode, FlagSeverity, InstrumentFlag};

use crate::gpu::{POWER, THERMAL};

/// `host-contended`: others used more than this share of the host's cores…
pub const HOST_SHARE: f64 = 0.25;
/// …and at least this many cores (one busy core of a big host is not contention).
pub const HOST_MIN_CORES: f64 = 0.5;
/// `page-cache-dropped`: `Cached` fell by more than this share of its start…
pub const CACHE_DROP_SHARE: f64 = 0.20;
/// …and by more than this many bytes.
pub const CACHE_DROP_MIN_BYTES: u64 = 256 * 1024 * 1024;

const MIB: f64 = 1024.0 * 1024.0;

fn flag(code: FlagCode, message: String) -> InstrumentFlag {
    InstrumentFlag {
        code,
        severity: FlagSeverity::Warning,
        message,
        suite: None,
        count: None,
    }
}

/// Every finding the readings support.
pub fn findings(c: &Conditions) -> Vec<InstrumentFlag> {
    let mut out = Vec::new();
    if let Some(o) = c.other_cpu_cores {
        let limit = (HOST_SHARE * f64::from(c.host_cores)).max(HOST_MIN_CORES);
        if o > limit {
            let who: Vec<String> = c
                .top_others
                .iter()
                .take(5)
                .map(|p| format!("{} {} {:.1}s", p.pid, p.comm, p.cpu_seconds))
                .collect();
            out.push(flag(
                FlagCode::HostContended,
                format!(
                    "other processes used {o:.2} of {} cores (limit {limit:.2}) over {:.1}s; top: pids {}",
                    c.host_cores,
                    c.wall_s,
                    who.join(", ")
                ),
            ));
        }
    }
    if let Some(m) = &c.memory {
        let drop = m.start.cached_bytes.saturating_sub(m.min.cached_bytes);
        if drop > CACHE_DROP_MIN_BYTES
            && drop as f64 > CACHE_DROP_SHARE * m.start.cached_bytes as f64
        {
            out.push(flag(
                FlagCode::PageCacheDropped,
                format!(
                    "page cache fell from {:.0} MiB to {:.0} MiB while it was measured",
                    m.start.cached_bytes as f64 / MIB,
                    m.min.cached_bytes as f64 / MIB
                ),
            ));
        }
    }
    if !c.gpu.others.is_empty() {
        let who: Vec<String> = c
            .gpu
            .others
            .iter()
            .map(|o| {
                let mem = o.used_bytes.map_or("memory unknown".to_owned(), |b| {
                    format!("{:.0} MiB", b as f64 / MIB)
                });
                format!(
                    "{} {} ({mem}) on {}",
                    o.pid,
                    o.name.as_deref().unwrap_or("?"),
                    o.gpu_uuid
                )
            })
            .collect();
        out.push(flag(
            FlagCode::GpuShared,
            format!(
                "other compute processes on the GPU under test: pids {}",
                who.join(", ")
            ),
        ));
    }
    for (code, set) in [
        (FlagCode::ThermalThrottled, &THERMAL[..]),
        (FlagCode::PowerCapped, &POWER[..]),
    ] {
        let hits: Vec<String> = c
            .gpu
            .gpus
            .iter()
            .filter(|g| g.under_test != Some(false))
            .filter_map(|g| {
                let r: Vec<&str> = g
                    .throttle_reasons
                    .iter()
                    .map(String::as_str)
                    .filter(|r| set.contains(r))
                    .collect();
                (!r.is_empty()).then(|| {
                    format!(
                        "GPU {} {} (SM clock {}–{} MHz)",
                        g.index,
                        r.join("+"),
                        g.sm_clock_mhz_min.map_or("?".into(), |m| m.to_string()),
                        g.sm_clock_mhz_max.map_or("?".into(), |m| m.to_string())
                    )
                })
            })
            .collect();
        if !hits.is_empty() {
            out.push(flag(code, hits.join("; ")));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::{
        Excluded, GpuConditions, GpuState, MemSnapshot, MemoryConditions, OtherProcess,
    };

    fn base(cores: u32, other: f64) -> Conditions {
        Conditions {
            source: "/proc".into(),
            samples: 3,
            wall_s: 2.0,
            host_cores: cores,
            excluded: Excluded {
                bakeoff_pid: 1,
                engine_pid: Some(2),
                engine: "pid 2 listens on port 8080".into(),
            },
            load_avg: None,
            other_cpu_cores: Some(other),
            top_others: vec![OtherProcess {
                pid: 123,
                comm: "stress".into(),
                cpu_seconds: 3.5,
            }],
            memory: None,
            gpu: GpuConditions::unavailable("nvidia-smi", "not on PATH"),
            unavailable: vec![],
            findings: vec![],
        }
    }

    #[test]
    fn host_contention_needs_a_quarter_of_the_cores_and_half_a_core() {
        assert!(findings(&base(2, 0.5)).is_empty());
        let f = findings(&base(2, 0.6));
        assert_eq!(f[0].code, FlagCode::HostContended);
        assert!(f[0].message.contains("123 stress 3.5s"), "{}", f[0].message);
        // 64 cores: 16 busy cores is the limit.
        assert!(findings(&base(64, 15.0)).is_empty());
        assert_eq!(findings(&base(64, 17.0)).len(), 1);
    }

    #[test]
    fn a_page_cache_drop_needs_a_fifth_and_256_mib() {
        let gib = 1024 * 1024 * 1024;
        let snap = |cached| MemSnapshot {
            free_bytes: 0,
            available_bytes: 0,
            cached_bytes: cached,
        };
        let mut c = base(2, 0.0);
        c.memory = Some(MemoryConditions {
            start: snap(4 * gib),
            end: snap(4 * gib),
            min: snap(3 * gib),
        });
        assert_eq!(findings(&c)[0].code, FlagCode::PageCacheDropped);
        // 50 % of a small cache, but under 256 MiB: not a drop worth a flag.
        c.memory = Some(MemoryConditions {
            start: snap(400 * 1024 * 1024),
            end: snap(200 * 1024 * 1024),
            min: snap(200 * 1024 * 1024),
        });
        assert!(findings(&c).is_empty());
    }

    #[test]
    fn throttle_reasons_map_to_thermal_and_power() {
        let mut c = base(2, 0.0);
        c.gpu = GpuConditions {
            source: "nvidia-smi".into(),
            unavailable: None,
            gpus: vec![GpuState {
                index: 0,
                uuid: "GPU-x".into(),
                under_test: Some(true),
                sm_clock_mhz_min: Some(1410),
                sm_clock_mhz_max: Some(1980),
                throttle_reasons: vec!["sw-power-cap".into(), "hw-thermal-slowdown".into()],
            }],
            others: vec![],
        };
        let codes: Vec<FlagCode> = findings(&c).iter().map(|f| f.code).collect();
        assert_eq!(codes, [FlagCode::ThermalThrottled, FlagCode::PowerCapped]);
    }
}
