//! `cargo run --release -p bakeoff-load --bin harness-bench` (bench/harness_bench.rs) — the harness's own speed, as JSON
//! (docs/performance.md). Never a test: timings belong here, not in assertions.
//!
//! The calibration target runs in a child process (this binary with `--serve-target`), so the
//! client process is measured alone: one tokio worker thread (one client core; the open-loop
//! phase adds the dispatcher thread, which sleeps between sends), its own RSS, its
//! own file descriptors (10,000 streams need 10,000 sockets; the soft RLIMIT_NOFILE is raised to
//! the hard limit, as oha does).
//!
//! Figures:
//! 1. streamed tokens/s on one client core (closed loop, 1024-token streams);
//! 2. concurrent streams held open at once (paced streams), and the client's peak RSS;
//! 3. Poisson arrivals requested at 2,000 req/s: achieved rate and p99 send lateness.
//!
//! `--tls-cost`: instead, the harness's CPU per streamed token over TLS against plain HTTP
//! (docs/performance.md "TLS"): the same target, once over plain TCP and once over TLS (a test
//! CA and certificate made with the openssl CLI), closed loop, 1024-token streams at c = 16 and
//! one-token requests at c = 32; the client process's CPU time (every thread's
//! `/proc/self/task/*/schedstat`) over the tokens it streamed.
//!
//! `--sessions N`: instead, N concurrent agent sessions with log-normal tool waits against the
//! same target; the send lateness of the turns after a wait, and the client's peak RSS
//! (bench/harness_bench_sessions.rs).
//!
//! `--gauge-cost URL [--interval SECS]`: instead, the CPU the engine-gauge sampler of `bench
//! run` spends against a real engine at `URL` over `--seconds` (bench/harness_bench_gauges.rs).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use bakeoff_load::calibrate::{self, CalibrationTarget};
use bakeoff_load::{Arrival, LoadPlan, Mode, NoProgress, StepBound};

#[path = "harness_bench_gauges.rs"]
mod gauge_cost;
#[path = "harness_bench_sessions.rs"]
mod sessions;
#[path = "harness_bench_tls.rs"]
mod tls_cost;

fn raise_nofile() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut l = getrlimit(Resource::Nofile);
    if let Some(max) = l.maximum {
        l.current = Some(max);
    }
    let _ = setrlimit(Resource::Nofile, l);
    getrlimit(Resource::Nofile).current
}

fn arg_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().collect();
    raise_nofile();
    if args.iter().any(|a| a == "--serve-target") {
        let tls = arg_value(&args, "--tls-cert").zip(arg_value(&args, "--tls-key"));
        return serve_target(tls);
    }
    let streams: u32 = arg_value(&args, "--streams")
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let rate: f64 = arg_value(&args, "--rate")
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000.0);
    let secs: u64 = arg_value(&args, "--seconds")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let result = if let Some(url) = arg_value(&args, "--gauge-cost") {
        let interval: f64 = arg_value(&args, "--interval")
            .and_then(|v| v.parse().ok())
            .filter(|v: &f64| v.is_finite() && *v >= 0.05)
            .unwrap_or(1.0);
        gauge_cost::run(&url, secs, Duration::from_secs_f64(interval))
    } else if let Some(n) = arg_value(&args, "--sessions").and_then(|v| v.parse().ok()) {
        sessions::run(n, secs.max(20))
    } else if args.iter().any(|a| a == "--tls-cost") {
        tls_cost::run(secs)
    } else {
        bench(streams, rate, secs)
    };
    match result {
        Ok(v) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Child: serve the target on a multi-thread runtime and print its address (over TLS with
/// `--tls-cert PEM --tls-key PEM`).
fn serve_target(tls: Option<(String, String)>) -> std::process::ExitCode {
    let Ok(rt) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        return std::process::ExitCode::FAILURE;
    };
    rt.block_on(async {
        let _held;
        if let Some((cert, key)) = tls {
            let acceptor = match calibrate::tls_acceptor(cert.as_ref(), key.as_ref()) {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("error: {e}");
                    return;
                }
            };
            let Ok(l) = tokio::net::TcpListener::bind("127.0.0.1:0").await else {
                return;
            };
            let Ok(addr) = l.local_addr() else {
                return;
            };
            _held = tokio::spawn(calibrate::serve_tls(l, acceptor));
            println!("https://{addr}");
        } else {
            let Ok(t) = CalibrationTarget::start().await else {
                return;
            };
            println!("{}", t.url());
            _held = tokio::spawn(async move {
                let _t = t;
                std::future::pending::<()>().await
            });
        }
        let _ = std::io::stdout().flush();
        // Serve until the parent closes our stdin.
        let _ = tokio::task::spawn_blocking(|| {
            let mut s = String::new();
            let _ = std::io::stdin().read_line(&mut s);
        })
        .await;
    });
    std::process::ExitCode::SUCCESS
}

fn client(url: &str) -> Result<Client, String> {
    let u = EndpointUrl::parse(url).map_err(|e| e.to_string())?;
    Ok(Client::new(
        u,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(30),
                first_byte: Duration::from_secs(60),
                idle: Duration::from_secs(60),
                total: Duration::from_secs(300),
            },
            api_key: None,
            ..Default::default()
        },
    ))
}

fn plan(c: u32, tokens: u32, bound: StepBound) -> LoadPlan {
    let mut p = calibrate::calib_plan(c, tokens, bound);
    p.keep_requests = false;
    p
}

/// This binary as the target, in a child process (`extra`: its TLS flags); the child and the
/// URL it serves.
fn spawn_target(extra: &[&str]) -> Result<(std::process::Child, String), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("--serve-target")
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the target process: {e}"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
    }
    let url = line.trim().to_string();
    if url.is_empty() {
        let _ = child.kill();
        return Err("the target process printed no address".into());
    }
    Ok((child, url))
}

fn bench(streams: u32, rate: f64, secs: u64) -> Result<serde_json::Value, String> {
    let (mut child, url) = spawn_target(&[])?;
    // One client core: a current-thread runtime.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let result = rt.block_on(run_all(&url, streams, rate, secs));
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
    result
}

async fn run_all(
    url: &str,
    streams: u32,
    rate: f64,
    secs: u64,
) -> Result<serde_json::Value, String> {
    let c = client(url)?;
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let np: Arc<NoProgress> = Arc::new(NoProgress);
    let timed = StepBound {
        requests: None,
        duration: Some(Duration::from_secs(secs)),
        completed: None,
    };

    // 1. Streamed tokens per second, one core.
    let mut tok = serde_json::Map::new();
    for conc in [16u32, 64] {
        let r = bakeoff_load::run(&c, &plan(conc, 1024, timed), np.clone(), rx.clone())
            .await
            .map_err(|e| e.to_string())?;
        let s = r.steps.first().ok_or("no step")?;
        tok.insert(
            format!("c{conc}"),
            serde_json::json!({
                "streamed_tokens_per_second": s.output_tokens_per_second,
                "requests_ok": s.ok, "errors": s.errors,
                "itl_p99_ms": s.latency.itl.p99_ms,
            }),
        );
    }
    let r = bakeoff_load::run(&c, &plan(32, 1, timed), np.clone(), rx.clone())
        .await
        .map_err(|e| e.to_string())?;
    let rps = r.steps.first().and_then(|s| s.requests_per_second);

    // 2. Poisson at `rate` req/s.
    let mut p = plan(
        1,
        4,
        StepBound {
            requests: None,
            duration: Some(Duration::from_secs(secs)),
            completed: None,
        },
    );
    p.mode = Mode::Open {
        rates: vec![rate],
        arrival: Arrival::Poisson,
        max_in_flight: None,
    };
    p.seed = 42;
    let r = bakeoff_load::run(&c, &p, np.clone(), rx.clone())
        .await
        .map_err(|e| e.to_string())?;
    let s = r.steps.first().ok_or("no open step")?;
    let achieved = s.achieved_rate;
    let schedule = bakeoff_load::schedule::offsets(
        Arrival::Poisson,
        rate,
        None,
        Some(Duration::from_secs(secs)),
        42 ^ 1,
    );
    let scheduled_rate = schedule.len().saturating_sub(1) as f64
        / schedule.last().map(|d| d.as_secs_f64()).unwrap_or(1.0);

    let rss_before_streams = calibrate::peak_rss_mib();
    // 3. Concurrent streams, last: closing 10,000 pooled connections afterwards keeps the
    //    runtime busy, which would show up as send lateness in a later phase.
    let open = calibrate::concurrent_streams(url, streams, rx.clone())
        .await
        .map_err(|e| e.to_string())?;
    let rss_after_streams = calibrate::peak_rss_mib();

    Ok(serde_json::json!({
        "machine": {
            "available_parallelism": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "client_runtime": "tokio current_thread (one client core) plus the open-loop dispatcher thread, which sleeps between sends; target in a child process",
            "rlimit_nofile": raise_nofile(),
        },
        "streamed_tokens": tok,
        "requests_per_second_1_token": rps,
        "concurrent_streams": { "requested": streams, "open_at_once": open },
        "client_peak_rss_mib": rss_after_streams,
        "client_peak_rss_before_streams_phase_mib": rss_before_streams,
        "poisson": {
            "requested_rate": rate,
            "seconds": secs,
            "this_seed_schedule_rate": scheduled_rate,
            "achieved_rate": achieved,
            "achieved_vs_requested_pct": achieved.map(|a| (a - rate) / rate * 100.0),
            "achieved_vs_schedule_pct": achieved.map(|a| (a - scheduled_rate) / scheduled_rate * 100.0),
            "sent": s.sent, "ok": s.ok, "errors": s.errors,
            "send_lateness_p50_ms": s.latency.send_lateness.p50_ms,
            "send_lateness_p99_ms": s.latency.send_lateness.p99_ms,
            "send_lateness_max_ms": s.latency.send_lateness.max_ms,
        },
    }))
}
