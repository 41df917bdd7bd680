//! `bakeoff seat monitor` through the real binary, against real seats:
//!
//! - the real llama-server as a process seat with two gateway aliases, beside a Docker seat on
//!   a host whose engine accepts connections and never answers: every tick has the llama seat's
//!   probe latency, its footprint (process RSS on this machine, labelled `proc-rss`) and its
//!   queue (`--metrics`), while the other seat reads `unknown (host unreachable …)`. The seat
//!   is killed mid-run and started again: exactly one `outage` finding, listing both aliases,
//!   with its start, end and duration. Ctrl-C ends the monitor and the summary is written; the
//!   report draws the series.
//! - a real program that really grows: a Python process seat serving an OpenAI-compatible
//!   streamed chat completion whose replies are all reasoning (as llama.cpp streams
//!   `delta.reasoning_content` under `--reasoning-format deepseek` when the budget ends inside
//!   the thinking), and a thread that allocates and touches memory steadily: a
//!   `footprint-drift` finding with a positive slope from its real RSS, every probe alive
//!   though reasoning-only — and a `--probe-max-tokens 1` monitor of the same seat shows the
//!   trap (an empty reply, a seat called dead).
//!
//! Waits are on what the series shows (so many answering ticks, a tick that saw the seat
//! down), each with a generous bound; nothing asserts how long anything took.

use crate::util::Bounded;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{self, code, free_port, read_json, root, stdout, text};

pub(crate) fn write(dir: &Path, toml: &str) -> String {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, toml).unwrap();
    p.display().to_string()
}

/// The real llama-server as a process seat, with `--metrics` (the queue gauges).
pub(crate) fn llama_seat(name: &str, port: u16) -> String {
    let e = bakeoff_testkit::engine();
    let header =
        bakeoff_testkit::fleet::seat_header(name, "llama.cpp", "bench", port, "gemma-3-270m");
    format!(
        r#"{header}[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1", "--alias", "gemma-3-270m", "--metrics"]
"#,
        bin = e.llama_server.display(),
        model = e.model.display()
    )
}

/// `bakeoff seat monitor ARGS…` in the background, its stderr (the live lines) into a file.
pub(crate) fn spawn_monitor(args: &[&str], stderr: &Path) -> Child {
    util::bakeoff_cmd()
        .args(["seat", "monitor"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// The series file in `out`, once there is one.
pub(crate) fn series_file(out: &Path) -> Option<PathBuf> {
    std::fs::read_dir(out).ok()?.find_map(|e| {
        let p = e.ok()?.path();
        p.to_string_lossy().ends_with(".monitor.jsonl").then_some(p)
    })
}

pub(crate) fn samples(out: &Path) -> Vec<Value> {
    series_file(out)
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Wait (off the runtime) until `pred` holds for `seat`'s samples; `what` names it on failure.
pub(crate) async fn wait_for(
    out: &Path,
    seat: &str,
    what: &str,
    pred: impl Fn(&[Value]) -> bool + Send + 'static,
) {
    let out = out.to_path_buf();
    let seat = seat.to_string();
    let what = what.to_string();
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        loop {
            let mine: Vec<Value> = samples(&out)
                .into_iter()
                .filter(|s| s["seat"] == seat.as_str())
                .collect();
            if pred(&mine) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(600),
                "the series never showed {what}: {mine:#?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    })
    .await
    .unwrap();
}

fn sigint(pid: u32) {
    assert!(
        Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
}

/// Ctrl-C to the monitor, then its exit code, stdout, and the stderr file's text.
pub(crate) async fn interrupt(mut child: Child, stderr: &Path) -> (i32, String, String) {
    sigint(child.id());
    let (status, out) = tokio::task::spawn_blocking(move || {
        let mut s = String::new();
        child.stdout.take().unwrap().read_to_string(&mut s).unwrap();
        (child.wait().unwrap(), s)
    })
    .await
    .unwrap();
    (
        status.code().unwrap_or(-1),
        out,
        std::fs::read_to_string(stderr).unwrap_or_default(),
    )
}

/// The summary beside the series, checked against the checked-in schema; every sample too
/// (`$defs/MonitorSample`).
pub(crate) fn valid_summary(out: &Path) -> Value {
    let series = series_file(out).unwrap();
    let summary_path = PathBuf::from(
        series
            .to_string_lossy()
            .replace(".monitor.jsonl", ".monitor.json"),
    );
    let summary = read_json(&summary_path);
    let schema = read_json(&root().join("schemas/monitor.v1.schema.json"));
    let errors = |schema: &Value, v: &Value| -> Vec<String> {
        jsonschema::validator_for(schema)
            .unwrap()
            .iter_errors(v)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    };
    assert!(
        errors(&schema, &summary).is_empty(),
        "{:#?}",
        errors(&schema, &summary)
    );
    let sample_schema = serde_json::json!({
        "$ref": "#/$defs/MonitorSample",
        "$defs": schema["$defs"].clone(),
    });
    for s in samples(out) {
        let e = errors(&sample_schema, &s);
        assert!(e.is_empty(), "{e:#?} in {s}");
    }
    summary
}

pub(crate) fn pid_of(dir: &Path, seat: &str) -> u32 {
    let v = read_json(&dir.join(format!(".bakeoff-seats/{seat}.process.json")));
    v["pid"].as_u64().unwrap() as u32
}

/// A listener that accepts connections and never answers: a Docker host that hangs.
fn hanging_host() -> (u16, std::thread::JoinHandle<()>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming().take(64) {
            match c {
                Ok(c) => held.push(c),
                Err(_) => break,
            }
        }
    });
    (port, h)
}

#[tokio::test]
async fn a_killed_seat_is_one_outage_with_both_aliases_beside_a_host_that_hangs() {
    let (_g, dir) = util::serial_tempdir().await;
    let port = free_port();
    let (hang, _listener) = hanging_host();
    let far_port = free_port();
    let f = write(
        dir.path(),
        &format!(
            r#"[hosts.stuck]
docker = "tcp://127.0.0.1:{hang}"
{llama}
[[seat]]
name = "far"
host = "stuck"
engine = "llama.cpp"
role = "bench"
port = {far_port}
served_model_names = ["far"]
[seat.docker]
image = "bakeoff-llama:local"

[[route]]
alias = "chat"
api_base = "http://127.0.0.1:{port}/v1"

[[route]]
alias = "chat-fast"
seat = "gemma"
"#,
            llama = llama_seat("gemma", port)
        ),
    );
    let _guard = bakeoff_testkit::fleet::SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let up = util::bakeoff(&["seat", "up", "--fleet", &f, "gemma"]);
    assert_eq!(code(&up), 0, "{}", text(&up));

    let out = dir.path().join("monitor");
    let err_file = dir.path().join("monitor.stderr");
    let o = out.to_str().unwrap();
    // Every seat of the fleet (no names): the llama seat and the one behind the hanging host.
    let child = spawn_monitor(
        &[
            "--fleet",
            &f,
            "--interval",
            "1",
            "--out",
            o,
            // Generous: on a loaded 2-core machine a slow probe is not the outage this test
            // makes.
            "--probe-timeout",
            "120",
        ],
        &err_file,
    );
    wait_for(&out, "gemma", "three answering ticks", |s| {
        s.iter().filter(|s| s["answering"] == true).count() >= 3
    })
    .await;

    // Killed under the monitor: SIGKILL to the engine, as an OOM killer would.
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
    let up = util::bakeoff(&["seat", "up", "--fleet", &f, "gemma"]);
    assert_eq!(code(&up), 0, "{}", text(&up));
    wait_for(&out, "gemma", "answering again after the outage", |s| {
        s.iter()
            .skip_while(|s| s["answering"] == true)
            .skip_while(|s| s["answering"] == false)
            .any(|s| s["answering"] == true)
    })
    .await;
    let (c, stdout_text, stderr_text) = interrupt(child, &err_file).await;
    let _ = util::bakeoff(&["seat", "down", "--fleet", &f, "gemma"]);
    // A finding (the outage): exit 1, the summary written all the same.
    assert_eq!(c, 1, "{stdout_text}\n{stderr_text}");

    let summary = valid_summary(&out);
    eprintln!(
        "summary: {}",
        serde_json::to_string_pretty(&summary).unwrap()
    );
    assert_eq!(summary["ended_by"], "interrupted");
    let findings = summary["findings"].as_array().unwrap();
    let outages: Vec<&Value> = findings.iter().filter(|f| f["kind"] == "outage").collect();
    assert_eq!(
        outages.len(),
        1,
        "one outage, not one per alias: {findings:#?}"
    );
    let outage = outages[0];
    assert_eq!(outage["seat"], "gemma");
    assert_eq!(outage["aliases"], serde_json::json!(["chat", "chat-fast"]));
    assert!(outage["ended_at"].is_string(), "{outage}");
    assert!(outage["duration_s"].as_f64().unwrap() > 0.0, "{outage}");
    assert!(outage["failed_ticks"].as_u64().unwrap() >= 2, "{outage}");
    // The seat behind the hanging host never answered: no outage of its own, a note.
    assert!(
        findings.iter().all(|f| f["seat"] == "gemma"),
        "{findings:#?}"
    );
    let notes = summary["notes"].to_string();
    assert!(notes.contains("far never answered"), "{notes}");

    let all = samples(&out);
    let gemma: Vec<&Value> = all.iter().filter(|s| s["seat"] == "gemma").collect();
    let far: Vec<&Value> = all.iter().filter(|s| s["seat"] == "far").collect();
    assert_eq!(gemma.len(), far.len(), "one sample per seat per tick");
    for s in &far {
        let st = s["state"].as_str().unwrap();
        assert!(st.starts_with("unknown (host unreachable"), "{st}");
        assert_eq!(s["answering"], false);
    }
    let answering: Vec<&&Value> = gemma.iter().filter(|s| s["answering"] == true).collect();
    assert!(answering.len() >= 4, "{gemma:#?}");
    for s in &answering {
        let fp = &s["footprint"];
        assert_eq!(fp["source"], "proc-rss", "{s}");
        assert!(fp["bytes"].as_u64().unwrap() > 10 << 20, "{s}");
        assert!(s["probe"]["latency_ms"].as_f64().unwrap() > 0.0, "{s}");
        assert!(s["probe"]["content_chars"].as_u64().unwrap() > 0, "{s}");
        assert!(
            s["queue"]["source"]
                .as_str()
                .unwrap()
                .contains("llamacpp:requests_deferred"),
            "{s}"
        );
    }
    // While it was gone: no process, so no footprint (never a zero), and no probe sent.
    let gone: Vec<&&Value> = gemma
        .iter()
        .filter(|s| s["state"].as_str().unwrap().starts_with("exited"))
        .collect();
    assert!(!gone.is_empty(), "{gemma:#?}");
    for s in &gone {
        assert!(
            s.get("footprint").is_none() && s.get("probe").is_none(),
            "{s}"
        );
        assert_eq!(s["answering"], false);
    }
    eprintln!(
        "gemma RSS {:?} MiB; probe latency {:?} ms; outage {} s",
        answering
            .iter()
            .map(|s| s["footprint"]["bytes"].as_u64().unwrap() >> 20)
            .collect::<Vec<_>>(),
        answering
            .iter()
            .map(|s| s["probe"]["latency_ms"].as_f64().unwrap())
            .collect::<Vec<_>>(),
        outage["duration_s"]
    );
    // Said as it happened: one line per seat per tick, the outage, and its end.
    assert!(
        stderr_text.contains("finding outage: gemma stopped answering"),
        "{stderr_text}"
    );
    assert!(
        stderr_text.contains("outage over: gemma answers again"),
        "{stderr_text}"
    );
    assert!(stdout_text.contains("seat monitor of"), "{stdout_text}");

    // The report draws the series: footprint and probe latency over time, outage shaded.
    let r = util::bakeoff(&["report", o]);
    assert_eq!(code(&r), 0, "{}", text(&r));
    assert!(stdout(&r).contains("seat monitor of"), "{}", stdout(&r));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Footprint over time"), "no footprint chart");
    assert!(html.contains("Probe latency over time"), "no latency chart");
    assert!(html.contains("class=\"band\""), "the outage is not shaded");
    assert!(
        !html.contains("Files not read"),
        "a monitor file was taken for an artifact"
    );
}

/// A process seat that really grows: an OpenAI-compatible server (streamed chat completions,
/// all reasoning) and a thread that allocates and touches 1.5 MiB every quarter second, up to
/// 600 MiB. A request for 2 tokens or fewer gets no text at all, as a reasoning model spends
/// them on its opening think tag.
const GROWER: &str = r#"
import http.server, json, sys, threading, time
port = int(sys.argv[1])
hoard = []
def grow():
    while len(hoard) < 400:
        hoard.append(bytearray(b"\x01") * (1536 * 1024))
        time.sleep(0.25)
threading.Thread(target=grow, daemon=True).start()
class H(http.server.BaseHTTPRequestHandler):
    def send_json(self, code, body):
        b = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_GET(self):
        if self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [{"id": "grower", "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "not found"}})
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(n) or b"{}")
        if self.path != "/v1/chat/completions":
            return self.send_json(404, {"error": {"message": "not found"}})
        budget = int(req.get("max_tokens") or 16)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        def chunk(delta, finish=None):
            c = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "grower",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
        chunk({"role": "assistant"})
        for _ in range(max(0, budget - 2)):
            chunk({"reasoning_content": "hmm "})
        chunk({}, "length")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
    def log_message(self, *a):
        pass
print("listening on http://127.0.0.1:%d" % port, flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

#[tokio::test]
async fn a_seat_that_really_grows_is_a_footprint_drift_and_reasoning_only_is_alive() {
    let (_g, dir) = util::serial_tempdir().await;
    let port = free_port();
    let script = dir.path().join("grower.py");
    std::fs::write(&script, GROWER).unwrap();
    let header = bakeoff_testkit::fleet::seat_header("grower", "generic", "bench", port, "grower");
    let f = write(
        dir.path(),
        &format!(
            "{header}stop_timeout_s = 2\n[seat.process]\ncommand = \"python3\"\nargs = [{:?}, \"{{port}}\"]\n",
            script.display().to_string()
        ),
    );
    let up = util::bakeoff(&["seat", "up", "--fleet", &f, "grower"]);
    let down = || {
        let _ = util::bakeoff(&["seat", "down", "--fleet", &f, "grower"]);
    };
    if code(&up) != 0 {
        down();
        panic!("{}", text(&up));
    }

    // The trap first: a one-token probe of a reasoning seat gets nothing back and calls it
    // dead (a named seat not answering from its first tick is an outage).
    let trap = dir.path().join("trap");
    let t = util::bakeoff(&[
        "seat",
        "monitor",
        "--fleet",
        &f,
        "grower",
        "--interval",
        "1",
        "--duration",
        "1",
        "--probe-max-tokens",
        "1",
        "--out",
        trap.to_str().unwrap(),
    ]);
    assert_eq!(code(&t), 1, "{}", text(&t));
    let trap_summary = valid_summary(&trap);
    assert_eq!(trap_summary["ended_by"], "duration");
    assert_eq!(trap_summary["seats"][0]["answered"], 0);
    let first_error = trap_summary["findings"][0]["first_error"].as_str().unwrap();
    assert!(first_error.starts_with("empty-reply"), "{first_error}");

    let out = dir.path().join("monitor");
    let err_file = dir.path().join("monitor.stderr");
    let child = spawn_monitor(
        &[
            "--fleet",
            &f,
            "grower",
            "--interval",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--drift-threshold",
            "10",
            "--drift-min",
            "16m",
        ],
        &err_file,
    );
    // Until the footprint has grown by 48 MiB over its first sample, read from the series.
    wait_for(&out, "grower", "48 MiB of growth", |s| {
        let bytes: Vec<u64> = s
            .iter()
            .filter_map(|s| s["footprint"]["bytes"].as_u64())
            .collect();
        bytes.len() >= 3 && bytes.last().unwrap() >= &(bytes[0] + (48 << 20))
    })
    .await;
    let (c, stdout_text, stderr_text) = interrupt(child, &err_file).await;
    down();
    assert_eq!(c, 1, "{stdout_text}\n{stderr_text}");
    let summary = valid_summary(&out);
    eprintln!(
        "summary: {}",
        serde_json::to_string_pretty(&summary).unwrap()
    );
    let findings = summary["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let d = &findings[0];
    assert_eq!(d["kind"], "footprint-drift");
    assert_eq!(d["seat"], "grower");
    assert_eq!(d["source"], "proc-rss");
    let (first, last) = (
        d["first_bytes"].as_u64().unwrap(),
        d["last_bytes"].as_u64().unwrap(),
    );
    assert!(last >= first + (48 << 20), "{d}");
    let slope = d["slope_bytes_per_day"].as_f64().unwrap();
    assert!(slope > 0.0, "{d}");
    assert!(d["samples"].as_u64().unwrap() >= 3, "{d}");
    eprintln!(
        "grower RSS {} → {} MiB, slope {:.1} GiB/day",
        first >> 20,
        last >> 20,
        slope / (1u64 << 30) as f64
    );
    // Every probe alive, every reply all reasoning.
    let all = samples(&out);
    assert!(!all.is_empty());
    for s in &all {
        assert_eq!(s["answering"], true, "{s}");
        assert_eq!(s["probe"]["reasoning_only"], true, "{s}");
        assert_eq!(s["probe"]["content_chars"], 0, "{s}");
        // No /metrics here: said, not invented.
        assert!(
            s["queue_unavailable"].as_str().unwrap().contains("404"),
            "{s}"
        );
    }
    assert_eq!(
        summary["seats"][0]["reasoning_only"],
        summary["seats"][0]["answered"]
    );
    assert!(
        stderr_text.contains("finding footprint-drift: grower grew"),
        "{stderr_text}"
    );
    assert!(
        stderr_text.contains("reasoning only: alive"),
        "{stderr_text}"
    );
}

/// An unknown seat is a one-line usage error (exit 2) that names the fleet's seats, and nothing
/// is written for the refused start (the flags' own refusals are `bakeoff-flags`' tests).
#[test]
fn an_unknown_seat_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), &llama_seat("one", free_port()));
    let out = dir.path().join("results");
    let out = out.to_str().unwrap();
    let o = util::bakeoff(&["seat", "monitor", "--fleet", &f, "--out", out, "nope"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("name one it declares: one"), "{err}");
    assert!(!Path::new(out).exists());
}

/// Removes, on drop, the test's container and image (a failing test leaves neither behind).
struct DockerCleanup {
    container: String,
    image: String,
}

impl Drop for DockerCleanup {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &self.container])
            .output_bounded();
        let _ = Command::new("docker")
            .args(["rmi", "-f", &self.image])
            .output_bounded();
    }
}

/// A container seat on this machine's real Docker engine (the image built locally, as the
/// seats' Docker tests build it: scripts/seat-image.sh): no GPU here, so its footprint is
/// `docker stats` — the cgroup's usage less its inactive file cache — labelled so.
#[tokio::test]
async fn a_container_seat_s_footprint_is_docker_stats() {
    let (_g, dir) = util::serial_tempdir().await;
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
        % 1_000_000_000;
    let tag = format!("bakeoff-monitor-test-{}-{n}:test", std::process::id());
    let container = format!("bakeoff-monitor-{}-{n}", std::process::id());
    let _cleanup = DockerCleanup {
        container: container.clone(),
        image: tag.clone(),
    };
    let built = Command::new("bash")
        .arg(root().join("scripts/seat-image.sh"))
        .arg(&tag)
        .output_bounded()
        .unwrap();
    assert!(
        built.status.success(),
        "scripts/seat-image.sh failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let header = bakeoff_testkit::fleet::seat_header(
        "boxed",
        "llama.cpp",
        "bench",
        free_port(),
        "gemma-3-270m",
    );
    let f = write(
        dir.path(),
        &format!(
            r#"{header}stop_timeout_s = 2
[seat.docker]
image = "{tag}"
command = ["/opt/llama/bin/llama-server", "-m", "/models/model.gguf", "--host", "0.0.0.0", "--port", "8080",
           "-c", "1024", "-np", "1", "--alias", "gemma-3-270m", "--metrics"]
container_port = 8080
container_name = "{container}"
restart = "no"
memory = "2g"
"#
        ),
    );
    let up = util::bakeoff(&["seat", "up", "--fleet", &f, "boxed"]);
    assert_eq!(code(&up), 0, "{}", text(&up));
    let out = dir.path().join("monitor");
    let m = util::bakeoff(&[
        "seat",
        "monitor",
        "--fleet",
        &f,
        "boxed",
        "--interval",
        "1",
        "--duration",
        "3",
        "--probe-timeout",
        "120",
        "--out",
        out.to_str().unwrap(),
    ]);
    let _ = util::bakeoff(&["seat", "down", "--fleet", &f, "boxed"]);
    assert_eq!(code(&m), 0, "{}", text(&m));
    let summary = valid_summary(&out);
    assert_eq!(summary["ended_by"], "duration");
    let all = samples(&out);
    assert!(!all.is_empty());
    for s in &all {
        assert_eq!(s["answering"], true, "{s}");
        let fp = &s["footprint"];
        assert_eq!(fp["source"], "docker-stats", "{s}");
        assert_eq!(
            fp["detail"],
            format!("container {container}").as_str(),
            "{s}"
        );
        assert!(fp["bytes"].as_u64().unwrap() > 10 << 20, "{s}");
        assert!(s["started_at"].is_string(), "{s}");
    }
    eprintln!(
        "container footprint {:?} MiB (docker stats)",
        all.iter()
            .map(|s| s["footprint"]["bytes"].as_u64().unwrap() >> 20)
            .collect::<Vec<_>>()
    );
}
