//! `seat monitor --prometheus` and `--alert-webhook` through the real binary (docs/monitor-export.md):
//!
//! - the real llama-server as a process seat, watched with both exports on: a real Prometheus
//!   (Debian's package, scripts/install-test-deps.sh) scrapes `--prometheus` every second and the
//!   test reads the gauges back through Prometheus' own HTTP API (`/api/v1/query`); the seat is
//!   killed and started again, and a receiver in this process gets exactly one `start` and one
//!   `end` message for that outage;
//! - a webhook where nothing listens: each message is retried with back-off, then logged as not
//!   delivered, on stderr and in the summary's notes.
//!
//! Waits are on what the series, Prometheus or the receiver show, each with a generous bound;
//! nothing asserts how long anything took.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::seat_monitor::{
    interrupt, llama_seat, pid_of, samples, spawn_monitor, valid_summary, wait_for, write,
};
use crate::util::{self, code, free_port};

/// A GET over a plain TCP connection (HTTP/1.0, read to the close): status and body.
fn http_get(url: &str) -> Option<(u16, String)> {
    let rest = url.strip_prefix("http://")?;
    let (hostport, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut s = std::net::TcpStream::connect(hostport).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET /{path} HTTP/1.0\r\nHost: {hostport}\r\n\r\n").ok()?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

/// A real Prometheus, killed on drop.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    /// Scraping `target` (host:port) every second; its data and log under `dir`.
    fn start(dir: &Path, target: &str) -> Self {
        let bin = which("prometheus").expect(
            "prometheus is not installed: run scripts/install-test-deps.sh (Debian's package)",
        );
        let port = free_port();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: bakeoff-monitor\n    static_configs:\n      - targets: [\"{target}\"]\n"
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap())
            .spawn()
            .unwrap();
        Self { child, port }
    }

    /// Waits (off the runtime) until `metric` for `seat` satisfies `pred`; its value.
    async fn wait_value(
        &self,
        metric: &'static str,
        seat: &'static str,
        pred: impl Fn(f64) -> bool + Send + 'static,
    ) -> (f64, Value) {
        let port = self.port;
        tokio::task::spawn_blocking(move || {
            let p = PromQuery { port };
            let start = Instant::now();
            loop {
                let found = p
                    .query(metric)
                    .into_iter()
                    .find(|r| r["metric"]["seat"] == seat);
                if let Some(r) = &found
                    && let Some(v) = r["value"][1].as_str().and_then(|s| s.parse::<f64>().ok())
                    && pred(v)
                {
                    return (v, r.clone());
                }
                assert!(
                    start.elapsed() < Duration::from_secs(300),
                    "Prometheus never showed {metric} for {seat} as wanted: last {found:?}"
                );
                std::thread::sleep(Duration::from_millis(250));
            }
        })
        .await
        .unwrap()
    }
}

/// The query half of [`Prometheus`], for a blocking thread.
struct PromQuery {
    port: u16,
}

impl PromQuery {
    fn query(&self, metric: &str) -> Vec<Value> {
        let url = format!("http://127.0.0.1:{}/api/v1/query?query={metric}", self.port);
        let Some((200, body)) = http_get(&url) else {
            return Vec::new();
        };
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }
}

fn which(bin: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(bin))
            .find(|p| p.is_file())
    })
}

/// A webhook receiver in this process (port 0): every JSON body it is sent, in order.
async fn receiver() -> (u16, Arc<Mutex<Vec<Value>>>) {
    let got: Arc<Mutex<Vec<Value>>> = Arc::default();
    let g = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |body: axum::Json<Value>| {
            let g = g.clone();
            async move {
                g.lock().unwrap().push(body.0);
                "ok"
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (port, got)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_the_gauges_and_an_outage_is_alerted_once_as_it_starts_and_ends() {
    let (_g, dir) = util::serial_tempdir().await;
    let port = free_port();
    let f = write(dir.path(), &llama_seat("gemma", port));
    let _guard = bakeoff_testkit::fleet::SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let up = util::bakeoff(&["seat", "up", "--fleet", &f, "gemma"]);
    assert_eq!(code(&up), 0, "{}", util::text(&up));

    let (hook_port, got) = receiver().await;
    let metrics_port = free_port();
    let prom = Prometheus::start(dir.path(), &format!("127.0.0.1:{metrics_port}"));
    let out = dir.path().join("monitor");
    let err_file = dir.path().join("monitor.stderr");
    let child = spawn_monitor(
        &[
            // The whole fleet (no names): a probe that fails while the fresh seat settles is
            // not an outage until it has answered once (docs/fleet.md "Monitor").
            "--fleet",
            &f,
            "--interval",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--probe-timeout",
            "120",
            // A fresh llama-server's RSS grows as it pages its model in: past the default
            // threshold in seconds. This test is about the outage's messages.
            "--drift-min",
            "10g",
            "--prometheus",
            &format!("127.0.0.1:{metrics_port}"),
            "--alert-webhook",
            &format!("http://127.0.0.1:{hook_port}/hook"),
        ],
        &err_file,
    );
    wait_for(&out, "gemma", "three answering ticks", |s| {
        s.iter().filter(|s| s["answering"] == true).count() >= 3
    })
    .await;

    // The gauges, read back through Prometheus' own API.
    let (up_v, up_r) = prom
        .wait_value("bakeoff_monitor_probe_success", "gemma", |v| v == 1.0)
        .await;
    assert_eq!(up_v, 1.0);
    assert_eq!(up_r["metric"]["host"], "local", "{up_r}");
    assert_eq!(up_r["metric"]["job"], "bakeoff-monitor", "{up_r}");
    let (lat, _) = prom
        .wait_value("bakeoff_monitor_probe_duration_seconds", "gemma", |v| {
            v > 0.0
        })
        .await;
    let (fp, fp_r) = prom
        .wait_value("bakeoff_monitor_footprint_bytes", "gemma", |v| {
            v > (10u64 << 20) as f64
        })
        .await;
    assert_eq!(fp_r["metric"]["source"], "proc-rss", "{fp_r}");
    prom.wait_value("bakeoff_monitor_queue_waiting_requests", "gemma", |v| {
        v >= 0.0
    })
    .await;
    prom.wait_value("bakeoff_monitor_outage", "gemma", |v| v == 0.0)
        .await;
    // The scrape itself, as Prometheus reads it (shown in docs/monitor-export.md).
    let (status, scrape) = http_get(&format!("http://127.0.0.1:{metrics_port}/metrics")).unwrap();
    assert_eq!(status, 200);
    eprintln!("--- scrape ---\n{scrape}--- end ---");
    eprintln!("probe {lat} s, footprint {fp} bytes, through Prometheus");

    // Killed under the monitor: one outage, seen by Prometheus, alerted once.
    let pid = pid_of(dir.path(), "gemma");
    assert!(
        Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    wait_for(
        &out,
        "gemma",
        "two ticks not answering after the kill",
        |s| {
            let first_down = s.iter().position(|s| s["answering"] == false);
            first_down
                .is_some_and(|i| s[i..].iter().filter(|s| s["answering"] == false).count() >= 2)
        },
    )
    .await;
    prom.wait_value("bakeoff_monitor_outage", "gemma", |v| v == 1.0)
        .await;
    prom.wait_value("bakeoff_monitor_outages_total", "gemma", |v| v == 1.0)
        .await;
    let up = util::bakeoff(&["seat", "up", "--fleet", &f, "gemma"]);
    assert_eq!(code(&up), 0, "{}", util::text(&up));
    wait_for(&out, "gemma", "answering again after the outage", |s| {
        s.iter()
            .skip_while(|s| s["answering"] == true)
            .skip_while(|s| s["answering"] == false)
            .any(|s| s["answering"] == true)
    })
    .await;
    prom.wait_value("bakeoff_monitor_outage", "gemma", |v| v == 0.0)
        .await;
    // Both messages in (each is posted as its tick ends), then two more ticks: nothing else.
    let g = got.clone();
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        while g.lock().unwrap().len() < 2 {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "{:?}",
                g.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .unwrap();
    let n = samples(&out).len();
    wait_for(&out, "gemma", "two more ticks", move |s| s.len() >= n + 2).await;
    let (c, stdout_text, stderr_text) = interrupt(child, &err_file).await;
    let _ = util::bakeoff(&["seat", "down", "--fleet", &f, "gemma"]);
    assert_eq!(
        c, 1,
        "the outage is a finding: {stdout_text}\n{stderr_text}"
    );
    valid_summary(&out);

    let got = got.lock().unwrap().clone();
    eprintln!(
        "--- alerts ---\n{}\n--- end ---",
        got.iter()
            .map(|v| serde_json::to_string_pretty(v).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(got.len(), 2, "exactly one start and one end: {got:#?}");
    let (start, end) = (&got[0], &got[1]);
    for (m, event) in [(start, "start"), (end, "end")] {
        assert_eq!(m["event"], event, "{m}");
        assert_eq!(m["kind"], "outage", "{m}");
        assert_eq!(m["seat"], "gemma", "{m}");
        assert_eq!(m["source"], "bakeoff seat monitor", "{m}");
        assert!(
            m["text"].as_str().unwrap().starts_with("outage: gemma"),
            "{m}"
        );
    }
    assert_eq!(start["title"], "outage started: gemma");
    assert!(end["finding"]["ended_at"].is_string(), "{end}");
    assert!(
        end["finding"]["duration_s"].as_f64().unwrap() > 0.0,
        "{end}"
    );
    assert!(
        stderr_text.contains("alert sent: outage start for gemma to http://127.0.0.1:")
            && stderr_text.contains("alert sent: outage end for gemma"),
        "{stderr_text}"
    );
    assert!(
        stderr_text.contains(&format!(
            "serving the gauges for Prometheus at http://127.0.0.1:{metrics_port}/metrics"
        )),
        "{stderr_text}"
    );
}

/// A webhook where nothing listens: retried with back-off, then logged — on stderr as it
/// happens and in the summary — never dropped in silence. The seat is named and not running, so
/// the first tick opens an outage (no engine needed).
#[tokio::test]
async fn an_unreachable_webhook_is_retried_then_logged_as_not_delivered() {
    let (_g, dir) = util::serial_tempdir().await;
    let header =
        bakeoff_testkit::fleet::seat_header("idle", "generic", "bench", free_port(), "idle");
    let f = write(
        dir.path(),
        &format!("{header}[seat.process]\ncommand = \"sleep\"\nargs = [\"600\"]\n"),
    );
    let out = dir.path().join("monitor");
    let dead = free_port();
    let o = util::bakeoff_async(&[
        "seat",
        "monitor",
        "--fleet",
        &f,
        "idle",
        "--interval",
        "1",
        "--duration",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--alert-webhook",
        &format!("http://127.0.0.1:{dead}/hook/SECRET-PATH"),
        "--alert-attempts",
        "3",
    ])
    .await;
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 1, "{}", util::text(&o));
    let to = format!("http://127.0.0.1:{dead}");
    for attempt in ["attempt 1 of 3 failed", "attempt 2 of 3 failed"] {
        assert!(
            err.contains(&format!("alert outage start for idle to {to}: {attempt}")),
            "{attempt}: {err}"
        );
    }
    assert!(
        err.contains("trying again in 1 s") && err.contains("trying again in 2 s"),
        "{err}"
    );
    let logged = format!("ALERT NOT DELIVERED: outage start for idle to {to} after 3 attempts");
    assert!(err.contains(&logged), "{err}");
    assert!(
        !err.contains("SECRET-PATH"),
        "the webhook's path is never logged: {err}"
    );
    let summary = valid_summary(&out);
    let notes = summary["notes"].to_string();
    assert!(notes.contains(&logged), "{notes}");
    assert!(!notes.contains("SECRET-PATH"), "{notes}");
}
