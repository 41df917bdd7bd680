//! A fleet across hosts (docs/scale-out.md) against real parts on this machine: a second `dockerd`
//! (its own socket, data root, exec root, pidfile and bridge; no iptables) reached by
//! `unix://` and by `tcp://` with TLS, and a real `sshd` on a loopback port whose
//! `docker system dial-stdio` reaches this machine's main engine — all started by
//! scripts/start-test-hosts.sh and stopped on drop by scripts/stop-test-hosts.sh.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::common::*;
use bakeoff_seats::backend::Observed;
use bakeoff_seats::ops::host_status::HOST_STATUS_TIMEOUT;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(name)
}

/// The second engine and the test sshd, stopped (with every container on the second engine)
/// on drop.
struct TestHosts {
    vars: HashMap<String, String>,
}

impl TestHosts {
    fn start() -> TestHosts {
        let out = std::process::Command::new("bash")
            .arg(script("start-test-hosts.sh"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/start-test-hosts.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let vars = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let hosts = TestHosts { vars };
        hosts.remove_test_containers();
        hosts
    }

    /// The second engine is the tests' alone: containers a failed run left there go, then the
    /// images they held.
    fn remove_test_containers(&self) {
        let Some(sock) = self.vars.get("DOCKER2_HOST") else {
            return;
        };
        let docker = |args: &[&str]| {
            std::process::Command::new("docker")
                .arg("-H")
                .arg(sock)
                .args(args)
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default()
        };
        let ids = docker(&[
            "ps",
            "-aq",
            "--filter",
            "label=test.owner=bakeoff-seats-tests",
        ]);
        for id in ids.split_whitespace() {
            docker(&["rm", "-f", id]);
        }
        docker(&["image", "prune", "-f"]);
    }

    fn var(&self, k: &str) -> &str {
        self.vars.get(k).map(String::as_str).unwrap()
    }

    /// `docker -H <second engine> ARGS…`, asserted to succeed; its stdout.
    fn docker2(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("docker")
            .arg("-H")
            .arg(self.var("DOCKER2_HOST"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "docker {args:?} on the second engine: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn stop(what: &str) {
        let st = std::process::Command::new("bash")
            .arg(script("stop-test-hosts.sh"))
            .arg(what)
            .status()
            .unwrap();
        assert!(st.success(), "scripts/stop-test-hosts.sh {what} failed");
    }
}

impl Drop for TestHosts {
    fn drop(&mut self) {
        self.remove_test_containers();
        let _ = std::process::Command::new("bash")
            .arg(script("stop-test-hosts.sh"))
            .status();
    }
}

/// The seat image imported into the second engine under one fixed tag (the engine is this
/// test's alone; the previous run's import, now untagged, is pruned).
fn import_into_second(hosts: &TestHosts) -> String {
    let out = std::process::Command::new("bash")
        .arg(script("seat-rootfs.sh"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tarball = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let tag = "bakeoff-seat-remote:test";
    hosts.docker2(&["import", &tarball, tag]);
    hosts.remove_test_containers();
    tag.to_string()
}

/// A llama.cpp Docker seat on `host`. `host_network`: the engine listens on the seat's port on
/// the host's network (`network_mode = "host"`); else it listens on 8080 inside and the port
/// is published.
fn docker_seat(name: &str, host: &str, port: u16, image: &str, host_network: bool) -> String {
    let header =
        bakeoff_testkit::fleet::seat_header(name, "llama.cpp", "bench", port, "gemma-3-270m");
    let (listen, net) = if host_network {
        (
            "\"--host\", \"127.0.0.1\", \"--port\", \"{port}\"",
            "network_mode = \"host\"",
        )
    } else {
        (
            "\"--host\", \"0.0.0.0\", \"--port\", \"8080\"",
            "container_port = 8080",
        )
    };
    format!(
        r#"{header}host = "{host}"
stop_timeout_s = 2
[seat.docker]
image = "{image}"
command = ["/opt/llama/bin/llama-server", "-m", "/models/model.gguf", {listen},
           "-c", "1024", "-np", "1", "--alias", "gemma-3-270m"]
{net}
restart = "no"
container_name = "{name}"
labels = {{ "test.owner" = "bakeoff-seats-tests" }}
"#
    )
}

fn hosts_toml(hosts: &TestHosts, ssh_config: &Path) -> String {
    let tls = hosts.var("TLS_DIR");
    format!(
        r#"[hosts.second]
docker = "{docker2}"

[hosts.viassh]
docker = "ssh://{ssh}"
ssh_config = "{cfg}"

[hosts.viatls]
docker = "{tcp}"
tls = {{ ca = "{tls}/ca.pem", cert = "{tls}/cert.pem", key = "{tls}/key.pem" }}
"#,
        docker2 = hosts.var("DOCKER2_HOST"),
        ssh = hosts.var("SSH_HOST"),
        cfg = ssh_config.display(),
        tcp = hosts.var("TLS_HOST"),
    )
}

#[tokio::test]
async fn a_fleet_on_local_unix_ssh_and_tls_hosts_and_one_engine_stopped() {
    let _g = bakeoff_testkit::serial().await;
    let hosts = TestHosts::start();
    let img = TestImage::build();
    let img2 = import_into_second(&hosts);
    let dir = bakeoff_testkit::tempdir();

    let local = unique("rh-local");
    let second = unique("rh-unix");
    let viassh = unique("rh-ssh");
    let viatls = unique("rh-tls");
    // The ssh host's engine is this machine's main one: its container goes with the image.
    img.track(&viassh);
    let toml = format!(
        "{}{}{}{}{}",
        hosts_toml(&hosts, Path::new(hosts.var("SSH_CONFIG"))),
        process_fleet(&local, free_port(), &model()),
        docker_seat(&second, "second", free_port(), &img2, false),
        docker_seat(&viassh, "viassh", free_port(), &img.tag, false),
        docker_seat(&viatls, "viatls", free_port(), &img2, true),
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let _stop = StopOnDrop::all(&seats);

    // Up on all four hosts, each to ready (a real completion).
    for name in [&local, &second, &viassh, &viatls] {
        let out = seats.up(name, false, false).await.unwrap();
        let r = out.report.as_ref().unwrap();
        assert!(out.ok(), "{name}: {} {:?}", r.message, r.tail);
    }
    // The containers are where the fleet says: two on the second engine, one on the main one.
    let on_second = hosts.docker2(&["ps", "--format", "{{.Names}}"]);
    assert!(
        on_second.contains(&second) && on_second.contains(&viatls),
        "{on_second}"
    );
    assert!(!on_second.contains(&viassh), "{on_second}");

    let st = seats.status(true).await;
    for s in &st {
        assert_eq!(
            s.observed,
            Observed::Running,
            "{}: {:?}",
            s.seat,
            s.observed
        );
        assert_eq!(s.serving, Some(true), "{}: {:?}", s.seat, s.detail);
    }

    // The second engine goes away: its seats (unix:// and tcp+TLS) are unknown, the others
    // still run and answer, and status comes back (the bound is a hang guard, far above the
    // per-host timeout, not a measurement).
    TestHosts::stop("docker2");
    let st = tokio::time::timeout(HOST_STATUS_TIMEOUT * 6, seats.status(true))
        .await
        .expect("status hung on an unreachable host");
    let by_name: HashMap<&str, &bakeoff_seats::SeatStatus> =
        st.iter().map(|s| (s.seat.as_str(), s)).collect();
    for name in [&second, &viatls] {
        let s = by_name[name.as_str()];
        match &s.observed {
            Observed::Unknown { reason } => {
                eprintln!("{name}: unknown ({reason})");
                assert!(reason.starts_with("host unreachable: "), "{name}: {reason}")
            }
            other => panic!("{name}: {other:?}, expected unknown"),
        }
        assert_eq!(s.serving, None, "{name}: an unknown seat is not probed");
    }
    for name in [&local, &viassh] {
        let s = by_name[name.as_str()];
        assert_eq!(s.observed, Observed::Running, "{name}");
        assert_eq!(s.serving, Some(true), "{name}: {:?}", s.detail);
    }

    // The engine comes back (its containers stopped with it): down on every host.
    let _again = TestHosts::start();
    for name in [&local, &second, &viassh, &viatls] {
        seats.down(name, false).await.unwrap();
    }
    for s in seats.status(false).await {
        assert_eq!(s.observed, Observed::Missing, "{}", s.seat);
    }
}

#[tokio::test]
async fn an_ssh_host_that_refuses_the_key_is_unreachable_with_ssh_s_reason() {
    let _g = bakeoff_testkit::serial().await;
    let hosts = TestHosts::start();
    let dir = bakeoff_testkit::tempdir();
    // The test's own config without its key: sshd refuses the login, never a password prompt.
    let cfg = std::fs::read_to_string(hosts.var("SSH_CONFIG")).unwrap();
    let cfg: String = cfg
        .lines()
        .filter(|l| !l.trim_start().starts_with("IdentityFile"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + "  IdentityFile /dev/null\n";
    let cfg_path = dir.path().join("ssh_config");
    std::fs::write(&cfg_path, cfg).unwrap();
    let name = unique("rh-nokey");
    let toml = format!(
        "[hosts.viassh]\ndocker = \"ssh://{}\"\nssh_config = \"{}\"\n{}",
        hosts.var("SSH_HOST"),
        cfg_path.display(),
        docker_seat(&name, "viassh", free_port(), "none:none", false)
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let st = seats.status(false).await;
    match &st[0].observed {
        Observed::Unknown { reason } => {
            eprintln!("unknown ({reason})");
            assert!(reason.starts_with("host unreachable: "), "{reason}");
            assert!(reason.contains("Permission denied"), "{reason}");
        }
        other => panic!("{other:?}, expected unknown"),
    }
}

/// A TLS host whose CA did not sign the engine's certificate: the server is verified, never
/// trusted blindly, so its seats are unknown.
#[tokio::test]
async fn a_tls_host_with_another_ca_is_unreachable() {
    let _g = bakeoff_testkit::serial().await;
    let hosts = TestHosts::start();
    let dir = bakeoff_testkit::tempdir();
    let st = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=another CA", "-keyout"])
        .arg(dir.path().join("other-key.pem"))
        .arg("-out")
        .arg(dir.path().join("other-ca.pem"))
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let tls = hosts.var("TLS_DIR");
    let name = unique("rh-badca");
    let toml = format!(
        "[hosts.viatls]\ndocker = \"{}\"\ntls = {{ ca = \"other-ca.pem\", cert = \"{tls}/cert.pem\", key = \"{tls}/key.pem\" }}\n{}",
        hosts.var("TLS_HOST"),
        docker_seat(&name, "viatls", free_port(), "none:none", true)
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    match &seats.status(false).await[0].observed {
        Observed::Unknown { reason } => {
            eprintln!("unknown ({reason})");
            assert!(reason.starts_with("host unreachable: "), "{reason}");
            assert!(reason.contains("UnknownIssuer"), "{reason}");
        }
        other => panic!("{other:?}, expected unknown"),
    }
}

/// An engine address that accepts the connection and never answers (a listening socket
/// nobody reads): `status` gives up on that host after its timeout and says so.
#[tokio::test]
async fn a_host_that_never_answers_is_unknown_after_the_per_host_timeout() {
    let dir = bakeoff_testkit::tempdir();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let name = unique("rh-silent");
    let local = unique("rh-here");
    let toml = format!(
        "[hosts.silent]\ndocker = \"tcp://{addr}\"\n{}{}",
        docker_seat(&name, "silent", free_port(), "none:none", false),
        process_fleet(&local, free_port(), &model()),
    );
    let seats = fleet(dir.path(), &toml, quick_watch(30.0));
    let st = seats.status(false).await;
    match &st[0].observed {
        Observed::Unknown { reason } => {
            eprintln!("unknown ({reason})");
            assert!(reason.starts_with("host unreachable: "), "{reason}");
            assert!(
                reason.contains(&format!(
                    "did not answer within {} s",
                    HOST_STATUS_TIMEOUT.as_secs()
                )),
                "{reason}"
            );
        }
        other => panic!("{other:?}, expected unknown"),
    }
    // The process seat on this machine is read as usual: not running, not unknown.
    assert_eq!(st[1].observed, Observed::Missing);
    drop(silent);
}
