//! `bakeoff campaign …` end to end, through the real binary and the real llama-server
//! (docs/campaign.md): a ladder whose axis separates pass from fail, bench windows over a
//! production seat (idle and busy), a `kill -9` mid-variant and its recovery, a Docker variant,
//! and bad input. Every test that brings up seats holds the crate's engine lock
//! (`util::serial_tempdir`): seats on 2 cores must not contend.
//!
//! What the tests share sits here: the fleet and campaign files, running `campaign run` with
//! short watchdog timeouts, reading `campaign.json` and the journal, a real completion over a
//! raw HTTP/1.1 connection, and a guard that stops every seat a test left behind.

mod ceiling;
mod contaminated;
mod docker;
mod engine_flags;
mod input;
mod isolate;
mod ladder;
mod recovery;
mod tune;
pub(crate) mod window;

use crate::util::Bounded;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{self, read_json, text};

/// `--silence-timeout` of every campaign run here. The issue asked for 5 s; on this 2-core
/// machine under a parallel build a healthy llama-server answering the watchdog's own
/// readiness completion was silent for 5.4 s and read as `init-wedge` (observed, see the
/// report), so the tests allow 15 s: the FIFO variant still wedges, 15 s later.
pub const SILENCE: &str = "15";

/// The model id every test seat serves (`--alias`).
pub const SERVED: &str = "gemma-3-270m";

/// A process seat of the real llama-server on `port`: `-c 1024 -np 1`, a short stop grace.
pub fn process_seat(name: &str, role: &str, port: u16) -> String {
    let e = bakeoff_testkit::engine();
    let header = bakeoff_testkit::fleet::seat_header(name, "llama.cpp", role, port, SERVED);
    format!(
        r#"{header}stop_timeout_s = 3
[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1", "--alias", "{SERVED}"]
"#,
        bin = e.llama_server.display(),
        model = e.model.display()
    )
}

/// The `[campaign]` table: `suites = ["smoke"]`, `limit = 1`, results in `out/` beside it.
pub fn campaign_header(name: &str) -> String {
    format!(
        "[campaign]\nname = \"{name}\"\nfleet = \"fleet.toml\"\nsuites = [\"smoke\"]\nlimit = 1\nout = \"out\"\n"
    )
}

/// A test's files: `DIR/fleet.toml`, `DIR/campaign.toml`, results in `DIR/out`, seat state in
/// `DIR/.bakeoff-seats`.
pub struct Files {
    pub fleet: PathBuf,
    pub campaign: PathBuf,
    pub out: PathBuf,
    pub state: PathBuf,
}

impl Files {
    pub fn write(dir: &Path, fleet: &str, campaign: &str) -> Files {
        let f = Files {
            fleet: dir.join("fleet.toml"),
            campaign: dir.join("campaign.toml"),
            out: dir.join("out"),
            state: dir.join(".bakeoff-seats"),
        };
        std::fs::write(&f.fleet, fleet).unwrap();
        std::fs::write(&f.campaign, campaign).unwrap();
        f
    }

    pub fn fleet_arg(&self) -> &str {
        self.fleet.to_str().unwrap()
    }

    pub fn out_arg(&self) -> &str {
        self.out.to_str().unwrap()
    }

    /// `bakeoff campaign run CAMPAIGN --silence-timeout SILENCE --ready-timeout 60` plus
    /// `extra`.
    pub fn run(&self, extra: &[&str]) -> Output {
        util::bakeoff(&self.run_args(extra))
    }

    pub fn run_args<'a>(&'a self, extra: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![
            "campaign",
            "run",
            self.campaign.to_str().unwrap(),
            "--silence-timeout",
            SILENCE,
            "--ready-timeout",
            "60",
        ];
        args.extend(extra);
        args
    }

    /// `bakeoff seat ARGS… --fleet FLEET`.
    pub fn seat(&self, args: &[&str]) -> Output {
        let mut a = vec!["seat"];
        a.extend(args);
        a.extend(["--fleet", self.fleet_arg()]);
        util::bakeoff(&a)
    }

    /// `seat up NAME --confirm`, asserted ready.
    pub fn seat_up(&self, name: &str) {
        let o = self.seat(&["up", name, "--confirm", "--silence-timeout", "30"]);
        assert_eq!(o.status.code(), Some(0), "seat up {name}: {}", text(&o));
    }

    /// `seat down NAME --confirm`, asserted done.
    pub fn seat_down(&self, name: &str) {
        let o = self.seat(&["down", name, "--confirm"]);
        assert_eq!(o.status.code(), Some(0), "seat down {name}: {}", text(&o));
    }

    /// `campaign.json`.
    pub fn record(&self) -> Value {
        read_json(&self.out.join("campaign.json"))
    }

    /// The journal's lines, parsed.
    pub fn journal(&self) -> Vec<Value> {
        journal_lines(&self.out)
    }

    /// The pid a process seat's state file records, while the file exists.
    pub fn pid(&self, seat: &str) -> Option<u32> {
        pid_in(&self.state, seat)
    }

    /// A guard that stops whatever seat process this test left in its state directory.
    pub fn guard(&self) -> Cleanup {
        Cleanup {
            state: self.state.clone(),
            containers: Vec::new(),
            image: None,
        }
    }
}

/// The journal of a campaign directory, one JSON value per complete line.
pub fn journal_lines(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("campaign.journal.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The row of `variant` in a campaign record.
pub fn row<'a>(rec: &'a Value, variant: &str) -> &'a Value {
    rec["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == variant)
        .unwrap_or_else(|| panic!("no row for {variant} in {rec:#}"))
}

/// The isolation of `candidate` in a campaign record.
pub fn isolation<'a>(rec: &'a Value, candidate: &str) -> &'a Value {
    rec["isolations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["candidate"] == candidate)
        .unwrap_or_else(|| panic!("no isolation of {candidate} in {rec:#}"))
}

/// The rows of a candidate, in campaign order.
pub fn rows_of<'a>(rec: &'a Value, candidate: &str) -> Vec<&'a Value> {
    rec["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["candidate"] == candidate)
        .collect()
}

/// A row's value on one axis.
pub fn axis<'a>(row: &'a Value, flag: &str) -> &'a str {
    row["axes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["flag"] == flag)
        .and_then(|a| a["value"].as_str())
        .unwrap_or_else(|| panic!("no axis {flag} in {row:#}"))
}

/// The strings of a JSON list.
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn pid_in(state: &Path, seat: &str) -> Option<u32> {
    let text = std::fs::read_to_string(state.join(format!("{seat}.process.json"))).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v["pid"].as_u64().and_then(|p| u32::try_from(p).ok())
}

/// The process runs (exists and has not exited).
pub fn alive(pid: u32) -> bool {
    bakeoff_host::ProcRoot::system().is_alive(pid)
}

/// One HTTP/1.1 request to 127.0.0.1:`port` (`Connection: close`): the status and the body, or
/// the error.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(|e| e.to_string())?;
    let body = body.unwrap_or("");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("not HTTP: {raw:?}"))?;
    let body = raw
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// A real chat completion (4 tokens) answered 200 with a choice: the seat serves.
pub fn assert_serves(port: u16, what: &str) {
    let body = serde_json::json!({
        "model": SERVED,
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 4,
    })
    .to_string();
    let r = http(port, "POST", "/v1/chat/completions", Some(&body));
    assert!(
        matches!(&r, Ok((200, b)) if b.contains("\"choices\"")),
        "{what} does not answer a completion on port {port}: {r:?}"
    );
}

/// Wait (polling `what`) at most `limit`; panics naming `what`.
pub fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops, on drop, every seat process a test's state directory still records (a failing test
/// leaves no llama-server behind), and removes the named containers and image.
pub struct Cleanup {
    state: PathBuf,
    pub containers: Vec<String>,
    pub image: Option<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        drop(bakeoff_testkit::fleet::SeatProcessGuard {
            state: self.state.clone(),
        });
        for c in &self.containers {
            let _ = std::process::Command::new("docker")
                .args(["rm", "-f", c])
                .output_bounded();
        }
        if let Some(image) = &self.image {
            let _ = std::process::Command::new("docker")
                .args(["rmi", "-f", image])
                .output_bounded();
        }
    }
}
