//! The process backend against the real llama-server and the real test model
//! (`bakeoff_testkit::engine()`): ready, a wrong model path (`exited`), a FIFO as the model
//! (`init-wedge`: llama-server blocks opening it after its first log lines), and a port that is
//! already bound (`port-in-use`, llama.cpp's `couldn't bind HTTP server socket`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

fn process_fleet(name: &str, port: u16, model: &str) -> String {
    let e = bakeoff_testkit::engine();
    format!(
        r#"
[[seat]]
name = "{name}"
engine = "llama.cpp"
role = "bench"
port = {port}
served_model_names = ["gemma-3-270m"]
[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1",
        "--alias", "gemma-3-270m"]
"#,
        bin = e.llama_server.display()
    )
}

#[tokio::test]
async fn process_seat_comes_up_ready_then_goes_down() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let port = free_port();
    let model = bakeoff_testkit::model_path();
    let seats = fleet(
        dir.path(),
        &process_fleet("gemma-proc", port, &model.display().to_string()),
        quick_watch(30.0),
    );
    let _stop = StopOnDrop {
        seats: &seats,
        names: vec!["gemma-proc".into()],
    };
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
async fn wrong_model_path_is_exited_with_evidence() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let seats = fleet(
        dir.path(),
        &process_fleet("bad-path", free_port(), "/nonexistent/model.gguf"),
        quick_watch(30.0),
    );
    let _stop = StopOnDrop {
        seats: &seats,
        names: vec!["bad-path".into()],
    };
    let out = seats.up("bad-path", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!out.ok());
    assert_eq!(
        r.class,
        Some(bakeoff_artifact::FailureClass::Exited),
        "{}",
        r.message
    );
    assert_eq!(r.exit_code, Some(1));
    assert!(
        r.tail
            .iter()
            .any(|l| l.contains("failed to open GGUF file")),
        "{:?}",
        r.tail
    );
    let art = read_failure(out.failure_path.as_ref().unwrap());
    assert_eq!(art["kind"], "failure");
    assert_eq!(art["failure"]["class"], "exited");
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
async fn fifo_model_is_an_init_wedge_by_silence() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let fifo = dir.path().join("model.fifo");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    let seats = fleet(
        dir.path(),
        &process_fleet("wedge", free_port(), &fifo.display().to_string()),
        quick_watch(3.0),
    );
    let _stop = StopOnDrop {
        seats: &seats,
        names: vec!["wedge".into()],
    };
    let out = seats.up("wedge", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_eq!(
        r.class,
        Some(bakeoff_artifact::FailureClass::InitWedge),
        "{}",
        r.message
    );
    assert!(r.silent_ms >= 3000);
    assert!(
        r.tail.iter().any(|l| l.contains("loading model")),
        "{:?}",
        r.tail
    );
    let art = read_failure(out.failure_path.as_ref().unwrap());
    assert_eq!(art["failure"]["class"], "init-wedge");
    assert_eq!(art["seat"]["last_state"], "loading");
    // The wedged seat is still there: bringing it down stops it.
    seats.down("wedge", false).await.unwrap();
}

#[tokio::test]
async fn a_bound_port_is_port_in_use() {
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let model = bakeoff_testkit::model_path();
    let seats = fleet(
        dir.path(),
        &process_fleet("port-held", port, &model.display().to_string()),
        quick_watch(30.0),
    );
    let _stop = StopOnDrop {
        seats: &seats,
        names: vec!["port-held".into()],
    };
    let out = seats.up("port-held", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_eq!(
        r.class,
        Some(bakeoff_artifact::FailureClass::PortInUse),
        "{} {:?}",
        r.message,
        r.tail
    );
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
    let _g = bakeoff_testkit::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let port = free_port();
    let model = bakeoff_testkit::model_path().display().to_string();
    let toml = format!(
        "{}{}",
        process_fleet("first", port, &model),
        process_fleet("second", port, &model)
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop {
        seats: &seats,
        names: vec!["first".into(), "second".into()],
    };
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
