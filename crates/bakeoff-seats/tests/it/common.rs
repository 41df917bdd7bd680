//! Shared test support: fleet files in temporary directories, free ports, and guards that
//! remove what a test started (processes, containers, images) even when it panics.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bakeoff_seats::{Fleet, Seats, WatchOptions};

/// One engine test at a time (the machine has 2 cores), in its own temporary directory.
pub async fn serial_tempdir() -> (bakeoff_testkit::Serial, tempfile::TempDir) {
    (bakeoff_testkit::serial().await, bakeoff_testkit::tempdir())
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Short timeouts: the test model loads in about a second.
pub fn quick_watch(silence_s: f64) -> WatchOptions {
    WatchOptions {
        silence_timeout: Duration::from_secs_f64(silence_s),
        ready_timeout: Duration::from_secs(120),
        load_budget: None,
        crash_loop_restarts: 3,
        crash_loop_window: Duration::from_secs(120),
        probe_interval: Duration::from_millis(300),
        events: None,
        ..WatchOptions::default()
    }
}

/// A process seat (role bench): `command args…` on `port`, serving `served`.
pub fn process_seat(
    name: &str,
    engine: &str,
    port: u16,
    command: &str,
    args: &[String],
    served: &str,
) -> String {
    let args = args
        .iter()
        .map(|a| format!("{a:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let header = bakeoff_testkit::fleet::seat_header(name, engine, "bench", port, served);
    format!("{header}[seat.process]\ncommand = \"{command}\"\nargs = [{args}]\n")
}

/// A llama.cpp process seat running the provisioned llama-server on `model`.
pub fn process_fleet(name: &str, port: u16, model: &str) -> String {
    let e = bakeoff_testkit::engine();
    let args = [
        "-m",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        "{port}",
        "-c",
        "1024",
        "-np",
        "1",
        "--alias",
        "gemma-3-270m",
    ]
    .map(String::from);
    let bin = e.llama_server.display().to_string();
    process_seat(name, "llama.cpp", port, &bin, &args, "gemma-3-270m")
}

/// The provisioned test model's path.
pub fn model() -> String {
    bakeoff_testkit::model_path().display().to_string()
}

/// A fleet of the one llama-server seat `name` (see [`process_fleet`]), loaded.
pub fn one_seat(dir: &Path, name: &str, port: u16, model: &str, watch: WatchOptions) -> Seats {
    fleet(dir, &process_fleet(name, port, model), watch)
}

/// The one llama-server seat `name` given a FIFO (DIR/model.fifo) as its model.
pub fn fifo_seat(dir: &Path, name: &str, watch: WatchOptions) -> Seats {
    let fifo = fifo(dir).display().to_string();
    one_seat(dir, name, free_port(), &fifo, watch)
}

/// A FIFO at DIR/model.fifo: llama-server given it as the model logs its first loading line
/// and blocks opening it.
pub fn fifo(dir: &Path) -> PathBuf {
    let fifo = dir.join("model.fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    fifo
}

/// Write `toml` as DIR/fleet.toml and load it.
pub fn fleet(dir: &Path, toml: &str, watch: WatchOptions) -> Seats {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, toml).unwrap();
    let f = Fleet::load(&p).unwrap();
    Seats::new(f, dir.join("results"), watch)
}

pub fn read_failure(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The failure artifact an `up` wrote.
pub fn failure_of(out: &bakeoff_seats::UpOutcome) -> serde_json::Value {
    read_failure(out.failure_path.as_ref().expect("a failure artifact"))
}

/// The report's class is `class`.
pub fn assert_class(r: &bakeoff_seats::WatchReport, class: bakeoff_artifact::FailureClass) {
    assert_eq!(r.class, Some(class), "{} {:?}", r.message, r.tail);
}

/// Some line of `lines` (a report's tail or notes) contains `needle`.
pub fn assert_any_line(lines: &[String], needle: &str) {
    assert!(lines.iter().any(|l| l.contains(needle)), "{lines:?}");
}

/// A unique name for this test's containers and images.
pub fn unique(prefix: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{prefix}-{}-{}", std::process::id(), n % 1_000_000_000)
}

/// A Docker image imported from the cached rootfs (scripts/seat-rootfs.sh) under a unique
/// tag; removed on drop, with every container named in `containers`.
pub struct TestImage {
    pub tag: String,
    pub containers: std::sync::Mutex<Vec<String>>,
}

impl TestImage {
    pub fn build() -> TestImage {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/seat-rootfs.sh");
        let out = std::process::Command::new("bash")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/seat-rootfs.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tarball = String::from_utf8_lossy(&out.stdout).trim().to_string();
        import(Path::new(&tarball), "bakeoff-seat-test")
    }

    /// A tiny image of this machine's `/bin/sh` and `/bin/sleep` with the libraries `ldd`
    /// names (no registry: `docker import`), for seats that are a shell loop rather than an
    /// engine.
    pub fn shell() -> TestImage {
        let dir = tempfile::tempdir().unwrap();
        let mut files = vec!["/bin/sh".to_string(), "/bin/sleep".to_string()];
        for bin in ["/bin/sh", "/bin/sleep"] {
            let out = std::process::Command::new("ldd").arg(bin).output().unwrap();
            for tok in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if tok.starts_with('/') && !files.iter().any(|f| f == tok) {
                    files.push(tok.to_string());
                }
            }
        }
        let tarball = dir.path().join("shell.tar");
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
        import(&tarball, "bakeoff-seat-shell")
    }

    pub fn track(&self, container: &str) {
        self.containers.lock().unwrap().push(container.to_string());
    }
}

/// `docker import TARBALL <unique PREFIX>:test`, removed on drop.
fn import(tarball: &Path, prefix: &str) -> TestImage {
    let tag = format!("{}:test", unique(prefix));
    let st = std::process::Command::new("docker")
        .arg("import")
        .arg(tarball)
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

impl Drop for TestImage {
    fn drop(&mut self) {
        for c in self
            .containers
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
        {
            let _ = std::process::Command::new("docker")
                .args(["rm", "-f", &c])
                .output();
        }
        let _ = std::process::Command::new("docker")
            .args(["rmi", "-f", &self.tag])
            .output();
    }
}

/// Stops the named process seats on drop (a panicking test leaves no server behind).
pub struct StopOnDrop<'a> {
    pub seats: &'a Seats,
    pub names: Vec<String>,
}

impl<'a> StopOnDrop<'a> {
    /// Every seat of the fleet (a seat that is not a running process has no state file).
    pub fn all(seats: &'a Seats) -> Self {
        let names = seats.fleet.seats.iter().map(|s| s.name.clone()).collect();
        StopOnDrop { seats, names }
    }
}

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        for n in &self.names {
            // The state file holds the pid; kill its process group synchronously.
            let p = self.seats.fleet.state_dir.join(format!("{n}.process.json"));
            if let Ok(t) = std::fs::read_to_string(&p)
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(&t)
                && let Some(pid) = v["pid"].as_u64()
                && pid > 1
                && let Some(pid) = i32::try_from(pid)
                    .ok()
                    .and_then(rustix::process::Pid::from_raw)
            {
                // Signal the group directly: `/usr/bin/kill -KILL -<pgid>` (procps-ng here)
                // reads the negative pid as "-1" and sends SIGKILL to every process the user
                // may signal — it took down the test runner, dockerd and the shell.
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            }
        }
    }
}
