//! `harness-bench --tls-cost` (docs/performance.md "TLS"): the harness's CPU per streamed token
//! over TLS against plain HTTP, on the built-in loopback target, one client core.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bakeoff_client::tls::{Tls, TlsOptions};
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use bakeoff_load::{NoProgress, StepBound};

/// CPU time of every thread of this process so far, nanoseconds (`/proc/self/task/*/schedstat`,
/// first field: time spent on the CPU).
pub(crate) fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .map_err(|e| format!("openssl: {e} (the TLS figure needs the openssl CLI)"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        ))
    }
}

/// A CA and a server certificate for 127.0.0.1 (ECDSA P-256, as a gateway commonly has).
fn pki(dir: &Path) -> Result<(), String> {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "1",
            "-subj",
            "/CN=harness-bench CA",
        ],
    )?;
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    )?;
    std::fs::write(dir.join("ext"), "subjectAltName=IP:127.0.0.1\n").map_err(|e| e.to_string())?;
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "ext",
        ],
    )
}

fn client(url: &str, tls: Tls) -> Result<Client, String> {
    let u = EndpointUrl::parse(url).map_err(|e| e.to_string())?;
    Client::try_new(
        u,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(30),
                first_byte: Duration::from_secs(60),
                idle: Duration::from_secs(60),
                total: Duration::from_secs(300),
            },
            api_key: None,
            tls,
        },
    )
    .map_err(|e| e.to_string())
}

/// One closed-loop step: tokens/s, requests/s, and the client's CPU per token and per request.
async fn measure(
    c: &Client,
    conc: u32,
    tokens: u32,
    secs: u64,
) -> Result<serde_json::Value, String> {
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let bound = StepBound {
        requests: None,
        duration: Some(Duration::from_secs(secs)),
        completed: None,
    };
    let mut p = bakeoff_load::calibrate::calib_plan(conc, tokens, bound);
    p.keep_requests = false;
    let cpu0 = cpu_ns();
    let t0 = Instant::now();
    let r = bakeoff_load::run(c, &p, Arc::new(NoProgress), rx)
        .await
        .map_err(|e| e.to_string())?;
    let wall = t0.elapsed().as_secs_f64();
    let cpu = cpu_ns().saturating_sub(cpu0) as f64;
    let s = r.steps.first().ok_or("no step")?;
    let per = |n: u64| (n > 0).then(|| cpu / n as f64);
    Ok(serde_json::json!({
        "concurrency": conc,
        "tokens_per_request": tokens,
        "requests_ok": s.ok,
        "errors": s.errors,
        "output_tokens": s.output_tokens,
        "streamed_tokens_per_second": s.output_tokens_per_second,
        "requests_per_second": s.requests_per_second,
        "client_cpu_s": cpu / 1e9,
        "client_cpu_share_of_one_core": cpu / 1e9 / wall,
        "client_cpu_ns_per_token": per(s.output_tokens),
        "client_cpu_us_per_request": per(s.ok).map(|v| v / 1e3),
    }))
}

pub fn run(secs: u64) -> Result<serde_json::Value, String> {
    let dir = std::env::temp_dir().join(format!("harness-bench-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = run_in(&dir, secs);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_in(dir: &Path, secs: u64) -> Result<serde_json::Value, String> {
    pki(dir)?;
    let cert = dir.join("server.pem");
    let key = dir.join("server.key");
    let (mut plain_child, plain_url) = super::spawn_target(&[])?;
    let (mut tls_child, tls_url) = super::spawn_target(&[
        "--tls-cert",
        cert.to_str().ok_or("temp path is not UTF-8")?,
        "--tls-key",
        key.to_str().ok_or("temp path is not UTF-8")?,
    ])?;
    let tls = Tls::new(&TlsOptions {
        ca_cert: Some(dir.join("ca.pem")),
        insecure: false,
    })
    .map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let out = rt.block_on(async {
        let plain = client(&plain_url, Tls::default())?;
        let over_tls = client(&tls_url, tls)?;
        let mut phases = serde_json::Map::new();
        for (name, conc, tokens) in [
            ("streams_c16_1024_tokens", 16, 1024),
            ("requests_c32_1_token", 32, 1),
        ] {
            let p = measure(&plain, conc, tokens, secs).await?;
            let t = measure(&over_tls, conc, tokens, secs).await?;
            let ratio = |k: &str| match (p[k].as_f64(), t[k].as_f64()) {
                (Some(a), Some(b)) if a > 0.0 => Some(b / a),
                _ => None,
            };
            phases.insert(
                name.into(),
                serde_json::json!({
                    "tls_over_plain_cpu_per_token": ratio("client_cpu_ns_per_token"),
                    "tls_over_plain_cpu_per_request": ratio("client_cpu_us_per_request"),
                    "plain": p,
                    "tls": t,
                }),
            );
        }
        Ok::<_, String>(phases)
    });
    for c in [&mut plain_child, &mut tls_child] {
        drop(c.stdin.take());
        let _ = c.kill();
        let _ = c.wait();
    }
    Ok(serde_json::json!({
        "machine": {
            "available_parallelism": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "client_runtime": "tokio current_thread (one client core); each target in its own child process",
            "tls": "rustls 0.23 (ring), TLS 1.3, ECDSA P-256 certificate; a fresh connection and handshake per request (Connection: close)",
            "seconds_per_phase": secs,
        },
        "tls_cost": out?,
    }))
}
