//! `harness-bench --sessions N`: can the harness hold N concurrent agent sessions against the
//! loopback target and keep their tool waits on time? (docs/performance.md, "Sessions at
//! scale".) One client core (a current-thread runtime) plus the session wake thread; the
//! target in a child process. Prints the send lateness of every turn that followed a tool wait
//! (the first turns are sent the moment a worker is free, so they have none), the turns and
//! sessions sent, and the client's peak RSS.

use std::sync::Arc;
use std::time::Duration;

use bakeoff_load::workload::Workload;
use bakeoff_load::workload::sessions::{Sessions, WaitSpec};
use bakeoff_load::{LengthSpec, Mode, NoProgress, StepBound, calibrate};

pub fn run(sessions: u32, secs: u64) -> Result<serde_json::Value, String> {
    let (mut child, url) = super::spawn_target(&[])?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let result = rt.block_on(measure(&url, sessions, secs));
    drop(child.stdin.take());
    let _ = child.kill();
    let _ = child.wait();
    result
}

async fn measure(url: &str, sessions: u32, secs: u64) -> Result<serde_json::Value, String> {
    let c = super::client(url)?;
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let bound = StepBound {
        requests: None,
        duration: Some(Duration::from_secs(secs)),
        completed: None,
    };
    let mut p = calibrate::calib_plan(sessions, 64, bound);
    p.mode = Mode::Closed {
        concurrency: vec![sessions],
    };
    p.keep_requests = true;
    p.warmup_requests = 0;
    p.prompt_tokens = LengthSpec::Fixed(512);
    p.workload = Workload::Sessions(Sessions {
        turns: 30,
        system_prompt_tokens: 256,
        tool_result_tokens: LengthSpec::Uniform { min: 64, max: 512 },
        tool_wait: WaitSpec::LogNormal {
            median: 1.0,
            sigma: 0.8,
        },
        fork: None,
        tools: false,
    });
    let rss_before = calibrate::peak_rss_mib();
    let r = bakeoff_load::run(&c, &p, Arc::new(NoProgress), rx)
        .await
        .map_err(|e| e.to_string())?;
    let s = r.steps.first().ok_or("no step")?;
    let mut late: Vec<f64> = s
        .requests
        .iter()
        .filter(|q| q.tool_wait_ms.is_some())
        .map(|q| q.sent_ms - q.intended_ms)
        .collect();
    late.sort_by(f64::total_cmp);
    let q =
        |p: f64| (!late.is_empty()).then(|| late[((late.len() - 1) as f64 * p).round() as usize]);
    let sess = s.sessions.as_ref();
    Ok(serde_json::json!({
        "machine": {
            "available_parallelism": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "client_runtime": "tokio current_thread (one client core) plus the session wake thread; target in a child process",
        },
        "sessions": {
            "concurrent": sessions,
            "seconds": secs,
            "turns_per_session": 30,
            "tool_wait": "log-normal, median 1 s, sigma 0.8",
            "started": sess.map(|x| x.started),
            "completed": sess.map(|x| x.completed),
            "sent_by_turn": sess.map(|x| x.turns.iter().map(|t| t.sent).collect::<Vec<_>>()),
            "turns_sent": s.sent,
            "turns_ok": s.ok,
            "errors": s.errors,
            "waited_turns": late.len(),
            "send_lateness_after_wait_p50_ms": q(0.5),
            "send_lateness_after_wait_p99_ms": q(0.99),
            "send_lateness_after_wait_max_ms": late.last(),
            "mean_prompt_tokens": s.mean_prompt_tokens,
        },
        "client_peak_rss_mib": calibrate::peak_rss_mib(),
        "client_peak_rss_before_mib": rss_before,
    }))
}
