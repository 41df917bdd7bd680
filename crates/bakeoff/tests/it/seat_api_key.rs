//! A seat whose engine requires an API key (llama-server `--api-key`), through the real binary
//! and the real llama-server: without `api_key_env` the readiness probes' 401s end the watch at
//! once as `auth-failed`, naming the fix, not as `not-ready` after the whole ready timeout;
//! with `api_key_env` naming an unset variable, the remedy says so; with it exported, the seat
//! comes up and `seat status` probes it. The key reaches no file bakeoff writes.

use crate::util::Bounded;
use std::path::Path;
use std::process::Output;

use crate::util::{bakeoff_cmd, code, free_port, text};

const KEY: &str = "sk-test-key-9f3a7c";

fn fleet(dir: &Path, port: u16, key_env: Option<&str>) -> String {
    let e = bakeoff_testkit::engine();
    let header = bakeoff_testkit::fleet::seat_header("k", "llama.cpp", "bench", port, "m");
    let key_line = key_env
        .map(|n| format!("api_key_env = \"{n}\"\n"))
        .unwrap_or_default();
    let toml = format!(
        r#"{header}{key_line}[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "512", "-np", "1", "--alias", "m", "--api-key", "{KEY}"]
"#,
        bin = e.llama_server.display(),
        model = bakeoff_testkit::model_path().display()
    );
    let f = dir.join("fleet.toml");
    std::fs::write(&f, toml).unwrap();
    f.display().to_string()
}

fn run(args: &[&str], env: Option<(&str, &str)>) -> Output {
    let mut c = bakeoff_cmd();
    c.env_remove("BAKEOFF_API_KEY").args(args);
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    c.output_bounded().unwrap()
}

/// Every file under `dir` bakeoff wrote, none holding the key.
fn assert_no_key_in(dir: &Path) {
    for e in walk(dir) {
        let bytes = std::fs::read(&e).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} holds the key",
            e.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.file_name().is_some_and(|n| n != "fleet.toml") {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_keyed_seat_fails_as_auth_failed_without_its_key_and_comes_up_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let _guard = bakeoff_testkit::fleet::SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let port = free_port();
    let up = [
        "seat",
        "up",
        "k",
        "--silence-timeout",
        "60",
        "--ready-timeout",
        "300",
    ];

    // No api_key_env: the 401s end the watch as auth-failed, with the fix.
    let f = fleet(dir.path(), port, None);
    let o = run(&[&up[..], &["--fleet", &f]].concat(), None);
    assert_ne!(code(&o), 0, "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("[auth-failed]"), "{t}");
    assert!(t.contains("api_key_env"), "{t}");
    assert!(!t.contains("[not-ready]"), "{t}");
    let _ = run(&["seat", "down", "k", "--fleet", &f], None);

    // api_key_env names a variable that is not set: the remedy says which.
    let f = fleet(dir.path(), port, Some("BK_TEST_SEAT_KEY"));
    let o = run(&[&up[..], &["--fleet", &f]].concat(), None);
    assert_ne!(code(&o), 0, "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("[auth-failed]"), "{t}");
    assert!(
        t.contains("BK_TEST_SEAT_KEY") && t.contains("not set"),
        "{t}"
    );
    let _ = run(&["seat", "down", "k", "--fleet", &f], None);

    // Exported: ready, and `seat status` probes it with the key.
    let env = Some(("BK_TEST_SEAT_KEY", KEY));
    let o = run(&[&up[..], &["--fleet", &f]].concat(), env);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let st = run(&["seat", "status", "--fleet", &f, "--probe", "--json"], env);
    assert_eq!(code(&st), 0, "{}", text(&st));
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    let s = &v["seats"][0];
    assert_eq!(
        s["serving"], true,
        "the probe with the key did not serve: {s}"
    );
    // `seat monitor` probes it with the key too: its probes succeed.
    let mon = dir.path().join("mon");
    let m = run(
        &[
            "seat",
            "monitor",
            "--fleet",
            &f,
            "--interval",
            "1",
            "--duration",
            "2",
            "--out",
            mon.to_str().unwrap(),
        ],
        env,
    );
    assert_eq!(code(&m), 0, "{}", text(&m));
    let series = std::fs::read_to_string(mon.join("fleet.monitor.jsonl")).unwrap();
    let probes: Vec<serde_json::Value> = series
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .flat_map(|v| {
            let mut found = Vec::new();
            collect_probes(&v, &mut found);
            found
        })
        .collect();
    assert!(!probes.is_empty(), "no probe in {series}");
    assert!(probes.iter().all(|p| p["ok"] == true), "{series}");
    let down = run(&["seat", "down", "k", "--fleet", &f], env);
    assert_eq!(code(&down), 0, "{}", text(&down));
    assert_no_key_in(dir.path());
}

/// Every `probe` object anywhere in a monitor record.
fn collect_probes(v: &serde_json::Value, out: &mut Vec<serde_json::Value>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if k == "probe" && x.is_object() {
                    out.push(x.clone());
                }
                collect_probes(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_probes(x, out)),
        _ => {}
    }
}
