//! A Docker candidate through the real Docker engine, with the image built locally as
//! crates/bakeoff-seats/tests/it/docker_backend.rs builds it (scripts/seat-image.sh: the
//! rootfs of the provisioned llama-server and model, `docker import`ed under a unique tag).
//! Like those tests, it fails (never skips) when Docker is not there.

use super::*;
use crate::util::Bounded;
use crate::util::{code, free_port, root, serial_tempdir, text};

/// A unique suffix for this test's image and names.
fn unique() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}-{}", std::process::id(), n % 1_000_000_000)
}

/// `scripts/seat-image.sh TAG`: the image, asserted built.
fn build_image(tag: &str) {
    let out = std::process::Command::new("bash")
        .arg(root().join("scripts/seat-image.sh"))
        .arg(tag)
        .output_bounded()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/seat-image.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Names of the containers Docker has (running or not) named exactly `name`.
fn containers_named(name: &str) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args(["ps", "-a", "--format", "{{.Names}}", "--filter"])
        .arg(format!("name=^{name}$"))
        .output_bounded()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .filter(|l| !l.is_empty())
        .collect()
}

#[tokio::test]
async fn a_docker_candidate_ladder_runs_each_variant_in_its_own_container() {
    let (_g, dir) = serial_tempdir().await;
    let id = unique();
    let tag = format!("bakeoff-campaign-test-{id}:test");
    // Numbers only after the letters: a valid candidate name.
    let candidate = format!("dock-{}", id.replace('-', ""));
    let header =
        bakeoff_testkit::fleet::seat_header("dock", "llama.cpp", "bench", free_port(), SERVED);
    let fleet = format!(
        r#"{header}stop_timeout_s = 2
[seat.docker]
image = "{tag}"
command = ["/opt/llama/bin/llama-server", "-m", "/models/model.gguf", "--host", "0.0.0.0", "--port", "8080",
           "-c", "1024", "-np", "1", "--alias", "{SERVED}"]
container_port = 8080
restart = "no"
memory = "2g"
"#
    );
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "{candidate}"
seat = "dock"
[candidate.ladder]
"-c" = ["1024", "768"]
"#,
        header = campaign_header("docker-test")
    );
    let f = Files::write(dir.path(), &fleet, &campaign);
    let slugs = [format!("{candidate}-c-1024"), format!("{candidate}-c-768")];
    let mut cleanup = f.guard();
    cleanup.image = Some(tag.clone());
    cleanup.containers = slugs.iter().map(|s| format!("bakeoff-{s}")).collect();
    build_image(&tag);

    let o = f.run(&[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    assert_eq!(rec["finished"], true);
    for (slug, c) in slugs.iter().zip(["1024", "768"]) {
        let r = row(&rec, slug);
        assert_eq!(r["outcome_label"], "completed", "{r:#}");
        assert_eq!(axis(r, "-c"), c);
        let launch = r["launch"].as_str().unwrap();
        assert!(
            launch.starts_with(&format!("container bakeoff-{slug} image {tag} ")),
            "{launch}"
        );
        assert!(launch.contains(&format!("-c {c} ")), "{launch}");
        assert!(f.out.join(format!("{slug}.bakeoff.json")).exists(), "{r:#}");
        assert_eq!(r["suites"][0]["valid"], true, "{r:#}");
        // Stopped and removed: a bench variant leaves no container behind.
        assert!(
            containers_named(&format!("bakeoff-{slug}")).is_empty(),
            "bakeoff-{slug} was not removed"
        );
    }
    assert_eq!(
        strings(&row(&rec, &slugs[1])["delta"]),
        ["-c 768 (was 1024)"]
    );
}

/// Isolation of an out-of-memory start (docs/campaign.md "Isolation that designs itself"): a
/// window too large for the container's memory limit is OOM-killed (`host-oom`, Docker's own
/// `OOMKilled`). The probe window is predicted from the load's own buffer lines (the model's
/// and the KV cache's per-token size, llama.cpp b11434) against the limit; the search then
/// steps from it by 1/16 of the asked window until a start and a failure are one step apart.
/// The largest window that fits is found within one step of the prediction, in at most 4
/// starts. `--load-mode none` reads the weights into anonymous memory, which the limit counts;
/// `-lv 4` has llama.cpp print its buffer sizes (b11434's default verbosity 3 does not).
#[tokio::test]
async fn a_window_too_large_for_the_containers_memory_is_searched_from_its_kv_line() {
    let (_g, dir) = serial_tempdir().await;
    let id = unique();
    let tag = format!("bakeoff-campaign-oom-{id}:test");
    let candidate = format!("oom-{}", id.replace('-', ""));
    let header =
        bakeoff_testkit::fleet::seat_header("dock", "llama.cpp", "bench", free_port(), SERVED);
    let fleet = format!(
        r#"{header}stop_timeout_s = 2
[seat.docker]
image = "{tag}"
command = ["/opt/llama/bin/llama-server", "-m", "/models/model.gguf", "--host", "0.0.0.0", "--port", "8080",
           "--load-mode", "none", "-c", "262144", "-np", "1", "-lv", "4", "--alias", "{SERVED}"]
container_port = 8080
restart = "no"
memory = "768m"
"#
    );
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "{candidate}"
seat = "dock"
[candidate.isolate]
max_starts = 4
"#,
        header = campaign_header("docker-oom")
    );
    let f = Files::write(dir.path(), &fleet, &campaign);
    let mut cleanup = f.guard();
    cleanup.image = Some(tag.clone());
    build_image(&tag);

    let o = f.run(&["--allow", "contaminated"]);
    let rec = f.record();
    cleanup.containers = rows_of(&rec, &candidate)
        .iter()
        .filter_map(|r| r["variant"].as_str())
        .map(|s| format!("bakeoff-{s}"))
        .collect();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rows = rows_of(&rec, &candidate);
    assert_eq!(rows[0]["outcome_label"], "failed:host-oom", "{rec:#}");
    let iso = &rec["isolations"][0];
    assert_eq!(iso["class"], "host-oom", "{iso:#}");
    assert_eq!(iso["status"], "isolated", "{iso:#}");
    let starts = iso["starts"].as_u64().unwrap();
    assert!(starts <= 4, "{starts} starts: {iso:#}");
    // The prediction: the first probe's window, from the KV line against the limit.
    let window_of = |slug: &str| -> u64 { axis(row(&rec, slug), "-c").parse().unwrap() };
    let probes: Vec<&Value> = rows
        .iter()
        .copied()
        .filter(|r| r["probe"].is_object())
        .collect();
    let first = probes
        .iter()
        .find(|r| r["probe"]["step"] == 1)
        .unwrap_or_else(|| panic!("no first probe: {rec:#}"));
    assert!(
        first["probe"]["hypothesis"]
            .as_str()
            .unwrap()
            .contains("by the load's own buffer sizes"),
        "{first:#}"
    );
    let predicted = window_of(first["variant"].as_str().unwrap());
    let found = window_of(iso["passed"].as_str().unwrap());
    let step = 262144 / 16;
    assert!(
        found.abs_diff(predicted) <= step && found < 262144,
        "found {found}, predicted {predicted}: {iso:#}"
    );
    let factor = iso["factor"].as_str().unwrap();
    assert!(
        factor.starts_with(&format!("the window: the largest that fits is {found} (")),
        "{factor}"
    );
    eprintln!("isolation: {starts} starts; predicted {predicted}, found {found}: {factor}");
}
