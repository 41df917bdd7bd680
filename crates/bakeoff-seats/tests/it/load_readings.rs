//! Readings during a seat's load, against real parts: a real container whose command writes
//! a few hundred MB under an unmounted `/root/.cache/huggingface` (docs/field-cases.md B7: ~20 GB of GGUF
//! went silently into the writable layer) and the same seat with that path mounted; a real
//! process seat whose partial blob stops growing while a real `flock` process holds its lock
//! (docs/field-cases.md B6: the stall was the lock); and the real llama-server coming up, which leaves
//! its start record with the load timing for `seat status`.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use bakeoff_artifact::SeatFinding;
use bakeoff_seats::{Seats, WatchOptions};

use crate::common::*;

/// Watch options for a seat that never serves: a short silence, a 1 s disk sample, and a
/// 100 MB writable-layer limit.
fn readings_watch(silence_s: f64) -> WatchOptions {
    WatchOptions {
        ready_timeout: Duration::from_secs(60),
        disk_every: Duration::from_secs(1),
        writable_layer_limit: 100 << 20,
        download_stall: Duration::from_secs(2),
        ..quick_watch(silence_s)
    }
}

/// The image of [`TestImage::shell`] with `mkdir` and `dd` beside `sh` and `sleep` (and the
/// libraries `ldd` names): a seat that writes files in directories that do not exist yet.
fn writer_image() -> TestImage {
    let dir = tempfile::tempdir().unwrap();
    let bins = ["/bin/sh", "/bin/sleep", "/bin/mkdir", "/bin/dd"];
    let mut files: Vec<String> = bins.iter().map(|b| b.to_string()).collect();
    for bin in bins {
        let out = std::process::Command::new("ldd").arg(bin).output().unwrap();
        for tok in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if tok.starts_with('/') && !files.iter().any(|f| f == tok) {
                files.push(tok.to_string());
            }
        }
    }
    let tarball = dir.path().join("writer.tar");
    // -h: store what symlinks point at (merged /usr: /bin and /lib64 are links).
    let st = std::process::Command::new("tar")
        .arg("-chf")
        .arg(&tarball)
        .arg("-C")
        .arg("/")
        .args(files.iter().map(|f| f.trim_start_matches('/')))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "tar: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    let tag = format!("{}:test", unique("bakeoff-seat-writer"));
    let st = std::process::Command::new("docker")
        .arg("import")
        .arg(&tarball)
        .arg(&tag)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "docker import failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    TestImage {
        tag,
        containers: std::sync::Mutex::new(Vec::new()),
    }
}

/// A container seat that waits 3 s (so the first sample is taken before it writes), writes
/// 300 MiB under `/root/.cache/huggingface`, says so, and sleeps without ever serving.
fn writer_seat(name: &str, image: &str, mounts: &str) -> String {
    format!(
        r#"
[[seat]]
name = "{name}"
engine = "generic"
role = "bench"
port = {port}
stop_timeout_s = 1
[seat.docker]
image = "{image}"
command = ["/bin/sh", "-c", "sleep 3; mkdir -p /root/.cache/huggingface; dd if=/dev/zero of=/root/.cache/huggingface/blob bs=1M count=300; echo written; sleep 600"]
container_name = "{name}"
restart = "no"
{mounts}
"#,
        port = free_port(),
    )
}

fn finding<'a>(findings: &'a [SeatFinding], code: &str) -> Option<&'a SeatFinding> {
    findings.iter().find(|f| f.code == code)
}

/// The number after `prefix` in one of `evidence`'s lines (`growth: 314572800 bytes`).
fn evidence_number(f: &SeatFinding, prefix: &str) -> u64 {
    f.evidence
        .iter()
        .find_map(|e| e.strip_prefix(prefix))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix:?} in {f:?}"))
}

/// docs/field-cases.md B7: a download into an unmounted cache path grows the container's writable layer;
/// the watch flags it once, with the growth, in the report and in the failure artifact; the
/// same seat with the path mounted is not flagged, and its download shows as progress.
#[tokio::test]
async fn a_download_into_the_writable_layer_is_flagged_and_a_mounted_one_is_progress() {
    let _g = bakeoff_testkit::serial().await;
    let img = writer_image();
    let dir = bakeoff_testkit::tempdir();

    let name = unique("bk-layer");
    img.track(&name);
    let seats = fleet(
        dir.path(),
        &writer_seat(&name, &img.tag, ""),
        readings_watch(10.0),
    );
    let out = seats.up(&name, false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!r.ready());
    let flagged: Vec<_> = r
        .findings
        .iter()
        .filter(|f| f.code == "download-in-writable-layer")
        .collect();
    assert_eq!(flagged.len(), 1, "{:?}", r.findings);
    let f = flagged[0];
    assert_eq!(f.severity, bakeoff_artifact::FindingSeverity::Warning);
    assert!(evidence_number(f, "growth: ") >= 300 << 20, "{f:?}");
    assert!(
        evidence_number(f, "SizeRw last: ") > evidence_number(f, "SizeRw first: "),
        "{f:?}"
    );
    assert!(f.evidence.iter().any(|e| e.starts_with("rate: ")), "{f:?}");
    assert!(
        f.fix
            .as_deref()
            .unwrap()
            .contains(":/root/.cache/huggingface"),
        "{f:?}"
    );
    let art = failure_of(&out);
    let in_artifact = art["seat"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "download-in-writable-layer")
        .cloned()
        .unwrap_or_else(|| panic!("{}", art["seat"]));
    assert!(
        in_artifact["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().starts_with("growth: ")),
        "{in_artifact}"
    );
    seats.down(&name, false).await.unwrap();

    // The same seat with a host directory mounted on the cache path.
    let cache = dir.path().join("hf-cache");
    std::fs::create_dir_all(&cache).unwrap();
    let name = unique("bk-mounted");
    img.track(&name);
    let mounts = format!(
        "mounts = [\"{}:/root/.cache/huggingface\"]",
        cache.display()
    );
    let seats = fleet(
        dir.path(),
        &writer_seat(&name, &img.tag, &mounts),
        readings_watch(10.0),
    );
    let out = seats.up(&name, false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(
        finding(&r.findings, "download-in-writable-layer").is_none(),
        "{:?}",
        r.findings
    );
    let p = finding(&r.findings, "download-progress").unwrap_or_else(|| panic!("{:?}", r.findings));
    assert!(
        p.evidence
            .iter()
            .any(|e| e.starts_with(&cache.display().to_string())),
        "{p:?}"
    );
    seats.down(&name, false).await.unwrap();
}

/// docs/field-cases.md B6: a partial blob that stopped growing while a live process holds its lock is a
/// stalled download naming that process, not a slow one.
#[tokio::test]
async fn a_stalled_download_names_the_process_holding_its_lock() {
    let (_g, dir) = serial_tempdir().await;
    let hf = dir.path().join("hf");
    let locks = hf.join("hub/.locks/models--org--model");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = locks.join("abc.lock");
    // A real holder: flock(1) takes the lock and keeps it while its command runs; in its own
    // process group, so the guard ends it and its `sleep` together.
    let holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["sleep", "60"])
        .process_group(0)
        .spawn()
        .unwrap();
    let holder = KillGroupOnDrop(holder);
    let holder_pid = holder.0.id();
    wait_for_lock(&lock);

    let script = "B=\"$HF_HOME/hub/models--org--model/blobs\"; mkdir -p \"$B\"; i=0; \
                  while [ $i -lt 5 ]; do head -c 1000000 /dev/zero >> \"$B/abc.incomplete\"; sleep 0.3; i=$((i+1)); done; \
                  echo stopped; sleep 60";
    let port = free_port();
    let toml = format!(
        "{}env = {{ HF_HOME = \"{}\" }}\n",
        process_seat(
            "stall",
            "generic",
            port,
            "/bin/sh",
            &["-c".to_string(), script.to_string()],
            "m"
        ),
        hf.display()
    );
    let seats = fleet(dir.path(), &toml, readings_watch(8.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("stall", false, false).await.unwrap();
    drop(holder);
    let r = out.report.as_ref().unwrap();
    let f = finding(&r.findings, "download-stalled").unwrap_or_else(|| panic!("{:?}", r.findings));
    assert_eq!(f.severity, bakeoff_artifact::FindingSeverity::Warning);
    assert_eq!(
        f.fix.as_deref(),
        Some(format!("end {holder_pid} (a stale pull holds the lock)").as_str()),
        "{f:?}"
    );
    assert!(
        f.evidence
            .iter()
            .any(|e| e.contains(&format!("held by pid {holder_pid}: flock"))),
        "{f:?}"
    );
    // It grew before it stalled: progress was seen too.
    assert!(
        finding(&r.findings, "download-progress").is_some(),
        "{:?}",
        r.findings
    );
    let art = failure_of(&out);
    assert!(
        art["seat"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "download-stalled"),
        "{}",
        art["seat"]
    );
}

/// Ends a child's process group (it and what it started) when dropped, even on a panic.
struct KillGroupOnDrop(std::process::Child);

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = i32::try_from(self.0.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.0.wait();
    }
}

/// `flock` has taken `lock` (it appears in `/proc/locks`); bounded by a count of reads, not by
/// time.
fn wait_for_lock(lock: &Path) {
    use std::os::unix::fs::MetadataExt;
    for _ in 0..200 {
        if let Ok(m) = std::fs::metadata(lock) {
            let locks = bakeoff_host::ProcRoot::system().locks();
            if locks.iter().any(|l| l.inode == m.ino()) {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("flock never took {}", lock.display());
}

/// The real llama-server comes up: its start record says ready, with the time of each phase,
/// and `seat status` shows the load time.
#[tokio::test]
async fn a_ready_start_leaves_its_record_and_status_shows_the_load() {
    let (_g, dir) = serial_tempdir().await;
    let seats: Seats = one_seat(
        dir.path(),
        "gemma-rec",
        free_port(),
        &model(),
        quick_watch(30.0),
    );
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("gemma-rec", false, false).await.unwrap();
    assert!(out.ok(), "{:?}", out.report.as_ref().map(|r| &r.message));
    let path = bakeoff_seats::ops::start_record_path(&seats.fleet, "gemma-rec");
    let rec: bakeoff_artifact::SeatStartRecord = bakeoff_artifact::read_versioned(&path).unwrap();
    assert!(rec.ready);
    assert_eq!(rec.kind, bakeoff_artifact::SeatStartKind::SeatStart);
    assert!(rec.failure_artifact.is_none());
    let states: Vec<&str> = rec.record.phases.iter().map(|p| p.state.as_str()).collect();
    assert_eq!(states.first(), Some(&"starting"), "{states:?}");
    assert_eq!(states.last(), Some(&"ready"), "{states:?}");
    let to_ready = rec.load.to_ready_ms.unwrap();
    assert!(to_ready <= rec.load.elapsed_ms, "{:?}", rec.load);
    // llama-server logs its load and warm-up: the phases between are timed.
    assert!(rec.load.warming_to_ready_ms.is_some(), "{:?}", rec.load);
    let raw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(raw["schema_version"], 1);
    assert_eq!(raw["kind"], "seat-start");

    let st = seats.status(false).await;
    assert_eq!(st[0].last_load_ms, Some(to_ready));
    let text = bakeoff_seats::render::status_lines_at(&st, &seats.fleet.routes, 200).join("\n");
    assert!(text.contains("load"), "{text}");
    // The figure glued to its unit (a no-break space) so a cell never wraps between them.
    let load = bakeoff_seats::progress::elapsed_text(to_ready).replace(' ', "\u{a0}");
    assert!(text.contains(&load), "{text}");
    let json = bakeoff_seats::render::status_json(&st, &seats.fleet.routes);
    assert_eq!(json["seats"][0]["last_load_ms"], to_ready);
    seats.down("gemma-rec", false).await.unwrap();
}
