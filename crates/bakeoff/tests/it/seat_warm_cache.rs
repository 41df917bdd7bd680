//! Warm or cold, on purpose (docs/metrics.md "Conditions"), through the real binary and the real
//! llama-server: a seat whose model file was dropped from the page cache
//! (`posix_fadvise(DONTNEED)`) records a cold start; `seat up --warm-cache` reads the file first
//! and records a warm start, with the read's bytes and the residency before the start.
//!
//! The model is a private copy in the test's directory: DONTNEED drops only pages no process
//! maps, and other tests' llama-servers map the shared test model.

use std::path::Path;

use crate::util::{self, code, drop_from_cache, free_port, stdout};

fn bakeoff(args: &[&str]) -> (i32, String, String) {
    let o = util::bakeoff(args);
    (
        code(&o),
        stdout(&o),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn start_record(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(".bakeoff-seats/w.seat.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_dropped_model_loads_cold_and_warm_cache_loads_it_warm() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("model.gguf");
    std::fs::copy(bakeoff_testkit::model_path(), &model).unwrap();
    let size = std::fs::metadata(&model).unwrap().len();
    let e = bakeoff_testkit::engine();
    let header = bakeoff_testkit::fleet::seat_header("w", "llama.cpp", "bench", free_port(), "m");
    let toml = format!(
        r#"{header}[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "512", "-np", "1", "--alias", "m"]
"#,
        bin = e.llama_server.display(),
        model = model.display()
    );
    let f = dir.path().join("fleet.toml");
    std::fs::write(&f, toml).unwrap();
    let f = f.display().to_string();
    let up = |extra: &[&str]| {
        let mut args = vec![
            "seat",
            "up",
            "--fleet",
            f.as_str(),
            "w",
            "--silence-timeout",
            "60",
        ];
        args.extend_from_slice(extra);
        let (c, out, err) = bakeoff(&args);
        let (dc, _, derr) = bakeoff(&["seat", "down", "--fleet", &f, "w"]);
        assert_eq!(c, 0, "{out}{err}");
        assert_eq!(dc, 0, "{derr}");
        (start_record(dir.path()), out)
    };

    // Cold: the copy's pages dropped, nothing reads it before the start.
    drop_from_cache(&model);
    let (cold, out) = up(&[]);
    // The terminal says it too, and ends with the load's conditions.
    assert!(
        out.contains("page cache before the start: cold (") && out.contains("resident, fincore"),
        "{out}"
    );
    assert!(
        out.lines()
            .last()
            .is_some_and(|l| l.trim_start().starts_with("conditions: ")),
        "{out}"
    );
    let pc = &cold["page_cache"];
    eprintln!("cold: load {} page_cache {pc}", cold["load"]);
    assert_eq!(pc["state"], "cold", "{pc}");
    assert_eq!(pc["method"], "fincore", "{pc}");
    assert_eq!(
        pc["files"],
        serde_json::json!([model.display().to_string()])
    );
    assert_eq!(pc["weight_bytes"], size);
    assert!(
        pc["resident_before_bytes"].as_u64().unwrap() * 10 <= size,
        "{pc}"
    );
    assert!(pc["cached_before_bytes"].is_u64() && pc["cached_after_bytes"].is_u64());
    assert!(pc.get("warmed").is_none(), "{pc}");

    // Warm on purpose: dropped again, then --warm-cache reads it whole before the start.
    drop_from_cache(&model);
    let (warm, out) = up(&["--warm-cache"]);
    assert!(
        out.contains("page cache before the start: warm (--warm-cache read "),
        "{out}"
    );
    let pc = &warm["page_cache"];
    eprintln!("warm: load {} page_cache {pc}", warm["load"]);
    assert_eq!(pc["state"], "warm", "{pc}");
    assert_eq!(pc["method"], "fincore", "{pc}");
    assert_eq!(pc["warmed"]["bytes"], size, "{pc}");
    assert!(pc["warmed"]["seconds"].is_f64(), "{pc}");
    assert!(
        pc["resident_before_bytes"].as_u64().unwrap() * 10 >= size * 9,
        "{pc}"
    );
}
