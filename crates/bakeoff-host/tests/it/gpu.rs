//! The GPU readings where no driver is: every source says it is unavailable and why, and the
//! one NVML handle gives the same answer to every caller. On a host with a driver the same
//! tests check that what was read is consistent instead.

use bakeoff_host::nvml::{self, Telemetry};
use bakeoff_host::{MachineReadings, ReadingSource, nvidia_smi};

#[test]
fn nvml_is_initialised_once_and_every_reader_gets_its_answer() {
    let first = nvml::handle().map(|n| n as *const _);
    let second = nvml::handle().map(|n| n as *const _);
    assert_eq!(first, second, "one handle, or one error, for the process");
    let memory = nvml::read();
    assert_eq!(memory.source, ReadingSource::Nvml);
    match nvml::handle() {
        Err(e) => {
            assert!(
                e.to_string().starts_with("NVML did not initialize ("),
                "{e}"
            );
            assert!(memory.gpus.is_empty());
            assert_eq!(
                memory.unavailable,
                Some(format!("{e}: no NVIDIA driver or GPU on this host"))
            );
            let telemetry = Telemetry::open().err().unwrap();
            assert_eq!(telemetry.to_string(), e.to_string());
        }
        Ok(_) => {
            let t = Telemetry::open().unwrap();
            let samples = t.read().unwrap();
            assert_eq!(samples.len(), memory.gpus.len());
            for (s, g) in samples.iter().zip(&memory.gpus) {
                assert_eq!((s.index, &s.uuid), (g.index, &g.uuid));
            }
        }
    }
}

#[test]
fn a_missing_nvidia_smi_is_unavailable_with_why() {
    let r = nvidia_smi::read("/nonexistent/nvidia-smi");
    assert_eq!(r.source, ReadingSource::NvidiaSmi);
    assert!(r.gpus.is_empty());
    let why = r.unavailable.unwrap();
    assert!(
        why.starts_with("cannot run /nonexistent/nvidia-smi ("),
        "{why}"
    );
}

#[test]
fn the_machine_read_once_says_what_it_measured_from() {
    let m = MachineReadings::read("/nonexistent/nvidia-smi");
    assert!(m.nvidia_smi.unavailable.is_some());
    if m.nvml.gpus.is_empty() {
        assert_eq!(m.measured_from, None);
        assert!(m.nvml.unavailable.is_some(), "{m:?}");
        assert!(m.facts.is_empty() && m.container_names.is_empty());
    } else {
        assert_eq!(m.measured_from.as_deref(), Some("nvml"));
    }
    assert_eq!(m.primary().source, ReadingSource::Nvml);
}
