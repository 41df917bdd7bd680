//! The process backend against the real llama-server and the real test model
//! (`bakeoff_testkit::engine()`): ready, a wrong model path (`exited`), a FIFO as the model
//! (`init-wedge`: llama-server blocks opening it after its first log lines), a port that is
//! already bound (`port-in-use`, llama.cpp's `couldn't bind HTTP server socket`), and a flag
//! value it refuses (`bad-argument`, llama.cpp's `error while handling argument`).

use bakeoff_seats::Seats;

use crate::common::*;

/// A seat the checkpoint audit refuses before it starts: a hard-coded `--quantization
/// compressed-tensors` over the unquantized BF16 fixture checkpoint (docs/field-cases.md F7).
fn audit_refused_seat(name: &str, port: u16) -> String {
    let bf16 = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bakeoff-model/tests/fixtures/checkpoints/gemma-3-27b-it-bf16")
        .display()
        .to_string();
    process_fleet(name, port, &bf16).replace(
        "\"--alias\"",
        "\"--quantization\", \"compressed-tensors\", \"--alias\"",
    )
}

/// A fleet (not started) of the real llama-server as seat `serving` plus the seat `other`
/// writes for the same port (none when it writes "").
fn serving_and(dir: &std::path::Path, other: impl FnOnce(u16) -> String) -> Seats {
    let port = free_port();
    let model = model();
    let toml = format!("{}{}", process_fleet("serving", port, &model), other(port));
    fleet(dir, &toml, quick_watch(30.0))
}

/// Bring seat `serving` up, ready; its process id.
async fn up_serving(seats: &Seats) -> Option<String> {
    assert!(seats.up("serving", false, false).await.unwrap().ok());
    seats.status(false).await[0].id.clone()
}

/// Seat `serving` (the first) still runs and answers a real completion, and no other seat is
/// up; then it is brought down. Its process id from that status.
async fn assert_still_serving_then_down(seats: &Seats) -> Option<String> {
    let st = seats.status(true).await;
    assert_eq!(st[0].observed, bakeoff_seats::backend::Observed::Running);
    assert_eq!(st[0].serving, Some(true), "{:?}", st[0].detail);
    assert!(st[1..].iter().all(|s| !s.observed.is_up()), "{st:?}");
    seats.down("serving", false).await.unwrap();
    st[0].id.clone()
}

/// [`assert_still_serving_then_down`], and it is the process that served before.
async fn assert_not_restarted_then_down(seats: &Seats, pid_before: Option<String>, why: &str) {
    let id = assert_still_serving_then_down(seats).await;
    assert_eq!(id, pid_before, "{why}");
}

#[tokio::test]
async fn process_seat_comes_up_ready_then_goes_down() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let seats = one_seat(dir.path(), "gemma-proc", port, &model(), quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("gemma-proc", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(out.ok(), "not ready: {} / {:?}", r.message, r.tail);
    let states: Vec<&str> = r.phases.iter().map(|p| p.state.as_str()).collect();
    assert_eq!(states.first(), Some(&"starting"));
    assert_eq!(states.last(), Some(&"ready"));
    assert!(states.contains(&"loading"), "{states:?}");
    assert!(r.preflight.as_ref().unwrap().fit);
    assert!(out.failure_path.is_none());
    eprintln!("process seat ready in {} ms: {states:?}", out.elapsed_ms);

    let st = seats.status(false).await;
    assert_eq!(st[0].observed, bakeoff_seats::backend::Observed::Running);
    // A second seat on the same port is refused while this one is up.
    seats.down("gemma-proc", false).await.unwrap();
    let st = seats.status(false).await;
    assert_eq!(st[0].observed, bakeoff_seats::backend::Observed::Missing);
}

#[tokio::test]
async fn wrong_model_path_is_model_file_missing_with_evidence() {
    let (_g, dir) = serial_tempdir().await;
    let seats = one_seat(
        dir.path(),
        "bad-path",
        free_port(),
        "/nonexistent/model.gguf",
        quick_watch(30.0),
    );
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("bad-path", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!out.ok());
    // The tail holds `failed to open GGUF file '…' (No such file or directory)`: that is the
    // root cause, and its class says the model file is missing (docs/failure-classes.md), not `exited`
    // with "last line: exiting due to model loading error".
    assert_class(r, bakeoff_artifact::FailureClass::ModelFileMissing);
    assert!(
        r.message.contains("failed to open GGUF file"),
        "{}",
        r.message
    );
    assert_eq!(r.exit_code, Some(1));
    assert_any_line(&r.tail, "failed to open GGUF file");
    let art = failure_of(&out);
    assert_eq!(art["kind"], "failure");
    assert_eq!(art["failure"]["class"], "model-file-missing");
    assert_eq!(art["seat"]["root_cause"]["class"], "model-file-missing");
    assert_eq!(art["seat"]["exit_code"], 1);
    assert_eq!(art["seat"]["backend"], "process");
    assert!(art["seat"]["config"]["launch"]["process"]["command"].is_string());
    assert!(
        art["failure"]["remediation"]
            .as_str()
            .unwrap()
            .contains("path")
    );
    assert!(
        art["seat"]["evidence_lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l
                .as_str()
                .unwrap()
                .contains("exiting due to model loading error"))
    );
}

#[tokio::test]
async fn a_refused_flag_value_is_bad_argument_quoting_the_error_line() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let toml = process_fleet("bad-flag", port, &model())
        .replace("\"--alias\"", "\"--cache-type-k\", \"q9_9\", \"--alias\"");
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("bad-flag", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!out.ok());
    // llama-server prints the error, then the flag's usage and `to show complete usage, run
    // with -h`: the message quotes the error line, not the last line.
    assert_class(r, bakeoff_artifact::FailureClass::BadArgument);
    assert!(
        r.message.contains(
            "error while handling argument \"--cache-type-k\": Unsupported cache type: q9_9"
        ),
        "{}",
        r.message
    );
    assert!(
        !r.message.contains("to show complete usage"),
        "{}",
        r.message
    );
    assert_eq!(r.exit_code, Some(1));
    assert_any_line(&r.tail, "to show complete usage, run with -h");
    eprintln!("bad-argument seat: {}", r.message);
    let art = failure_of(&out);
    assert_eq!(art["failure"]["class"], "bad-argument");
    assert_eq!(art["seat"]["root_cause"]["class"], "bad-argument");
    assert_eq!(art["seat"]["exit_code"], 1);
    assert!(
        art["failure"]["remediation"]
            .as_str()
            .unwrap()
            .contains("the engine refused an argument")
    );
}

#[tokio::test]
async fn fifo_model_is_an_init_wedge_by_silence() {
    let (_g, dir) = serial_tempdir().await;
    let seats = fifo_seat(dir.path(), "wedge", quick_watch(3.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("wedge", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_class(r, bakeoff_artifact::FailureClass::InitWedge);
    assert!(r.silent_ms >= 3000);
    assert_any_line(&r.tail, "loading model");
    let art = failure_of(&out);
    assert_eq!(art["failure"]["class"], "init-wedge");
    assert_eq!(art["seat"]["last_state"], "loading");
    // The wedged seat is still there: bringing it down stops it.
    seats.down("wedge", false).await.unwrap();
}

#[tokio::test]
async fn a_bound_port_is_port_in_use() {
    let (_g, dir) = serial_tempdir().await;
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let seats = one_seat(dir.path(), "port-held", port, &model(), quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("port-held", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_class(r, bakeoff_artifact::FailureClass::PortInUse);
    assert!(
        r.cause
            .as_ref()
            .unwrap()
            .line
            .contains("couldn't bind HTTP server socket")
    );
    drop(held);
}

#[tokio::test]
async fn two_seats_on_one_port_are_never_up_together() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let model = model();
    let toml = format!(
        "{}{}",
        process_fleet("first", port, &model),
        process_fleet("second", port, &model)
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    assert!(seats.up("first", false, false).await.unwrap().ok());
    let e = seats.up("second", false, false).await.unwrap_err();
    assert!(
        matches!(e, bakeoff_seats::OpsError::PortTaken { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("seat swap first second"), "{e}");
    // swap moves between them.
    let sw = seats.swap("first", "second", false).await.unwrap();
    assert!(
        sw.ok(),
        "{:?}",
        sw.new_outcome.report.as_ref().map(|r| &r.message)
    );
    let st = seats.status(false).await;
    assert!(!st[0].observed.is_up());
    assert!(st[1].observed.is_up());
    seats.down("second", false).await.unwrap();
}

/// A swap whose NEW is refused before it could start (here the checkpoint audit: a hard-coded
/// `--quantization compressed-tensors` over unquantized BF16 weights, docs/field-cases.md F7) is refused
/// while OLD still serves: OLD is never stopped. A swap onto itself is refused too.
#[tokio::test]
async fn a_swap_refused_before_start_leaves_old_serving() {
    let (_g, dir) = serial_tempdir().await;
    let seats = serving_and(dir.path(), |port| audit_refused_seat("refused", port));
    let _stop = StopOnDrop::all(&seats);
    let pid_before = up_serving(&seats).await;

    let e = seats.swap("serving", "refused", false).await.unwrap_err();
    assert!(matches!(e, bakeoff_seats::OpsError::PreStart(_)), "{e}");
    assert!(e.to_string().contains("quantization"), "{e}");
    let e = seats.swap("serving", "serving", false).await.unwrap_err();
    assert!(matches!(e, bakeoff_seats::OpsError::SameSeat(_)), "{e}");

    // OLD is the same process as before, and it still serves a real completion.
    assert_not_restarted_then_down(&seats, pid_before, "OLD was not restarted").await;
}

/// A swap whose NEW fails where no failure file can be written (the results directory is
/// under a regular file): OLD was already stopped, so the swap still rolls back and returns
/// an outcome — the write error is in NEW's outcome, not an `Err` that leaves OLD down.
#[tokio::test]
async fn a_failed_swap_rolls_back_when_no_failure_file_can_be_written() {
    let (_g, dir) = serial_tempdir().await;
    let mut seats = serving_and(dir.path(), |port| {
        process_fleet("broken", port, "/nonexistent/model.gguf")
    });
    let blocker = dir.path().join("not-a-directory");
    std::fs::write(&blocker, "").unwrap();
    seats.out_dir = blocker.join("results");
    let _stop = StopOnDrop::all(&seats);
    up_serving(&seats).await;

    let sw = seats.swap("serving", "broken", false).await.unwrap();
    assert!(!sw.ok());
    assert!(sw.new_outcome.failure_path.is_none());
    let r = sw.new_outcome.report.as_ref().unwrap();
    assert!(
        r.message.contains("cannot write the failure artifact")
            && r.notes
                .iter()
                .any(|n| n.contains("cannot write the failure artifact")),
        "{} {:?}",
        r.message,
        r.notes
    );
    let rollback = sw.rollback.as_ref().unwrap();
    assert!(
        rollback.ok(),
        "{:?}",
        rollback.report.as_ref().map(|r| &r.message)
    );
    assert_still_serving_then_down(&seats).await;
}

/// A restart whose fleet file was edited since the seat started, so the start would now be
/// refused (the same checkpoint audit as above), is refused while the seat still serves: the
/// seat is not stopped first and left down.
#[tokio::test]
async fn a_restart_refused_before_start_leaves_the_seat_serving() {
    let (_g, dir) = serial_tempdir().await;
    let seats = serving_and(dir.path(), |_| String::new());
    let port = seats.fleet.seats[0].port;
    let _stop = StopOnDrop::all(&seats);
    let pid_before = up_serving(&seats).await;

    let edited = fleet(
        dir.path(),
        &audit_refused_seat("serving", port),
        quick_watch(30.0),
    );
    let e = edited.restart("serving", false).await.unwrap_err();
    assert!(matches!(e, bakeoff_seats::OpsError::PreStart(_)), "{e}");

    assert_not_restarted_then_down(&seats, pid_before, "the seat was restarted anyway").await;
}

/// `--load-budget` without a shard bar to project from (llama.cpp prints none): the time
/// already spent in `loading` is checked. llama-server given a FIFO logs its first loading
/// line and blocks opening the file, so the load outlives a 1 s budget before the 3 s silence
/// ends the watch; the note and the load record land in the failure artifact.
#[tokio::test]
async fn a_load_past_the_budget_is_flagged_without_a_projection() {
    let (_g, dir) = serial_tempdir().await;
    let mut watch = quick_watch(3.0);
    watch.load_budget = Some(std::time::Duration::from_secs(1));
    let seats = fifo_seat(dir.path(), "slow-load", watch);
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("slow-load", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_class(r, bakeoff_artifact::FailureClass::InitWedge);
    assert!(r.load_over_budget, "{:?}", r.notes);
    assert_any_line(&r.notes, "over the --load-budget of 1.0 s");
    let art = failure_of(&out);
    let lp = &art["seat"]["load_progress"];
    assert_eq!(lp["over_budget"], true, "{lp}");
    assert_eq!(lp["budget_s"], 1.0, "{lp}");
    assert!(
        art["candidate"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("--load-budget")),
        "{}",
        art["candidate"]
    );
    seats.down("slow-load", false).await.unwrap();
}

/// A seat launched with a key in its arguments (`--api-key sk-…`, which llama-server takes)
/// and a secret environment value (docs/failure-classes.md). The process gets the real key — its
/// `/proc/PID/cmdline` holds it — but nothing bakeoff writes or reads back does: the failure
/// artifact (`seat.config.launch.process.args`, `env`), the report and `seat logs`. The
/// readiness probe sends no key, so the keyed server answers it 401 and the seat never
/// becomes ready.
#[tokio::test]
async fn a_key_in_a_seats_arguments_is_never_written() {
    let (_g, dir) = serial_tempdir().await;
    let key = "sk-test-9f8e7d6c5b4a39281706";
    let env_secret = "hf-env-secret-value";
    let model = model();
    let toml = process_fleet("keyed", free_port(), &model).replace(
        "\"--alias\"",
        &format!("\"--api-key\", \"{key}\", \"--alias\""),
    ) + &format!("env = {{ HF_TOKEN = \"{env_secret}\" }}\n");
    let mut watch = quick_watch(60.0);
    watch.ready_timeout = std::time::Duration::from_secs(15);
    let seats = fleet(dir.path(), &toml, watch);
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("keyed", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!out.ok(), "a keyed server answers a keyless probe 401");

    // The engine was launched with the real key.
    let st = seats.status(false).await;
    assert_eq!(st[0].observed, bakeoff_seats::backend::Observed::Running);
    let pid = st[0].id.clone().unwrap();
    let args = bakeoff_host::ProcRoot::system()
        .cmdline_args(pid.parse().unwrap())
        .unwrap();
    assert!(args.iter().any(|a| a.contains(key)), "{args:?}");

    let text = std::fs::read_to_string(out.failure_path.as_ref().unwrap()).unwrap();
    assert!(
        !text.contains(key) && !text.contains(env_secret),
        "a secret in the failure artifact: {text}"
    );
    let art: serde_json::Value = serde_json::from_str(&text).unwrap();
    let launch = &art["seat"]["config"]["launch"]["process"];
    let args: Vec<&str> = launch["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let i = args.iter().position(|a| *a == "--api-key").unwrap();
    assert_eq!(args[i + 1], "<redacted>", "{args:?}");
    assert_eq!(launch["env"]["HF_TOKEN"], "<redacted>");
    // The rest of the configuration is kept as evidence.
    assert!(
        args.contains(&"--alias") && args.contains(&model.as_str()),
        "{args:?}"
    );
    assert!(!format!("{r:?}").contains(key));
    let logs = seats.logs("keyed", 1000).await.unwrap();
    assert!(!logs.is_empty());
    assert!(logs.iter().all(|l| !l.contains(key)), "{logs:?}");
    seats.down("keyed", false).await.unwrap();
}

/// An engine that prints its secrets into its own log (vLLM logs its non-default args): what
/// bakeoff reads back — the evidence tail, the message, `seat logs` — is redacted by the same
/// rule, and the seat's own secret values are removed wherever they appear. A real process
/// (`/bin/sh`) that prints and exits 3.
#[tokio::test]
async fn secrets_an_engine_prints_never_reach_the_evidence() {
    let (_g, dir) = serial_tempdir().await;
    let toml = format!(
        r#"
[[seat]]
name = "echoes"
engine = "generic"
role = "bench"
port = {port}
[seat.process]
command = "/bin/sh"
args = ["-c", '''
KEY=plain-secret-key-1
echo "non-default args: {{'api_key': ['$KEY'], 'port': 8000}}"
echo "connecting with password $DB_PASSWORD"
echo "Authorization: Bearer $KEY"
echo "the key is $KEY"
exit 3
''']
env = {{ DB_PASSWORD = "hunter2-hunter2" }}
"#,
        port = free_port()
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("echoes", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!out.ok());
    assert_eq!(r.exit_code, Some(3), "{}", r.message);
    let secrets = ["plain-secret-key-1", "hunter2-hunter2"];
    let text = std::fs::read_to_string(out.failure_path.as_ref().unwrap()).unwrap();
    for s in secrets {
        assert!(!text.contains(s), "{s} in the failure artifact: {text}");
        assert!(!format!("{r:?}").contains(s), "{s} in the report: {r:?}");
    }
    let art: serde_json::Value = serde_json::from_str(&text).unwrap();
    let lines: Vec<&str> = art["seat"]["evidence_lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(
        lines.contains(&"non-default args: {'api_key': ['<redacted>'], 'port': 8000}")
            && lines.contains(&"connecting with password <redacted>")
            && lines.contains(&"Authorization: Bearer <redacted>")
            && lines.contains(&"the key is <redacted>"),
        "{lines:?}"
    );
    let logs = seats.logs("echoes", 100).await.unwrap();
    assert_eq!(logs.len(), 4, "{logs:?}");
    for s in secrets {
        assert!(logs.iter().all(|l| !l.contains(s)), "{logs:?}");
    }
}
