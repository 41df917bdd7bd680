//! `bakeoff seat …` through the real binary: the fail-closed `--confirm` gate, status with
//! aliases grouped under their seat, and a process seat with the real llama-server up, swapped
//! to a second seat on the same port, and down. Docker seats are exercised against the real
//! engine in crates/bakeoff-seats/tests/docker_backend.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

fn bakeoff(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bakeoff"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn seat(name: &str, role: &str, port: u16) -> String {
    let e = bakeoff_testkit::engine();
    format!(
        r#"
[[seat]]
name = "{name}"
engine = "llama.cpp"
role = "{role}"
port = {port}
served_model_names = ["gemma-3-270m"]
[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1", "--alias", "gemma-3-270m"]
"#,
        bin = e.llama_server.display(),
        model = e.model.display()
    )
}

fn write(dir: &Path, toml: &str) -> String {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, toml).unwrap();
    p.display().to_string()
}

#[test]
fn production_seat_refuses_without_confirm() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), &seat("prod", "production", free_port()));
    for verb in [vec!["up"], vec!["down"], vec!["restart", "prod"]] {
        let mut args = vec!["seat"];
        args.extend(verb.iter().copied());
        args.extend(["--fleet", &f]);
        let (code, out, err) = bakeoff(&args);
        assert_eq!(code, 1, "{verb:?}: {out}{err}");
        assert!(out.contains("--confirm") && out.contains("Would:"), "{out}");
        assert!(err.contains("nothing was done"), "{err}");
    }
    // Nothing was started: no pid file.
    assert!(!dir.path().join(".bakeoff-seats/prod.process.json").exists());
    let (code, out, _) = bakeoff(&["seat", "swap", "--fleet", &f, "prod", "prod"]);
    assert_eq!(code, 1, "{out}");
}

#[test]
fn status_groups_aliases_under_their_seat_and_bad_fleets_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let toml = format!(
        "{}\n[[route]]\nalias = \"char-rp\"\napi_base = \"http://127.0.0.1:{port}/v1\"\n\n[[route]]\nalias = \"char-rp-reasoning\"\nseat = \"one\"\n",
        seat("one", "bench", port)
    );
    let f = write(dir.path(), &toml);
    let (code, out, err) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["seats"][0]["aliases"],
        serde_json::json!(["char-rp", "char-rp-reasoning"])
    );
    assert_eq!(v["seats"][0]["state"], "down");
    let bad = write(dir.path(), "[[seat]]\nname = \"x\"\n");
    let (code, _, err) = bakeoff(&["seat", "status", "--fleet", &bad]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
}

#[test]
fn process_seat_up_swap_down_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let f = write(
        dir.path(),
        &format!("{}{}", seat("a", "bench", port), seat("b", "bench", port)),
    );
    let (code, out, err) = bakeoff(&["seat", "up", "--fleet", &f, "a", "--silence-timeout", "60"]);
    let cleanup = |names: &[&str]| {
        for n in names {
            let _ = bakeoff(&["seat", "down", "--fleet", &f, n]);
        }
    };
    if code != 0 {
        cleanup(&["a", "b"]);
    }
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("a: READY in"), "{out}");
    // b shares the port: refused while a is up.
    let (code, _, err) = bakeoff(&["seat", "up", "--fleet", &f, "b"]);
    assert_eq!(code, 1);
    assert!(err.contains("seat swap a b"), "{err}");
    let (code, out, err) = bakeoff(&["seat", "swap", "--fleet", &f, "a", "b", "--json"]);
    if code != 0 {
        cleanup(&["a", "b"]);
    }
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["new_outcome"]["state"], "ready");
    assert!(v["rollback"].is_null());
    let (code, out, _) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"][0]["state"], "down");
    assert_eq!(v["seats"][1]["state"], "running");
    let (code, out, _) = bakeoff(&["seat", "logs", "--fleet", &f, "b", "--tail", "500"]);
    assert_eq!(code, 0);
    assert!(out.contains("listening on"), "{out}");
    let (code, _, err) = bakeoff(&["seat", "down", "--fleet", &f, "b"]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = bakeoff(&["seat", "status", "--fleet", &f, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["seats"][1]["state"], "down");
}
