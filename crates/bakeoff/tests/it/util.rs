//! What the tests of the binary share: running `bakeoff`, reading what it printed, the ports
//! and paths the tests point it at, and the artifacts it wrote.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `bakeoff` binary as a command, without the operator's `BAKEOFF_API_KEY` or `COLUMNS`
/// (its tables are then laid out at the default 120 columns, whatever terminal runs the tests).
pub fn bakeoff_cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bakeoff"));
    c.env_remove("BAKEOFF_API_KEY").env_remove("COLUMNS");
    c
}

/// [`bakeoff`] with tables laid out 400 columns wide: for tests that read whole cells back
/// from a table's lines.
pub fn bakeoff_wide(args: &[&str]) -> Output {
    bakeoff_cmd()
        .env("COLUMNS", "400")
        .args(args)
        .output_bounded()
        .expect("run bakeoff")
}

/// Run `bakeoff ARGS…` to the end.
pub fn bakeoff(args: &[&str]) -> Output {
    bakeoff_cmd()
        .args(args)
        .output_bounded()
        .expect("run bakeoff")
}

/// The longest any one command of a test may run. A command that hangs (a wait without a
/// timeout, a read that blocks forever) fails its test with what it printed so far instead of
/// holding the engine lock until CI's own limit ends the whole run.
pub const COMMAND_LIMIT: Duration = Duration::from_secs(900);

/// [`Command::output`] bounded by [`COMMAND_LIMIT`]: past it the process is killed and the
/// test panics with the command and its output so far.
pub trait Bounded {
    fn output_bounded(&mut self) -> std::io::Result<Output>;
}

impl Bounded for Command {
    fn output_bounded(&mut self) -> std::io::Result<Output> {
        let what = format!("{:?}", self);
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        Ok(finish_within(child, COMMAND_LIMIT, &what))
    }
}

/// Waits for `child` (its stdout and stderr piped) and for its streams to close, at most
/// `limit` in all; past that kills it and panics, printing `what` and the output so far (a seat
/// the command left running may hold its streams open).
pub fn finish_within(mut child: Child, limit: Duration, what: &str) -> Output {
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    type Sink = Arc<Mutex<Vec<u8>>>;
    fn drain<R: Read + Send + 'static>(r: Option<R>) -> (Sink, std::thread::JoinHandle<()>) {
        let sink: Sink = Arc::default();
        let into = Arc::clone(&sink);
        let h = std::thread::spawn(move || {
            let Some(mut r) = r else { return };
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = r.read(&mut buf) {
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        (sink, h)
    }
    let (out, out_h) = drain(child.stdout.take());
    let (err, err_h) = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let mut status = None;
    loop {
        if status.is_none() {
            status = child.try_wait().expect("wait for a command");
        }
        if let Some(st) = status
            && out_h.is_finished()
            && err_h.is_finished()
        {
            let take = |s: &Sink| std::mem::take(&mut *s.lock().unwrap());
            return Output {
                status: st,
                stdout: take(&out),
                stderr: take(&err),
            };
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let show = |s: &Sink| String::from_utf8_lossy(&s.lock().unwrap()).into_owned();
            panic!(
                "{what} ran past {} s and was killed\nstdout:\n{}\nstderr:\n{}",
                limit.as_secs(),
                show(&out),
                show(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// [`bakeoff`] off the async runtime (a scripted server in this process keeps serving).
pub async fn bakeoff_async(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        bakeoff(&a)
    })
    .await
    .unwrap()
}

/// One engine test at a time (the machine has 2 cores), in its own temporary directory.
pub async fn serial_tempdir() -> (bakeoff_testkit::Serial, tempfile::TempDir) {
    (bakeoff_testkit::serial().await, bakeoff_testkit::tempdir())
}

/// `bakeoff eval run --endpoint URL --out OUT` plus `extra`.
pub fn eval_run(url: &str, out: &Path, extra: &[&str]) -> Output {
    bakeoff(&eval_run_args(url, out, extra))
}

/// [`eval_run`] off the async runtime.
pub async fn eval_run_async(url: &str, out: &Path, extra: &[&str]) -> Output {
    bakeoff_async(&eval_run_args(url, out, extra)).await
}

fn eval_run_args<'a>(url: &'a str, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "eval",
        "run",
        "--endpoint",
        url,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    args
}

/// [`eval_run`], started with its output piped.
pub fn spawn_eval_run(url: &str, out: &Path, extra: &[&str]) -> Child {
    bakeoff_cmd()
        .args(eval_run_args(url, out, extra))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The output of `child` once it ended, waited for off the async runtime.
pub async fn wait_output(child: Child) -> Output {
    tokio::task::spawn_blocking(move || finish_within(child, COMMAND_LIMIT, "a spawned command"))
        .await
        .unwrap()
}

/// Wait (off the async runtime) until the run journal in `out` has its first line.
pub async fn journal_started(out: &Path, limit: Duration) {
    let out = out.to_path_buf();
    tokio::task::spawn_blocking(move || wait_for_journal(&out, 1, limit))
        .await
        .unwrap();
}

/// A small real load sweep for `eval run`: c = 1, 2, two requests a step, 16-token prompts,
/// 8-token outputs.
pub const SMALL_SWEEP: [&str; 8] = [
    "--load-concurrency",
    "1,2",
    "--load-requests",
    "2",
    "--load-prompt-tokens",
    "16",
    "--load-output-tokens",
    "8",
];

/// The exit code, -1 when a signal ended the process.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Both streams, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A port nothing listens on: one the OS just handed out, closed again.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// An endpoint where nothing listens: preflight finds it unreachable at once.
pub fn dead_port_url() -> String {
    format!("http://127.0.0.1:{}", free_port())
}

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The first file in `dir` whose name ends with `suffix`, parsed.
pub fn artifact(dir: &Path, suffix: &str) -> Value {
    let p = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("no *{suffix} in {}", dir.display()));
    read_json(&p)
}

/// The one file in `dir` whose name ends with `suffix`.
pub fn only_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one *{suffix} in {}: {found:?}",
        dir.display()
    );
    found[0].clone()
}

/// Validate against the checked-in schema, the public contract.
pub fn assert_valid(v: &Value) {
    let schema = read_json(&root().join("schemas/artifact.v1.schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "artifact does not validate: {errors:#?}");
}

/// [`artifact`], checked against the schema.
pub fn valid_artifact(dir: &Path, suffix: &str) -> Value {
    let v = artifact(dir, suffix);
    assert_valid(&v);
    v
}

/// Wait until `dir` holds a run journal with at least `n` lines, at most `limit`.
pub fn wait_for_journal(dir: &Path, n: usize, limit: Duration) {
    let start = Instant::now();
    loop {
        let journal = std::fs::read_dir(dir).ok().and_then(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.to_string_lossy().ends_with(".journal.jsonl"))
        });
        if journal.is_some_and(|p| {
            std::fs::read_to_string(&p)
                .unwrap_or_default()
                .lines()
                .count()
                >= n
        }) {
            return;
        }
        assert!(start.elapsed() < limit, "journal never reached {n} lines");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The first `n` prompts of `eval damage`'s shipped set, as a `--prompts` file in `dir` (a
/// short run on 2 cores; `eval adapter` reads the same format).
pub fn first_prompts(dir: &Path, n: usize) -> PathBuf {
    let shipped = include_str!("../../../bakeoff-measure/data/damage-prompts.jsonl");
    let lines: Vec<&str> = shipped.lines().take(n).collect();
    let p = dir.join(format!("prompts-{n}.jsonl"));
    std::fs::write(&p, lines.join("\n")).unwrap();
    p
}

/// A real llama-server (the test model, one slot) with `extra` flags, logging into
/// `dir/name`.
pub async fn logged_llama(dir: &Path, name: &str, extra: &[&str]) -> bakeoff_local::LlamaServer {
    let logs = dir.join(name);
    std::fs::create_dir_all(&logs).unwrap();
    bakeoff_testkit::real_llama(4096, 1, extra, &logs).await
}

/// The real llama-server serving the second test model, SmolLM2 135M Instruct (one slot,
/// `extra` flags), logging into `dir/name.log`.
pub async fn smollm2_llama(dir: &Path, name: &str, extra: &[&str]) -> bakeoff_local::LlamaServer {
    let spec = bakeoff_local::LlamaServerSpec {
        bin: bakeoff_testkit::engine().llama_server,
        model: bakeoff_testkit::smollm2_path(),
        ctx: 4096,
        parallel: 1,
        alias: Some("smollm2-135m-instruct".into()),
        extra_args: extra.iter().map(|s| s.to_string()).collect(),
        log: dir.join(format!("{name}.log")),
    };
    let mut s = bakeoff_local::LlamaServer::start(&spec).await.unwrap();
    s.wait_healthy(std::time::Duration::from_secs(120))
        .await
        .unwrap();
    s
}

/// Busy loops (`sh -c 'while :; do :; done'`) that die with the test, even when an assertion
/// fails first: the real neighbour of the contamination tests.
pub struct Hogs(Vec<Child>);

impl Hogs {
    pub fn spin(n: usize) -> Self {
        Hogs(
            (0..n)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }

    pub fn pids(&self) -> Vec<u64> {
        self.0.iter().map(|c| u64::from(c.id())).collect()
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `bakeoff bench run --endpoint URL … --warmup 0 --no-calibrate --out OUT`: a quick sweep for
/// tests that look at what one step records, `extra` its levels, lengths and workload.
pub fn bench_quick(url: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["bench", "run", "--endpoint", url];
    args.extend(extra);
    args.extend([
        "--warmup",
        "0",
        "--no-calibrate",
        "--out",
        out.to_str().unwrap(),
    ]);
    bakeoff(&args)
}

/// Drop `path`'s clean, unmapped pages from the page cache (`posix_fadvise(DONTNEED)`): a cold
/// start on purpose.
pub fn drop_from_cache(path: &Path) {
    let st = Command::new("python3")
        .arg("-c")
        .arg(
            "import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); \
             os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)",
        )
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}
