//! Placement checks at `seat up` through the real binary (docs/scale-out.md): a seat's GPU ids must
//! exist on its host (refused at parse), and a seat whose claim does not fit beside the seats
//! already up on its GPU is refused with `plan --coexist`'s arithmetic, per host. The seats are
//! the real llama-server on this GPU-less machine, declared as vLLM seats on GPU 0 of a host
//! whose card size the fleet file gives (`gpu_memory_gib`): a vLLM claim is
//! `gpu_memory_utilization × total`, whatever process answers on the port.

use std::path::Path;

use crate::util::{self, code, free_port, stdout};

fn bakeoff(args: &[&str]) -> (i32, String, String) {
    let o = util::bakeoff(args);
    (
        code(&o),
        stdout(&o),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A seat claiming `util` of GPU `gpu` of host `local`.
fn seat(name: &str, port: u16, util: f64, gpu: &str) -> String {
    let e = bakeoff_testkit::engine();
    let header = bakeoff_testkit::fleet::seat_header(name, "vllm", "bench", port, "gemma-3-270m");
    format!(
        r#"{header}gpu_memory_utilization = {util}
stop_timeout_s = 5
[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "512", "-np", "1", "--alias", "gemma-3-270m"]
env = {{ CUDA_VISIBLE_DEVICES = "{gpu}" }}
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

const HOST: &str = "[hosts.local]\ngpus = 1\ngpu_memory_gib = 24\n\n";

#[test]
fn a_gpu_id_the_host_does_not_have_is_refused_at_parse() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        &format!("{HOST}{}", seat("far", free_port(), 0.5, "1")),
    );
    let (code, out, err) = bakeoff(&["seat", "status", "--fleet", &f]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("GPU 1 is not on host \"local\"") && err.contains("gpus = 1"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[tokio::test]
async fn a_claim_that_does_not_fit_beside_a_running_seat_is_refused_with_the_arithmetic() {
    let (_g, dir) = util::serial_tempdir().await;
    let _seats = bakeoff_testkit::fleet::SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let f = write(
        dir.path(),
        &format!(
            "{HOST}{}{}{}",
            seat("first", free_port(), 0.6, "0"),
            seat("greedy", free_port(), 0.6, "0"),
            seat("modest", free_port(), 0.2, "0"),
        ),
    );
    let args = |verb: &'static str, name: &'static str| {
        let f = f.clone();
        move || bakeoff(&["seat", verb, "--fleet", &f, name, "--silence-timeout", "30"])
    };
    let (c, out, err) = tokio::task::spawn_blocking(args("up", "first"))
        .await
        .unwrap();
    assert_eq!(c, 0, "{out}{err}");

    // 0.6 × 24 GiB beside 0.6 × 24 GiB on one 24 GiB card: NO, with the arithmetic, and
    // nothing started.
    let (c, out, err) = tokio::task::spawn_blocking(args("up", "greedy"))
        .await
        .unwrap();
    assert_eq!(c, 1, "{out}{err}");
    assert!(
        err.contains("greedy does not fit beside first on host local"),
        "{err}"
    );
    assert!(err.contains("NO"), "the arithmetic: {err}");
    assert!(
        !dir.path()
            .join(".bakeoff-seats/greedy.process.json")
            .exists(),
        "nothing was started"
    );

    // 0.2 × 24 GiB (plus the CUDA context and graphs outside the budget) fits beside it.
    let (c, out, err) = tokio::task::spawn_blocking(args("up", "modest"))
        .await
        .unwrap();
    assert_eq!(c, 0, "{out}{err}");

    let (c, out, err) = bakeoff(&["seat", "down", "--fleet", &f, "--all"]);
    assert_eq!(c, 0, "{out}{err}");
}
