//! `bakeoff plan` reading another host's GPUs over the channel its Docker engine is reached by
//! (docs/scale-out.md), against the real test sshd of scripts/start-test-hosts.sh (loopback, its own
//! keys and ssh_config): an `ssh://` host whose nvidia-smi answers (a stand-in printing the
//! lead's real H200 figures, since this machine has no GPU), one whose nvidia-smi is missing,
//! and a `tcp://` host, which has no shell channel.

use crate::util::Bounded;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{bakeoff_async, code, root, serial_tempdir, stdout};

/// The test sshd, started by the script (idempotent) and stopped on drop only when this test
/// started it.
struct TestSsh {
    config: String,
    destination: String,
    started_here: bool,
}

fn script(name: &str) -> PathBuf {
    root().join("scripts").join(name)
}

fn ssh_answers(config: &Path) -> bool {
    config.is_file()
        && Command::new("ssh")
            .args(["-F", &config.display().to_string()])
            .args(["-o", "ConnectTimeout=5", "bakeoff-test-ssh", "true"])
            .output_bounded()
            .is_ok_and(|o| o.status.success())
}

impl TestSsh {
    fn start() -> TestSsh {
        let cache = std::env::var("BAKEOFF_CACHE")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/bakeoff")
            });
        let answered = ssh_answers(&cache.join("test-hosts/ssh/ssh_config"));
        let out = Command::new("bash")
            .arg(script("start-test-hosts.sh"))
            .output_bounded()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/start-test-hosts.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let var = |k: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .unwrap()
                .to_owned()
        };
        TestSsh {
            config: var("SSH_CONFIG"),
            destination: var("SSH_HOST"),
            started_here: !answered,
        }
    }
}

impl Drop for TestSsh {
    fn drop(&mut self) {
        if self.started_here {
            let _ = Command::new("bash")
                .arg(script("stop-test-hosts.sh"))
                .status();
        }
    }
}

/// A Docker seat `name` on `host`, GPU 0.
fn seat(name: &str, host: &str, port: u16) -> String {
    format!(
        r#"
[[seat]]
name = "{name}"
host = "{host}"
engine = "llama.cpp"
role = "bench"
port = {port}
[seat.docker]
image = "ghcr.io/ggml-org/llama.cpp:server-cuda"
command = ["-m", "/models/m.gguf", "-c", "4096", "--port", "{port}"]
gpus = ["0"]
"#
    )
}

/// A fleet of this machine, an ssh host whose nvidia-smi answers (`smi`), an ssh host whose
/// nvidia-smi is missing, and a tcp:// host.
fn fleet(dir: &Path, ssh: &TestSsh, smi: &Path) -> PathBuf {
    let text = format!(
        r#"
[hosts.local]
gpus = 1

[hosts.gpu2]
docker = "ssh://{dest}"
ssh_config = "{cfg}"
gpus = 1
nvidia_smi = "{smi}"

[hosts.nosmi]
docker = "ssh://{dest}"
ssh_config = "{cfg}"
gpus = 1
nvidia_smi = "/nonexistent/bin/nvidia-smi"

[hosts.tcpbox]
docker = "tcp://127.0.0.1:2375"
gpus = 1
{a}{b}{c}{d}"#,
        dest = ssh.destination,
        cfg = ssh.config,
        smi = smi.display(),
        a = seat("here", "local", 18080),
        b = seat("there", "gpu2", 18081),
        c = seat("dark", "nosmi", 18082),
        d = seat("plain", "tcpbox", 18083),
    );
    let p = dir.join("fleet.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn gpu<'a>(v: &'a Value, host: &str) -> &'a Value {
    v["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["host"] == host && g["index"] == 0)
        .unwrap_or_else(|| panic!("no GPU 0 of {host} in {v}"))
}

#[tokio::test]
async fn plan_reads_each_hosts_gpus_over_its_own_channel() {
    let (_guard, dir) = serial_tempdir().await;
    let ssh = TestSsh::start();
    // The stand-in, executable wherever the checkout put it.
    let smi = dir.path().join("nvidia-smi");
    std::fs::copy(
        root().join("crates/bakeoff/tests/fixtures/nvidia-smi-h200/nvidia-smi"),
        &smi,
    )
    .unwrap();
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fleet = fleet(dir.path(), &ssh, &smi);
    let f = fleet.to_str().unwrap();
    let label = format!("nvidia-smi over ssh {}", ssh.destination);

    // (a) the answering host: its GPU read over ssh, every figure labelled with the channel.
    let out = bakeoff_async(&["plan", "--fleet", f, "--json"]).await;
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hosts = v["hosts"].as_array().unwrap();
    let gpu2 = hosts.iter().find(|h| h["host"] == "gpu2").unwrap();
    assert_eq!(gpu2["source"], label.as_str());
    assert_eq!(gpu2["readings"]["unavailable"], Value::Null, "{gpu2}");
    let g = gpu(&v, "gpu2");
    assert_eq!(g["total_bytes"], 143_771u64 * 1024 * 1024);
    assert_eq!(g["measured_used_bytes"], 1_625u64 * 1024 * 1024);
    assert_eq!(g["total_source"], label.as_str());
    assert_eq!(g["measured_source"], label.as_str());
    assert_eq!(g["name"], "NVIDIA H200");
    // PID 5159 is no container of a seat there (none runs): another process, not a seat's.
    assert_eq!(g["other_processes"][0]["pid"], 5159);
    assert!(g["seats"][0]["measured"].is_null(), "{g}");

    // (b) nvidia-smi missing: one line with the shell's reason, claims for that host only.
    let nosmi = hosts.iter().find(|h| h["host"] == "nosmi").unwrap();
    let why = nosmi["readings"]["unavailable"].as_str().unwrap();
    assert!(why.contains("/nonexistent/bin/nvidia-smi"), "{why}");
    assert!(why.contains("claims only"), "{why}");
    assert!(!why.contains('\n'), "{why}");
    let g = gpu(&v, "nosmi");
    assert!(g["measured_used_bytes"].is_null(), "{g}");
    assert!(g["seats"][0]["claim"]["expected_bytes"].is_u64(), "{g}");
    assert!(
        g["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap_or("").contains("claims only")),
        "{g}"
    );
    // This machine is unaffected: no remote label on its GPU, its own readings as before.
    let here = gpu(&v, "local");
    assert!(here["measured_source"] != label.as_str(), "{here}");
    assert!(v["nvml"]["unavailable"].is_string());

    // (c) the tcp:// host: no shell channel, said so.
    let tcp = hosts.iter().find(|h| h["host"] == "tcpbox").unwrap();
    assert_eq!(
        tcp["readings"]["unavailable"],
        "not available over tcp:// (claims only)"
    );

    // The terminal says the same, one line per host, and labels the measured figure.
    let out = bakeoff_async(&["plan", "--fleet", f]).await;
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(
        text.contains(&format!("GPU readings on gpu2: {label} (1 GPU)")),
        "{text}"
    );
    assert!(
        text.contains("GPU readings on tcpbox: not available over tcp:// (claims only)"),
        "{text}"
    );
    let dark = text
        .lines()
        .find(|l| l.starts_with("GPU readings on nosmi:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(dark.contains("/nonexistent/bin/nvidia-smi"), "{dark}");
    assert!(
        text.contains(&format!("measured used 1.59 GiB [{label}]")),
        "{text}"
    );
}
