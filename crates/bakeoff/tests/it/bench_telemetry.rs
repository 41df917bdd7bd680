//! GPU telemetry per bench step (docs/metrics.md "GPU telemetry and tokens per
//! joule") through the real binary against the real llama-server (CPU, the test model). This
//! machine has no NVIDIA driver: every step records `gpu_telemetry` as unavailable, with why,
//! and the sweep table keeps its columns and says why in one line. On a host with the driver the
//! same run must carry figures instead (checked too, so the test stays true there).

use crate::util::Bounded;
use crate::util::{bench_quick, serial_tempdir, text, valid_artifact};
use bakeoff_testkit::real_llama;

#[tokio::test]
async fn every_bench_step_records_gpu_telemetry_or_why_not() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 2, &[], dir.path()).await;
    let out = dir.path().join("out");
    let o = bench_quick(
        &server.url(),
        &out,
        &[
            "--concurrency",
            "1,2",
            "--requests",
            "2",
            "--prompt-tokens",
            "16",
            "--output-tokens",
            "8",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let steps = v["load"]["throughput"]["steps"].as_array().unwrap().clone();
    assert_eq!(steps.len(), 2);
    let driver = std::path::Path::new("/proc/driver/nvidia").exists();
    for s in &steps {
        let t = &s["gpu_telemetry"];
        assert!(t.is_object(), "no gpu_telemetry on {}", s["label"]);
        match t["unavailable"].as_str() {
            Some(why) => {
                assert!(!driver, "a driver is here, yet: {why}");
                assert!(why.starts_with("unavailable (no NVML)"), "{why}");
                assert!(why.contains("NVML did not initialize"), "{why}");
                assert!(t.get("output_tokens_per_joule").is_none(), "{t}");
                assert!(t.get("energy_j").is_none(), "{t}");
            }
            None => {
                // A GPU host: figures, their source, and which GPUs they cover.
                assert!(["nvml", "nvidia-smi"].contains(&t["source"].as_str().unwrap()));
                assert!(t["power_w_mean"].as_f64().unwrap() > 0.0, "{t}");
                assert!(
                    t["scope"].is_string() && t["scope_detail"].is_string(),
                    "{t}"
                );
                assert!(t["energy_method"].is_string(), "{t}");
            }
        }
    }
    if steps[0]["gpu_telemetry"]["unavailable"].is_string() {
        assert!(
            table.contains("GPU telemetry: unavailable (no NVML)"),
            "{table}"
        );
        assert!(
            !table.contains("tok/J") && !table.contains("power W"),
            "{table}"
        );
    } else {
        assert!(table.contains("tok/J"), "{table}");
    }
    assert!(steps.iter().all(|s| s["ok"] == 2), "{steps:?}");
}

/// The nvidia-smi fallback through the real binary: a stand-in nvidia-smi on PATH
/// (`crates/bakeoff-conditions/tests/fixtures/nvidia-smi-power`: two GPUs, 350.5 W and 70 W,
/// its only compute process pid 5159) while NVML cannot load. The real engine holds memory on
/// none of the stand-in's GPUs, so every GPU counts and the artifact says so; the energy is
/// integrated power, marked as such; the table gains the power and tok/J columns.
#[tokio::test]
async fn without_nvml_the_nvidia_smi_fallback_integrates_power() {
    if std::path::Path::new("/proc/driver/nvidia").exists() {
        eprintln!("a real driver is here: the stand-in would not be used");
        return;
    }
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 2, &[], dir.path()).await;
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(
        crate::util::root().join("crates/bakeoff-conditions/tests/fixtures/nvidia-smi-power"),
        bin.join("nvidia-smi"),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = dir.path().join("out");
    let o = crate::util::bakeoff_cmd()
        .env("PATH", path)
        .env("COLUMNS", "400")
        .args([
            "bench",
            "run",
            "--endpoint",
            &server.url(),
            "--concurrency",
            "1",
            "--requests",
            "2",
            "--prompt-tokens",
            "16",
            "--output-tokens",
            "8",
            "--warmup",
            "0",
            "--no-calibrate",
            "--out",
            out.to_str().unwrap(),
        ])
        .output_bounded()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let t = &v["load"]["throughput"]["steps"][0]["gpu_telemetry"];
    assert_eq!(t["source"], "nvidia-smi", "{t}");
    assert!(t.get("unavailable").is_none(), "{t}");
    assert_eq!(t["scope"], "all-gpus", "{t}");
    assert!(
        t["scope_detail"].as_str().unwrap().contains("all GPUs"),
        "{t}"
    );
    assert_eq!(t["energy_method"], "integrated-power", "{t}");
    assert_eq!(t["power_w_max"], 420.5, "{t}");
    let j = t["energy_j"].as_f64().unwrap();
    let tokens = v["load"]["throughput"]["steps"][0]["output_tokens"]
        .as_f64()
        .unwrap();
    assert_eq!(t["output_tokens_per_joule"].as_f64().unwrap(), tokens / j);
    assert_eq!(t["gpus"].as_array().unwrap().len(), 2, "{t}");
    assert!(
        table.contains("power W") && table.contains("tok/J"),
        "{table}"
    );
    assert!(table.contains("power integrated (estimate)"), "{table}");
}
