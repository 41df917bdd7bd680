//! Bench windows over a production seat (docs/field-cases.md F8): refused without `--confirm` with the
//! seat untouched; with it, the seat waited for until idle, stopped, restored and serving again
//! with its downtime recorded; and a seat kept busy is waited for and the candidate skipped,
//! never forced.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::*;
use crate::util::{code, free_port, serial_tempdir, stdout, text};

/// A production seat `prod` and a bench seat `trial` on the same port, and a campaign whose
/// one candidate (from `trial`) displaces `prod`.
fn window_files(dir: &Path, idle_for_s: u64, idle_timeout_s: u64) -> (Files, u16) {
    let port = free_port();
    let fleet = format!(
        "{}{}",
        process_seat("prod", "production", port),
        process_seat("trial", "bench", port)
    );
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "windowed"
seat = "trial"
[candidate.window]
displaces = ["prod"]
idle_for_s = {idle_for_s}
idle_timeout_s = {idle_timeout_s}
"#,
        header = campaign_header("window-test")
    );
    (Files::write(dir, &fleet, &campaign), port)
}

#[tokio::test]
async fn a_window_over_a_production_seat_needs_confirm_and_restores_it() {
    let (_g, dir) = serial_tempdir().await;
    let (f, port) = window_files(dir.path(), 1, 30);
    let _cleanup = f.guard();
    f.seat_up("prod");
    let pid = f.pid("prod").unwrap();
    assert_serves(port, "prod");

    // (a) Without --confirm: the plan, exit 1, and prod untouched.
    let o = f.run(&[]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let plan = stdout(&o);
    assert!(plan.contains("windowed"), "{plan}");
    assert!(plan.contains("launch: "), "{plan}");
    assert!(plan.contains("displaces: prod (production, up)"), "{plan}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--confirm"), "{err}");
    assert_eq!(f.pid("prod"), Some(pid), "prod was restarted");
    assert!(alive(pid));
    assert_serves(port, "prod after the refusal");
    assert!(
        !f.out.join("campaign.journal.jsonl").exists(),
        "a refused campaign wrote a journal"
    );

    // (b) With --confirm: prod stopped for the window, the variant measured, prod restored.
    let o = f.run(&["--confirm"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let r = row(&rec, "windowed");
    assert_eq!(r["outcome_label"], "completed", "{r:#}");
    assert!(
        f.out.join("windowed.bakeoff.json").exists(),
        "{:?}",
        r["artifacts"]
    );
    let d = &r["displaced"][0];
    assert_eq!(d["seat"], "prod", "{r:#}");
    assert_eq!(d["was_up"], true, "{r:#}");
    assert_eq!(d["restored"], true, "{r:#}");
    assert!(d["down_ms"].is_u64(), "{r:#}");
    assert!(r["timings"]["production_down_ms"].is_u64(), "{r:#}");
    assert!(r["timings"]["idle_wait_ms"].is_u64(), "{r:#}");
    // The journal announced the stop before it and recorded the restore.
    let j = f.journal();
    let displacing = j
        .iter()
        .position(|e| e["event"] == "displacing" && e["seat"] == "prod")
        .expect("a displacing line");
    let starting = j
        .iter()
        .position(|e| e["event"] == "seat-starting" && e["variant"] == "windowed")
        .expect("a seat-starting line");
    let restored = j
        .iter()
        .position(|e| e["event"] == "restored" && e["seat"] == "prod" && e["ok"] == true)
        .expect("a restored line");
    assert!(displacing < starting && starting < restored, "{j:#?}");
    // prod serves again (a new process: it was stopped and started).
    let restored_pid = f.pid("prod").expect("prod is up again");
    assert!(alive(restored_pid));
    assert_serves(port, "prod after the window");
    assert!(
        f.pid("windowed").is_none(),
        "the variant's seat is still up"
    );
    f.seat_down("prod");
    assert!(!alive(restored_pid));
}

/// Stream long completions from `port` back to back until `stop`: the seat is never idle.
pub(crate) fn keep_busy(
    port: u16,
    model: &'static str,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u32> {
    std::thread::spawn(move || {
        let mut sent = 0;
        while !stop.load(Ordering::SeqCst) {
            if stream_once(port, model, &stop).is_err() {
                std::thread::sleep(Duration::from_millis(100));
            }
            sent += 1;
        }
        sent
    })
}

/// One streamed completion of up to 2000 tokens (`ignore_eos`: it does not end early), read
/// until the server ends it or `stop`.
fn stream_once(port: u16, model: &str, stop: &AtomicBool) -> std::io::Result<()> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_millis(300)))?;
    let body = serde_json::json!({
        "model": model,
        "messages": [{"role": "user", "content": "Write a very long story about a lighthouse keeper."}],
        "max_tokens": 2000,
        "ignore_eos": true,
        "stream": true,
    })
    .to_string();
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut buf = [0u8; 8192];
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The seat's `/slots` says a slot is processing.
fn processing(port: u16) -> bool {
    http(port, "GET", "/slots", None).is_ok_and(|(status, body)| {
        status == 200
            && serde_json::from_str::<Value>(&body).is_ok_and(|v| {
                v.as_array()
                    .is_some_and(|slots| slots.iter().any(|s| s["is_processing"] == true))
            })
    })
}

#[tokio::test]
async fn a_busy_displaced_seat_is_waited_for_and_the_candidate_skipped() {
    let (_g, dir) = serial_tempdir().await;
    let (f, port) = window_files(dir.path(), 2, 5);
    let _cleanup = f.guard();
    f.seat_up("prod");
    let pid = f.pid("prod").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let client = keep_busy(port, SERVED, stop.clone());
    wait_until("prod to be processing", Duration::from_secs(60), || {
        processing(port)
    });

    let o = f.run(&["--confirm"]);
    stop.store(true, Ordering::SeqCst);
    let sent = client.join().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(sent >= 1);
    let rec = f.record();
    let r = row(&rec, "windowed");
    assert_eq!(r["outcome_label"], "skipped:not-idle", "{r:#}");
    assert!(
        r["outcome"]["message"].as_str().unwrap().contains("prod"),
        "{r:#}"
    );
    let d = &r["displaced"][0];
    assert_eq!(d["seat"], "prod", "{r:#}");
    assert_eq!(d["was_up"], true, "{r:#}");
    // Never stopped, so nothing to restore.
    assert!(d["restored"].is_null(), "{r:#}");
    assert!(
        !f.journal()
            .iter()
            .any(|e| e["event"] == "displacing" || e["event"] == "seat-starting"),
        "{:#?}",
        f.journal()
    );
    // prod was never stopped: the same process serves.
    assert_eq!(f.pid("prod"), Some(pid));
    assert!(alive(pid));
    assert!(f.pid("windowed").is_none());
    assert_serves(port, "prod after the skipped window");
    f.seat_down("prod");
}
