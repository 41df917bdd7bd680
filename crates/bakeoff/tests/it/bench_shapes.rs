//! (docs/metrics.md) against the real llama-server (CPU, the test model): the engine's
//! gauges sampled through every step and the likely limit they name, drawn in the HTML report;
//! and the load shapes — a ramp-up left out of the step, gamma arrivals, and cancellations
//! reconciled with the server's own counter. Asserts the instrument, never a speed.

use bakeoff_testkit::real_llama;
use serde_json::Value;

use crate::util::{bakeoff, serial_tempdir, text, valid_artifact};

fn steps(v: &Value) -> &Vec<Value> {
    v["load"]["throughput"]["steps"].as_array().unwrap()
}

/// `-np 2` driven at c = 1 and c = 4: every step has its series of `/metrics` gauges, and at
/// c = 4 two requests wait for a slot the whole step through, so the capacity finding names
/// the queue — from c = 4, with both slots busy (`/slots` tells how many there are).
#[tokio::test]
async fn gauges_through_each_step_name_the_queue_past_the_slots() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(4096, 2, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--concurrency",
        "1,4",
        "--requests",
        "8",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "48",
        "--warmup",
        "1",
        "--gauge-interval",
        "0.2",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    for s in steps(&v) {
        let g = &s["gauges"];
        assert_eq!(g["source"], "llamacpp /metrics", "{g}");
        assert_eq!(g["names"]["waiting"], "llamacpp:requests_deferred", "{g}");
        assert_eq!(g["names"]["running"], "llamacpp:requests_processing", "{g}");
        assert_eq!(g["summary"]["slots"]["peak"], 2.0, "{g}");
        let samples = g["samples"].as_array().unwrap();
        assert!(samples.len() >= 2, "{g}");
        // Timestamps rise; every sample has values or the reason it has none.
        for w in samples.windows(2) {
            assert!(w[0]["t_s"].as_f64() < w[1]["t_s"].as_f64(), "{g}");
        }
        for x in samples {
            assert!(x["values"].is_object() || x["error"].is_string(), "{x}");
        }
        eprintln!("{}: {}", s["label"], g["summary"]);
    }
    let c1 = &steps(&v)[0]["gauges"]["summary"];
    assert_eq!(c1["waiting"]["peak"], 0.0, "one request never waits: {c1}");
    let c4 = &steps(&v)[1]["gauges"]["summary"];
    assert_eq!(c4["running"]["peak"], 2.0, "{c4}");
    assert!(c4["waiting"]["peak"].as_f64().unwrap() >= 1.0, "{c4}");
    let cap = &v["load"]["throughput"]["capacity"];
    assert_eq!(cap["limit"]["kind"], "queue", "{cap}");
    assert_eq!(cap["limit"]["from_label"], "c=4", "{cap}");
    let st = cap["statement"].as_str().unwrap();
    assert!(
        st.contains("gauges: requests queue inside the step") && st.contains("all 2 slots busy"),
        "{st}"
    );
    eprintln!("capacity: {st}");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("requests queue inside the step"), "{table}");
    // The HTML report draws each step's series.
    let r = bakeoff(&["report", out.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("Engine gauges through each step"),
        "no gauge section"
    );
    assert!(html.contains("c=1: requests (llamacpp /metrics") && html.contains("c=4: requests"));
}

/// Cancellations against the real llama-server: half the requests, drawn by the seed, are
/// aborted mid-stream; the step counts them apart from its completions, and the server's
/// generated-token counter is reconciled with what the clients received. Then an open-loop
/// step with gamma arrivals and a ramp-up: the ramp's requests are counted apart and left out.
#[tokio::test]
async fn cancellations_and_a_ramp_up_on_the_real_llama_server() {
    let (_g, dir) = serial_tempdir().await;
    let server = real_llama(8192, 4, &["--metrics"], dir.path()).await;
    let out = dir.path().join("out");
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--concurrency",
        "2",
        "--requests",
        "12",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "32",
        "--warmup",
        "1",
        "--cancel-rate",
        "0.5",
        "--seed",
        "3",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let s = &steps(&v)[0];
    let c = &s["cancellations"];
    eprintln!("cancellations: {c}\nmetrics: {}", s["metrics"]);
    // The draws are the seed's: the same ones the library makes.
    let mut plan = bakeoff_load::LoadPlan::new("m");
    plan.seed = 3;
    plan.cancel_rate = 0.5;
    let planned = (0..12)
        .filter(|i| bakeoff_load::shapes::abort_point(&plan, 1, *i, 32).is_some())
        .count() as u64;
    assert_eq!(c["planned"], planned, "{c}");
    let cancelled = c["cancelled"].as_u64().unwrap();
    assert!(cancelled > 0, "{c}");
    assert_eq!(cancelled + c["finished_first"].as_u64().unwrap(), planned);
    assert_eq!(s["sent"], 12);
    assert_eq!(s["ok"].as_u64().unwrap() + cancelled, 12, "{s}");
    let aborted: Vec<&Value> = s["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["cancelled_after"].is_u64())
        .collect();
    assert_eq!(aborted.len() as u64, cancelled);
    for q in &aborted {
        let (got, point) = (
            q["chunks"].as_u64().unwrap(),
            q["cancelled_after"].as_u64().unwrap(),
        );
        assert!(got >= point && got < 32, "aborted mid-stream: {q}");
    }
    // The server counted the cancelled requests' tokens: at least what the clients received,
    // and the client/server ratio counts them on the client's side.
    let received = c["tokens_received"].as_f64().unwrap();
    let counted = c["server_tokens"].as_f64().expect("--metrics is on");
    assert!(counted >= received, "{c}");
    let ratio = s["metrics"]["client_server_token_ratio"].as_f64().unwrap();
    assert!(ratio > 0.8 && ratio <= 1.0, "{ratio}: {c}");

    // Open loop: gamma arrivals of shape 0.5 after a 2 s ramp-up.
    let out2 = dir.path().join("out2");
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--rate",
        "4",
        "--arrival",
        "gamma",
        "--burstiness",
        "0.5",
        "--ramp-up",
        "2",
        "--requests",
        "6",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "16",
        "--warmup",
        "0",
        "--no-calibrate",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out2, "-bench.bakeoff.json");
    let s = &steps(&v)[0];
    assert_eq!(s["label"], "gamma k=0.5 4/s");
    assert_eq!(
        v["load"]["throughput"]["plan"]["mode"]["open"]["burstiness"],
        0.5
    );
    let want = bakeoff_load::schedule::ramp_offsets(
        bakeoff_load::Arrival::Gamma { burstiness: 0.5 },
        4.0,
        std::time::Duration::from_secs(2),
        1 ^ 1,
    )
    .len() as u64;
    let ramp = &s["ramp_up"];
    eprintln!("ramp: {ramp}");
    assert_eq!(ramp["seconds"], 2.0);
    assert_eq!(ramp["sent"], want, "{ramp}");
    assert_eq!(ramp["ok"], want, "{ramp}");
    // The measured window holds the six measured requests only, from its own origin.
    assert_eq!((s["sent"].as_u64(), s["ok"].as_u64()), (Some(6), Some(6)));
    // Records are kept in completion order: the first intended send is request 0's, at 0.
    let first = s["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["i"] == 0)
        .unwrap();
    assert_eq!(first["intended_ms"], 0.0, "{first}");
    // The server counted the ramp's tokens too; they join the client's side.
    assert_eq!(
        s["metrics"]["client_server_token_ratio"], 1.0,
        "{}",
        s["metrics"]
    );
    assert!(
        s["gauges"]["measured_from_s"].as_f64() == Some(2.0),
        "{}",
        s["gauges"]
    );
}

/// Without `--metrics` llama-server answers `/metrics` with 501; its `/slots` (on by default)
/// still gives the slots busy and in all. An endpoint with neither (the loopback target) is
/// sampled once, the reason recorded, and the step measured as ever.
#[tokio::test]
async fn gauges_fall_back_to_slots_and_stop_where_there_are_none() {
    let (_g, dir) = serial_tempdir().await;
    // The testkit's server always has --metrics: this one is started bare.
    let server = BareLlama::start(dir.path());
    let out = dir.path().join("out");
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &server.url(),
        "--concurrency",
        "2",
        "--requests",
        "4",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "32",
        "--warmup",
        "0",
        "--gauge-interval",
        "0.2",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let g = &steps(&v)[0]["gauges"];
    assert_eq!(g["source"], "llama.cpp /slots", "{g}");
    assert_eq!(g["summary"]["slots"]["peak"], 2.0, "{g}");
    assert_eq!(g["summary"]["running"]["peak"], 2.0, "{g}");
    assert!(g["names"].get("waiting").is_none(), "{g}");
    drop(server);

    let target = bakeoff_load::CalibrationTarget::start().await.unwrap();
    let out = dir.path().join("loop");
    let o = crate::util::bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        &target.url(),
        "--concurrency",
        "1",
        "--requests",
        "4",
        "--output-tokens",
        "8",
        "--no-calibrate",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    let s = &steps(&v)[0];
    assert_eq!(s["ok"], 4);
    let g = &s["gauges"];
    assert_eq!(g["source"], "unavailable", "{g}");
    assert_eq!(
        (g["failed"].as_u64(), g["samples"].as_array().map(Vec::len)),
        (Some(1), Some(1)),
        "{g}"
    );
    assert!(
        g["samples"][0]["error"]
            .as_str()
            .unwrap()
            .contains("no engine gauges"),
        "{g}"
    );
    assert!(v["load"]["throughput"]["capacity"]["limit"].is_null());
}

/// llama-server as an operator starts it, without `--metrics` (`-c 4096 -np 2`, the test model),
/// killed on drop.
struct BareLlama {
    child: std::process::Child,
    port: u16,
}

impl BareLlama {
    fn start(log_dir: &std::path::Path) -> Self {
        use std::io::{Read, Write};
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let e = bakeoff_testkit::engine();
        let log = std::fs::File::create(log_dir.join("bare-llama.log")).unwrap();
        let child = std::process::Command::new(&e.llama_server)
            .args(["-m", e.model.to_str().unwrap(), "-c", "4096", "-np", "2"])
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-a", "gemma-3-270m-q4_k_m"])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let s = Self { child, port };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let healthy = std::net::TcpStream::connect(("127.0.0.1", port))
                .and_then(|mut c| {
                    c.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
                    c.write_all(b"GET /health HTTP/1.0\r\nHost: x\r\n\r\n")?;
                    let mut r = String::new();
                    let _ = c.read_to_string(&mut r);
                    Ok(r.starts_with("HTTP/1.1 200") || r.starts_with("HTTP/1.0 200"))
                })
                .unwrap_or(false);
            if healthy {
                return s;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "bare llama-server never healthy"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for BareLlama {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
