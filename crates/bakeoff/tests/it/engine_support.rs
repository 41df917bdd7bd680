//! Engine ↔ checkpoint before a start, for llama.cpp (docs/engines.md "Does the engine know the
//! checkpoint?"): the GGUF's `general.architecture` against the names compiled into the real
//! llama.cpp build — on this host for a process seat, and inside a Docker seat's image through a
//! throw-away container (the image built locally by scripts/seat-image.sh, as the Docker
//! campaign tests build it). The vLLM registry is asked in the vLLM tier (vllm_tier::seats).

use crate::util::Bounded;
use std::path::{Path, PathBuf};

use crate::util::{bakeoff, code, root, stdout, text};

/// A copy of the SmolLM2 GGUF whose `general.architecture` value is replaced by an unknown
/// name of the same length (GGUF strings are length-prefixed, so nothing else moves).
fn gguf_with_unknown_architecture(dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(bakeoff_testkit::smollm2_path()).unwrap();
    let key = b"general.architecture";
    let at = bytes
        .windows(key.len())
        .position(|w| w == key)
        .expect("the GGUF names its architecture");
    // key, then the value's type (u32, 8 = string), its length (u64), its bytes.
    let len_at = at + key.len() + 4;
    let len = u64::from_le_bytes(bytes[len_at..len_at + 8].try_into().unwrap()) as usize;
    let value = len_at + 8;
    assert_eq!(
        &bytes[value..value + len],
        b"llama",
        "SmolLM2 is a llama GGUF"
    );
    bytes[value..value + len].copy_from_slice(b"frobn");
    let p = dir.join("frobn.gguf");
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `audit seat NAME --json` on `fleet`: the parsed answer.
fn audit(fleet: &Path, seat: &str) -> serde_json::Value {
    let o = bakeoff(&[
        "audit",
        "seat",
        "--fleet",
        &fleet.display().to_string(),
        seat,
        "--json",
    ]);
    assert!(code(&o) <= 1, "{}", text(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// The finding of the engine-support check among an audit's findings.
fn support(v: &serde_json::Value) -> serde_json::Value {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"].as_str().unwrap().starts_with("engine-"))
        .cloned()
        .unwrap_or_else(|| panic!("no engine-support finding: {v}"))
}

#[test]
fn a_process_seat_is_checked_against_the_real_builds_architecture_names() {
    let dir = tempfile::tempdir().unwrap();
    let server = bakeoff_testkit::engine().llama_server;
    let frobn = gguf_with_unknown_architecture(dir.path());
    let fleet = dir.path().join("fleet.toml");
    std::fs::write(
        &fleet,
        format!(
            r#"
[[seat]]
name = "known"
engine = "llama.cpp"
role = "bench"
port = 18310
[seat.process]
command = "{server}"
args = ["-m", "{gemma}", "--port", "18310"]

[[seat]]
name = "unknown"
engine = "llama.cpp"
role = "bench"
port = 18311
[seat.process]
command = "{server}"
args = ["-m", "{frobn}", "--port", "18311"]
"#,
            server = server.display(),
            gemma = bakeoff_testkit::model_path().display(),
            frobn = frobn.display(),
        ),
    )
    .unwrap();
    let v = audit(&fleet, "known");
    let f = support(&v);
    assert_eq!(f["code"], "engine-supports-checkpoint", "{v}");
    assert!(f["message"].as_str().unwrap().contains("gemma3"), "{f}");
    assert!(
        f["evidence"][0].as_str().unwrap().contains("libllama"),
        "the shared build's libllama answers: {f}"
    );
    assert_eq!(v["refused"], serde_json::Value::Null, "{v}");

    // A refused start: the refusal carries the finding, what was read and the fix.
    let v = audit(&fleet, "unknown");
    let refused = v["refused"].as_str().unwrap();
    assert!(refused.starts_with("engine-unsupported-checkpoint"), "{v}");
    assert!(refused.contains("does not know architecture frobn"), "{v}");
    assert!(refused.contains("libllama.so"), "{v}");
    assert!(refused.contains("fix: use a llama.cpp build"), "{v}");

    // `seat up` refuses before anything starts, citing what was checked.
    let o = bakeoff(&[
        "seat",
        "up",
        "--fleet",
        &fleet.display().to_string(),
        "unknown",
    ]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("does not know architecture frobn"),
        "{}",
        text(&o)
    );
    assert!(
        !dir.path().join(".bakeoff-seats").exists()
            || std::fs::read_dir(dir.path().join(".bakeoff-seats"))
                .unwrap()
                .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".pid")),
        "nothing was started"
    );
}

/// A hub repository in a Hugging Face hub cache (`HUB/models--ORG--NAME`): `refs/main` names
/// the commit, `snapshots/COMMIT/FILE` holds `file` (huggingface_hub's cache layout).
pub(crate) fn cached_hub_file(hub: &Path, repo: &str, name: &str, file: &Path) -> PathBuf {
    let commit = "0123456789abcdef0123456789abcdef01234567";
    let repo_dir = hub.join(format!("models--{}", repo.replace('/', "--")));
    std::fs::create_dir_all(repo_dir.join("refs")).unwrap();
    std::fs::write(repo_dir.join("refs/main"), commit).unwrap();
    let snap = repo_dir.join("snapshots").join(commit);
    std::fs::create_dir_all(&snap).unwrap();
    std::os::unix::fs::symlink(file, snap.join(name)).unwrap();
    snap
}

/// A llama.cpp seat that names its model by a hub id (`-hf ORG/NAME:QUANT`) is checked against
/// the GGUF the engine will load: the one in the seat's hub cache (`HF_HOME`), read from its
/// header, against the real build's architecture names. An unknown architecture is refused
/// before anything starts; a repository the cache does not hold says exactly why it is not
/// checked.
#[test]
fn a_hub_id_in_the_seats_cache_is_checked_against_the_real_build() {
    let dir = tempfile::tempdir().unwrap();
    let server = bakeoff_testkit::engine().llama_server;
    let frobn = gguf_with_unknown_architecture(dir.path());
    let hub = dir.path().join("hf/hub");
    cached_hub_file(
        &hub,
        "frob/smol-GGUF",
        "smol-Q4_1.gguf",
        &bakeoff_testkit::smollm2_path(),
    );
    cached_hub_file(&hub, "frob/frobn-GGUF", "frobn-Q4_1.gguf", &frobn);
    let seat = |name: &str, port: u16, repo: &str| {
        format!(
            r#"
[[seat]]
name = "{name}"
engine = "llama.cpp"
role = "bench"
port = {port}
[seat.process]
command = "{server}"
args = ["-hf", "{repo}", "--port", "{port}"]
env = {{ HF_HOME = "{hf}", HF_HUB_OFFLINE = "1" }}
"#,
            server = server.display(),
            hf = dir.path().join("hf").display(),
        )
    };
    let fleet = dir.path().join("fleet.toml");
    std::fs::write(
        &fleet,
        [
            seat("known", 18313, "frob/smol-GGUF:Q4_1"),
            seat("unknown", 18314, "frob/frobn-GGUF:Q4_1"),
            seat("absent", 18315, "frob/absent-GGUF:Q4_1"),
        ]
        .concat(),
    )
    .unwrap();
    let v = audit(&fleet, "known");
    let f = support(&v);
    assert_eq!(f["code"], "engine-supports-checkpoint", "{v}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("architecture llama"),
        "{f}"
    );
    assert!(
        f["message"].as_str().unwrap().contains("smol-Q4_1.gguf"),
        "{f}"
    );
    assert_eq!(v["refused"], serde_json::Value::Null, "{v}");

    let v = audit(&fleet, "unknown");
    let refused = v["refused"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(refused.starts_with("engine-unsupported-checkpoint"), "{v}");
    assert!(refused.contains("does not know architecture frobn"), "{v}");
    assert!(refused.contains("models--frob--frobn-GGUF"), "{v}");
    let o = bakeoff(&[
        "seat",
        "up",
        "--fleet",
        &fleet.display().to_string(),
        "unknown",
    ]);
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("does not know architecture frobn"),
        "{}",
        text(&o)
    );
    assert!(
        !dir.path()
            .join(".bakeoff-seats/unknown.process.json")
            .exists(),
        "nothing was started"
    );

    let v = audit(&fleet, "absent");
    let f = support(&v);
    assert_eq!(f["code"], "engine-support-not-checked", "{v}");
    let m = f["message"].as_str().unwrap();
    assert!(
        m.contains("frob/absent-GGUF@main is not in the seat's hub cache"),
        "{m}"
    );
}

/// Removes the test's image and any container a check left (there must be none).
struct ImageGuard(String);

impl Drop for ImageGuard {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker")
            .args(["rmi", "-f", &self.0])
            .output_bounded();
    }
}

fn check_containers() -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args([
            "ps",
            "-a",
            "--format",
            "{{.Names}}",
            "--filter",
            "name=bakeoff-check-",
        ])
        .output_bounded()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn a_docker_seats_image_is_asked_through_a_throw_away_container() {
    let tag = format!("bakeoff-engine-support:{}", std::process::id());
    let out = std::process::Command::new("bash")
        .arg(root().join("scripts/seat-image.sh"))
        .arg(&tag)
        .output_bounded()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/seat-image.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _guard = ImageGuard(tag.clone());
    let dir = tempfile::tempdir().unwrap();
    // Written beside the fleet file, mounted at /m in the "mounted" seat.
    gguf_with_unknown_architecture(dir.path());
    let fleet = dir.path().join("fleet.toml");
    std::fs::write(
        &fleet,
        format!(
            r#"
# The model baked into the image (/models/model.gguf): read from the image too.
[[seat]]
name = "baked"
engine = "llama.cpp"
role = "bench"
port = 18312
[seat.docker]
image = "{tag}"
command = ["/opt/llama/bin/llama-server", "-m", "/models/model.gguf", "--port", "18312"]

# A mounted model the image's build does not know.
[[seat]]
name = "mounted"
engine = "llama.cpp"
role = "bench"
port = 18313
[seat.docker]
image = "{tag}"
command = ["/opt/llama/bin/llama-server", "-m", "/m/frobn.gguf", "--port", "18313"]
mounts = ["{host}:/m:ro"]

# An image that is not on this host: never pulled for a check.
[[seat]]
name = "absent"
engine = "llama.cpp"
role = "bench"
port = 18314
[seat.docker]
image = "bakeoff-absent-image:never"
command = ["/opt/llama/bin/llama-server", "-m", "/models/model.gguf"]
"#,
            host = dir.path().display(),
        ),
    )
    .unwrap();

    let v = audit(&fleet, "baked");
    let f = support(&v);
    assert_eq!(f["code"], "engine-supports-checkpoint", "{v}");
    let evidence = f["evidence"][0].as_str().unwrap();
    assert!(
        evidence.contains("gemma3") && evidence.contains(&format!("libllama.so in {tag}")),
        "{f}"
    );

    let v = audit(&fleet, "mounted");
    let refused = v["refused"].as_str().unwrap();
    assert!(refused.starts_with("engine-unsupported-checkpoint"), "{v}");
    assert!(refused.contains(&format!("libllama.so in {tag}")), "{v}");

    let v = audit(&fleet, "absent");
    let f = support(&v);
    assert_eq!(f["code"], "engine-support-not-checked", "{v}");
    assert!(
        f["message"].as_str().unwrap().contains("not on this host"),
        "{f}"
    );
    assert!(check_containers().is_empty(), "{:?}", check_containers());
}
