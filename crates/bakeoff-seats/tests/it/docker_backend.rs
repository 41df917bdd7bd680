//! The Docker backend against this machine's real Docker engine (API 1.41), with an image
//! built locally: `docker import` of scripts/seat-rootfs.sh's tarball (llama-server, its shared
//! libraries, the model). Each test imports its own uniquely tagged image and removes it, and
//! its containers, on drop.

use crate::common::*;
use bakeoff_artifact::FailureClass;
use bakeoff_seats::backend::Observed;

/// A Docker llama.cpp seat; `extra` goes into the `[seat.docker]` table.
fn docker_seat(name: &str, role: &str, port: u16, image: &str, model: &str, extra: &str) -> String {
    let header = bakeoff_testkit::fleet::seat_header(name, "llama.cpp", role, port, "gemma-3-270m");
    format!(
        r#"{header}stop_timeout_s = 2
[seat.docker]
image = "{image}"
command = ["/opt/llama/bin/llama-server", "-m", "{model}", "--host", "0.0.0.0", "--port", "8080",
           "-c", "1024", "-np", "1", "--alias", "gemma-3-270m"]
container_port = 8080
container_name = "{name}"
labels = {{ "test.owner" = "bakeoff-seats-tests" }}
{extra}
"#
    )
}

#[tokio::test]
async fn docker_seat_up_status_down() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let name = unique("bk-up");
    img.track(&name);
    let port = free_port();
    let seats = fleet(
        dir.path(),
        &docker_seat(
            &name,
            "bench",
            port,
            &img.tag,
            "/models/model.gguf",
            "restart = \"no\"\nmemory = \"1g\"",
        ),
        quick_watch(30.0),
    );
    let out = seats.up(&name, false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(out.ok(), "{} {:?}", r.message, r.tail);
    eprintln!(
        "docker seat ready in {} ms: {:?}",
        out.elapsed_ms,
        r.phases
            .iter()
            .map(|p| (&p.state, p.at_ms))
            .collect::<Vec<_>>()
    );
    let st = seats.status(true).await;
    assert_eq!(st[0].observed, Observed::Running);
    assert_eq!(st[0].serving, Some(true), "{:?}", st[0].detail);
    assert_eq!(st[0].restart_count, Some(0));
    let logs = seats.logs(&name, 1000).await.unwrap();
    assert!(logs.iter().any(|l| l.contains("listening on")), "{logs:?}");
    seats.down(&name, false).await.unwrap();
    assert_eq!(seats.status(false).await[0].observed, Observed::Missing);
}

#[tokio::test]
async fn restart_policy_over_a_bad_model_path_is_a_crash_loop() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let name = unique("bk-loop");
    img.track(&name);
    let seats = fleet(
        dir.path(),
        &docker_seat(
            &name,
            "bench",
            free_port(),
            &img.tag,
            "/models/missing.gguf",
            "restart = \"always\"",
        ),
        quick_watch(30.0),
    );
    let out = seats.up(&name, false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_class(r, FailureClass::CrashLoop);
    assert!(r.restart_count.unwrap() >= 3);
    let art = failure_of(&out);
    assert_eq!(art["failure"]["class"], "crash-loop");
    // The negative result is scoped to the image that failed.
    assert_eq!(
        art["candidate"]["engine_version"],
        format!("image {}", img.tag).as_str()
    );
    assert!(art["seat"]["restart_count"].as_u64().unwrap() >= 3);
    assert!(
        art["seat"]["evidence_lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains("failed to open GGUF file")),
        "{}",
        art["seat"]["evidence_lines"]
    );
    seats.down(&name, false).await.unwrap();
}

#[tokio::test]
async fn a_memory_limit_too_small_is_host_oom() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let name = unique("bk-oom");
    img.track(&name);
    // --load-mode none reads the 253 MB model into anonymous memory: over a 96 MiB limit.
    let toml = docker_seat(
        &name,
        "bench",
        free_port(),
        &img.tag,
        "/models/model.gguf",
        "restart = \"no\"\nmemory = \"96m\"",
    )
    .replace("\"--alias\"", "\"--load-mode\", \"none\", \"--alias\"");
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let out = seats.up(&name, false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_class(r, FailureClass::HostOom);
    assert_eq!(r.oom_killed, Some(true));
    assert_eq!(r.exit_code, Some(137));
    let art = failure_of(&out);
    assert_eq!(art["failure"]["class"], "host-oom");
    assert_eq!(art["seat"]["oom_killed"], true);
    seats.down(&name, false).await.unwrap();
}

#[tokio::test]
async fn production_needs_confirm_and_dormant_stays_created() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let prod = unique("bk-prod");
    let dormant = unique("bk-dormant");
    img.track(&prod);
    img.track(&dormant);
    let port = free_port();
    let toml = format!(
        "{}{}",
        docker_seat(
            &prod,
            "production",
            port,
            &img.tag,
            "/models/model.gguf",
            ""
        ),
        docker_seat(
            &dormant,
            "dormant",
            port,
            &img.tag,
            "/models/model.gguf",
            ""
        )
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let e = seats.up(&prod, false, false).await.unwrap_err();
    assert!(
        matches!(e, bakeoff_seats::OpsError::NeedsConfirm { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("--confirm"));
    assert_eq!(
        seats.status(false).await[0].observed,
        Observed::Missing,
        "nothing was created"
    );
    let d = seats.up(&dormant, false, false).await.unwrap();
    assert!(d.created_only);
    assert_eq!(seats.status(false).await[1].observed, Observed::Created);
    seats.down(&dormant, false).await.unwrap();
    // Dormant: kept created after down.
    assert_eq!(seats.status(false).await[1].observed, Observed::Created);
}

#[tokio::test]
async fn swap_rolls_back_when_the_new_seat_fails() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let old = unique("bk-old");
    let new = unique("bk-new");
    img.track(&old);
    img.track(&new);
    let port = free_port();
    let toml = format!(
        "{}{}",
        docker_seat(
            &old,
            "bench",
            port,
            &img.tag,
            "/models/model.gguf",
            "restart = \"no\""
        ),
        docker_seat(
            &new,
            "bench",
            port,
            &img.tag,
            "/models/missing.gguf",
            "restart = \"no\""
        )
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    assert!(seats.up(&old, false, false).await.unwrap().ok());
    let sw = seats.swap(&old, &new, false).await.unwrap();
    assert!(!sw.ok());
    let nr = sw.new_outcome.report.as_ref().unwrap();
    // The root cause in the tail, `failed to open GGUF file … (No such file or directory)`,
    // names the class (docs/failure-classes.md), not a bare `exited`.
    assert_eq!(
        nr.class,
        Some(FailureClass::ModelFileMissing),
        "{}",
        nr.message
    );
    assert!(sw.new_outcome.failure_path.is_some());
    let rb = sw.rollback.as_ref().expect("rolled back");
    assert!(rb.ok(), "{:?}", rb.report.as_ref().map(|r| &r.message));
    let st = seats.status(false).await;
    assert_eq!(st[0].observed, Observed::Running, "OLD is back");
    assert!(!st[1].observed.is_up(), "NEW is stopped");
    seats.down(&old, false).await.unwrap();
    seats.down(&new, false).await.unwrap();
}

/// The README's path: a process seat and a Docker seat on one port, swapped from the process
/// to the container, which serves a real completion, then brought down.
#[tokio::test]
async fn swap_from_a_process_seat_to_a_docker_seat_on_one_port() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let docker_name = unique("bk-swap-in");
    img.track(&docker_name);
    let port = free_port();
    let model = model();
    let process = process_fleet("gemma-proc", port, &model);
    let toml = format!(
        "{process}{}",
        docker_seat(
            &docker_name,
            "bench",
            port,
            &img.tag,
            "/models/model.gguf",
            "restart = \"no\"\nmemory = \"1g\""
        )
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);
    let up = seats.up("gemma-proc", false, false).await.unwrap();
    assert!(up.ok(), "{:?}", up.report.as_ref().map(|r| &r.message));
    let sw = seats.swap("gemma-proc", &docker_name, false).await.unwrap();
    let nr = sw.new_outcome.report.as_ref().unwrap();
    assert!(sw.ok(), "{} {:?}", nr.message, nr.tail);
    assert!(sw.rollback.is_none());
    assert_eq!(nr.phases.last().map(|p| p.state.as_str()), Some("ready"));
    let st = seats.status(true).await;
    assert_eq!(
        st[0].observed,
        Observed::Missing,
        "the process seat is stopped"
    );
    assert_eq!(st[1].observed, Observed::Running);
    assert_eq!(st[1].serving, Some(true), "{:?}", st[1].detail);
    seats.down(&docker_name, false).await.unwrap();
    assert_eq!(seats.status(false).await[1].observed, Observed::Missing);
}

/// The container is created with what the fleet file says: env, mounts, labels (the
/// operator's and bakeoff's), restart policy, memory limit (and no swap beyond it), the port
/// published on loopback. A dormant seat is only created, so nothing runs.
#[tokio::test]
async fn the_container_carries_the_seat_configuration() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::build();
    let dir = bakeoff_testkit::tempdir();
    let name = unique("bk-cfg");
    img.track(&name);
    let port = free_port();
    let host_dir = dir.path().join("weights");
    std::fs::create_dir_all(&host_dir).unwrap();
    let extra = format!(
        "restart = \"on-failure:2\"\nmemory = \"512m\"\nenv = {{ LLAMA_ARG_THREADS = \"2\" }}\nmounts = [\"{}:/weights:ro\"]",
        host_dir.display()
    );
    let seats = fleet(
        dir.path(),
        &docker_seat(
            &name,
            "dormant",
            port,
            &img.tag,
            "/models/model.gguf",
            &extra,
        ),
        quick_watch(30.0),
    );
    assert!(seats.up(&name, false, false).await.unwrap().created_only);
    let out = std::process::Command::new("docker")
        .args(["inspect", &name])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &v[0];
    assert_eq!(c["State"]["Status"], "created");
    let env: Vec<&str> = c["Config"]["Env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(env.contains(&"LLAMA_ARG_THREADS=2"), "{env:?}");
    assert_eq!(
        c["HostConfig"]["Binds"],
        serde_json::json!([format!("{}:/weights:ro", host_dir.display())])
    );
    let labels = &c["Config"]["Labels"];
    assert_eq!(labels["test.owner"], "bakeoff-seats-tests");
    assert_eq!(labels["bakeoff.seat"], name.as_str());
    assert_eq!(labels["bakeoff.role"], "dormant");
    assert!(labels["bakeoff.config-hash"].is_string());
    assert_eq!(c["HostConfig"]["RestartPolicy"]["Name"], "on-failure");
    assert_eq!(c["HostConfig"]["RestartPolicy"]["MaximumRetryCount"], 2);
    assert_eq!(c["HostConfig"]["Memory"], 512 * 1024 * 1024);
    assert_eq!(c["HostConfig"]["MemorySwap"], 512 * 1024 * 1024);
    assert_eq!(
        c["HostConfig"]["PortBindings"]["8080/tcp"][0],
        serde_json::json!({"HostIp": "127.0.0.1", "HostPort": port.to_string()})
    );
    assert_eq!(c["Config"]["Cmd"][0], "/opt/llama/bin/llama-server");
    seats.down(&name, false).await.unwrap();
}

/// A seat that logs faster than the watchdog ticks — a container printing a line every 20 ms,
/// which Docker's log stream delivers one by one, so a line is always queued — still reaches
/// the verdict checks: `--ready-timeout` ends the watch with `not-ready`. (When the loop went
/// back to waiting after every line, a queued line always beat the 100 ms tick and the watch
/// never ended.)
#[tokio::test]
async fn a_chatty_seat_still_reaches_the_ready_timeout() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::shell();
    let dir = bakeoff_testkit::tempdir();
    let name = unique("bk-chatty");
    img.track(&name);
    let toml = format!(
        r#"
[[seat]]
name = "{name}"
engine = "generic"
role = "bench"
port = {port}
stop_timeout_s = 1
[seat.docker]
image = "{image}"
command = ["/bin/sh", "-c", "i=0; while :; do i=$((i+1)); echo \"chatter $i\"; /bin/sleep 0.02; done"]
container_name = "{name}"
restart = "no"
"#,
        port = free_port(),
        image = img.tag
    );
    let mut watch = quick_watch(30.0);
    watch.ready_timeout = std::time::Duration::from_secs(3);
    let seats = fleet(dir.path(), &toml, watch);
    // A generous outer bound: without it the regression hangs the suite instead of failing.
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(90),
        seats.up(&name, false, false),
    )
    .await
    .expect("the watch never reached its checks")
    .unwrap();
    let r = out.report.as_ref().unwrap();
    assert_class(r, FailureClass::NotReady);
    assert!(
        r.tail.iter().any(|l| l.starts_with("chatter ")),
        "{:?}",
        r.tail
    );
    let art = failure_of(&out);
    assert_eq!(art["failure"]["class"], "not-ready");
    seats.down(&name, false).await.unwrap();
}

/// A real OOM kill under a container's memory limit, as the kernel logs it: the lines of
/// `dmesg` that name this container's cgroup (`oom-kill:constraint=CONSTRAINT_MEMCG,…` and the
/// `Memory cgroup out of memory: Killed process N (sh)` after it) are classed `host-oom` by the
/// table's kernel row, and Docker's own record says the same (State.OOMKilled, exit 137).
#[tokio::test]
async fn a_real_cgroup_oom_kill_is_host_oom_in_the_kernel_log() {
    let _g = bakeoff_testkit::serial().await;
    let img = TestImage::shell();
    let name = unique("bk-kernel-oom");
    img.track(&name);
    // The shell doubles a string until the 16 MiB limit (and no swap beyond it) is hit.
    let run = std::process::Command::new("docker")
        .args([
            "run",
            "--name",
            &name,
            "--memory",
            "16m",
            "--memory-swap",
            "16m",
        ])
        .arg(&img.tag)
        .args([
            "/bin/sh",
            "-c",
            "a=xxxxxxxxxxxxxxxx; while :; do a=\"$a$a\"; done",
        ])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(137), "{run:?}");
    let inspect = std::process::Command::new("docker")
        .args(["inspect", "--format", "{{.Id}} {{json .State}}", &name])
        .output()
        .unwrap();
    let inspect = String::from_utf8_lossy(&inspect.stdout).to_string();
    let (id, state) = inspect.trim().split_once(' ').unwrap();
    // Docker's record, printed as `docker inspect` prints it, is a host-oom line too.
    assert!(state.contains("\"OOMKilled\":true"), "{state}");
    assert!(state.contains("\"ExitCode\":137"), "{state}");
    assert_eq!(
        crate::log_signatures::class_of(state),
        Some(FailureClass::HostOom)
    );
    let dmesg = std::process::Command::new("dmesg").output().unwrap();
    assert!(
        dmesg.status.success(),
        "the kernel log could not be read (dmesg): {}",
        String::from_utf8_lossy(&dmesg.stderr)
    );
    let log = String::from_utf8_lossy(&dmesg.stdout).to_string();
    let all: Vec<&str> = log.lines().collect();
    let at = all
        .iter()
        .rposition(|l| l.contains("oom-kill:constraint=") && l.contains(id))
        .unwrap_or_else(|| panic!("no OOM record of {id} in the kernel log"));
    let ours: Vec<String> = all[at..(at + 2).min(all.len())]
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert!(
        ours.iter()
            .any(|l| l.contains("out of memory: Killed process")),
        "{ours:?}"
    );
    let cause = bakeoff_seats::classify::root_cause(&ours).unwrap();
    assert_eq!(cause.class, FailureClass::HostOom, "{ours:?}");
}
