//! A campaign over a real vLLM production seat: while a streaming client keeps it busy the idle
//! wait reads vLLM's own `vllm:num_requests_running/waiting` and skips the candidate
//! (`skipped:not-idle`, nothing stopped); once quiet, the seat is displaced for a vLLM candidate
//! (`--max-model-len 999999`, classed `context-too-long` from vLLM's own validation error) and
//! restored, serving again. One variant: every vLLM start costs 30–80 s on 2 cores, and a
//! variant measured through a campaign is the llama.cpp ladder's (campaign/ladder.rs) and a
//! vLLM measured by `eval run` the rest of the tier's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bakeoff_testkit::vllm::{self, SERVED};

use crate::campaign::window::keep_busy;
use crate::campaign::{Files, alive, rows_of, wait_until};
use crate::util::{code, text};

use super::seats::vllm_seat;

/// `campaign run` with a vLLM's start budget: it loads for 30–80 s on 2 cores and is quiet
/// while it profiles.
fn run_campaign(f: &Files, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "campaign",
        "run",
        f.campaign.to_str().unwrap(),
        "--silence-timeout",
        "120",
        "--ready-timeout",
        "300",
    ];
    args.extend(extra);
    crate::util::bakeoff(&args)
}

/// vLLM's own gauge says a request is running.
fn running(port: u16) -> bool {
    crate::campaign::http(port, "GET", "/metrics", None).is_ok_and(|(status, body)| {
        status == 200
            && body.lines().any(|l| {
                l.starts_with("vllm:num_requests_running{")
                    && l.rsplit(' ')
                        .next()
                        .and_then(|v| v.parse::<f64>().ok())
                        .is_some_and(|v| v > 0.0)
            })
    })
}

#[tokio::test]
async fn a_vllm_production_seat_is_waited_for_displaced_and_restored() {
    let _g = vllm::serial().await;
    let t = vllm::tier();
    let dir = bakeoff_testkit::tempdir();
    let port = vllm::free_port();
    let fleet = [
        vllm_seat("prod", port, &t.model_dir, &[])
            .replace("role = \"bench\"", "role = \"production\""),
        vllm_seat("trial", port, &t.model_dir, &[]),
    ]
    .concat();
    let campaign = r#"[campaign]
name = "vllm-window"
fleet = "fleet.toml"
suites = ["smoke"]
limit = 1
out = "out"

[[candidate]]
name = "smol"
seat = "trial"
[candidate.window]
displaces = ["prod"]
idle_for_s = 2
idle_timeout_s = 8
[candidate.ladder]
"--max-model-len" = ["999999"]
"#;
    let f = Files::write(dir.path(), &fleet, campaign);
    let _cleanup = f.guard();
    let o = f.seat(&["up", "prod", "--confirm", "--ready-timeout", "300"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let pid = f.pid("prod").unwrap();

    // Busy: vLLM's gauges say so, the candidate is skipped and prod never stopped.
    let stop = Arc::new(AtomicBool::new(false));
    let client = keep_busy(port, SERVED, stop.clone());
    wait_until(
        "vLLM to report a running request",
        Duration::from_secs(120),
        || running(port),
    );
    let o = run_campaign(&f, &["--confirm"]);
    stop.store(true, Ordering::SeqCst);
    client.join().unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    for r in rows_of(&rec, "smol") {
        assert_eq!(r["outcome_label"], "skipped:not-idle", "{r:#}");
    }
    assert_eq!(f.pid("prod"), Some(pid), "prod was stopped while busy");
    assert!(alive(pid));

    // Quiet: displaced, the candidate classed by vLLM's own words, prod restored.
    wait_until("vLLM to go idle", Duration::from_secs(120), || {
        !running(port)
    });
    let o = run_campaign(&f, &["--confirm", "--fresh"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let rows = rows_of(&rec, "smol");
    assert_eq!(rows.len(), 1, "{rec:#}");
    let labels: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["outcome_label"].as_str())
        .collect();
    assert_eq!(labels, ["failed:context-too-long"], "{rec:#}");
    for r in &rows {
        let d = &r["displaced"][0];
        assert_eq!(d["seat"], "prod", "{r:#}");
    }
    let last = rows
        .iter()
        .rev()
        .find(|r| r["displaced"][0]["restored"].is_boolean());
    assert!(
        last.is_some_and(|r| r["displaced"][0]["restored"] == true),
        "{rows:#?}"
    );
    let restored = f.pid("prod").expect("prod is up again");
    assert_ne!(restored, pid);
    assert!(alive(restored));
    let (code, st, _) = super::run(&["seat", "status", "--fleet", f.fleet_arg(), "--probe"]).await;
    assert_eq!(code, 0, "{st}");
    assert!(st.contains("serving"), "{st}");
    f.seat_down("prod");
}

/// Isolation on the real vLLM (docs/campaign.md "Isolation that designs itself"): a window
/// above the checkpoint's is probed at the window vLLM itself derived (its words: `the derived
/// max_model_len (max_position_embeddings=8192 …)`), which starts and completes; a flag value
/// this build's argument parser refuses (`argument --max-num-seqs: invalid int value`) is left
/// out, which starts. vLLM's KV-budget wordings cannot be produced on CPU (its KV cache is sized
/// in whole GiB: docs/engines.md); those probes are tested on llama.cpp and over the real GPU
/// wordings in the planner's own tests.
#[tokio::test]
async fn a_vllm_candidate_isolates_to_the_derived_window_and_to_a_refused_flag() {
    let _g = vllm::serial().await;
    let t = vllm::tier();
    let dir = bakeoff_testkit::tempdir();
    let port = vllm::free_port();
    let fleet = vllm_seat("trial", port, &t.model_dir, &[]);
    let campaign = r#"[campaign]
name = "vllm-isolate"
fleet = "fleet.toml"
suites = ["smoke"]
limit = 1
out = "out"

[[candidate]]
name = "long"
seat = "trial"
set_args = { "--max-model-len" = "999999" }
[candidate.isolate]
max_starts = 2

[[candidate]]
name = "refused"
seat = "trial"
set_args = { "--max-num-seqs" = "many" }
[candidate.isolate]
max_starts = 2
"#;
    let f = Files::write(dir.path(), &fleet, campaign);
    let _cleanup = f.guard();
    let o = run_campaign(&f, &["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let iso = |name: &str| crate::campaign::isolation(&rec, name).clone();
    let long = iso("long");
    assert_eq!(long["class"], "context-too-long", "{long:#}");
    assert_eq!(long["status"], "isolated", "{long:#}");
    assert_eq!(long["passed"], "long-probe-max-model-len-8192", "{long:#}");
    let probe = crate::campaign::row(&rec, "long-probe-max-model-len-8192");
    assert_eq!(probe["outcome_label"], "completed", "{probe:#}");
    let refused = iso("refused");
    assert_eq!(refused["class"], "bad-argument", "{refused:#}");
    assert_eq!(
        refused["factor"], "the flag `--max-num-seqs` is the cause",
        "{refused:#}"
    );
    assert_eq!(refused["starts"], 1, "{refused:#}");
    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    assert!(
        md.contains("**Separating factor:** the window: 999999 is above the checkpoint's 8192"),
        "{md}"
    );
}

/// An older build's registry, imitated (no older vLLM is installed here): its Python answers
/// the registry probe with a list that lacks the test model's `LlamaForCausalLM`, as vLLM
/// builds before an architecture landed do (docs/field-cases.md B2: the image did not know the architecture).
fn older_build(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("old-vllm/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let py = bin.join("python3");
    std::fs::write(
        &py,
        "#!/bin/sh\necho '{\"architectures\": [\"OPTForCausalLM\"], \"model_types\": [\"opt\"], \"vllm\": \"0.2.0\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    py
}

/// A failure of engine support is isolated by asking the candidate's listed builds with the
/// registry check, never by a start: the real vLLM knows the test model's architecture where
/// the older build does not (isolated: the engine build); no build knows an unknown
/// architecture (proven unfit); a build that cannot be asked leaves it not isolated.
#[tokio::test]
async fn an_engine_support_failure_asks_the_listed_builds_without_a_start() {
    let t = vllm::tier();
    let dir = bakeoff_testkit::tempdir();
    let arch = super::seats::unknown_architecture(dir.path(), &t.model_dir);
    let old = older_build(dir.path());
    let real = t.python.display().to_string();
    let fleet = [
        vllm_seat("frob-seat", vllm::free_port(), &arch, &[]),
        vllm_seat("old-seat", vllm::free_port(), &t.model_dir, &[]).replace(
            &format!("command = {real:?}"),
            &format!("command = {:?}", old.display().to_string()),
        ),
    ]
    .concat();
    assert!(fleet.contains("old-vllm"), "{fleet}");
    let campaign = format!(
        r#"[campaign]
name = "vllm-support"
fleet = "fleet.toml"
suites = ["smoke"]
limit = 1
out = "out"

[[candidate]]
name = "frob"
seat = "frob-seat"
[candidate.isolate]
alternatives = [{real:?}, "/nonexistent/venv/bin/python3"]

[[candidate]]
name = "frob-real"
seat = "frob-seat"
[candidate.isolate]
alternatives = [{real:?}]

[[candidate]]
name = "old"
seat = "old-seat"
[candidate.isolate]
alternatives = [{real:?}]
"#
    );
    let f = Files::write(dir.path(), &fleet, &campaign);
    let _cleanup = f.guard();
    let o = run_campaign(&f, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let iso = |name: &str| crate::campaign::isolation(&rec, name).clone();
    for name in ["frob", "frob-real", "old"] {
        let i = iso(name);
        assert_eq!(i["class"], "unsupported-architecture", "{i:#}");
        assert_eq!(i["starts"], 0, "a registry check is not a start: {i:#}");
    }
    let frob = iso("frob");
    assert_eq!(frob["status"], "not-isolated", "{frob:#}");
    assert_eq!(frob["alternatives"][0]["verdict"], "refuses", "{frob:#}");
    assert!(
        frob["alternatives"][0]["words"]
            .as_str()
            .unwrap()
            .contains("FrobnicatorForCausalLM"),
        "{frob:#}"
    );
    assert_eq!(
        frob["alternatives"][1]["verdict"], "not-checked",
        "{frob:#}"
    );
    let unfit = iso("frob-real");
    assert_eq!(unfit["status"], "proven-unfit", "{unfit:#}");
    let old = iso("old");
    assert_eq!(old["status"], "isolated", "{old:#}");
    assert_eq!(old["alternatives"][0]["verdict"], "supports", "{old:#}");
    assert!(
        old["factor"]
            .as_str()
            .unwrap()
            .starts_with("the engine build: "),
        "{old:#}"
    );
    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    assert!(
        md.contains("**Separating factor:** the engine build: "),
        "{md}"
    );
}

/// vLLM's KV-budget refusal cannot be produced on CPU (the CPU build sizes its KV cache in whole
/// GiB, `VLLM_CPU_KVCACHE_SPACE`, and 1 GiB holds more than SmolLM2's 8192-token window): this
/// wrapper around the real vLLM start replays the GPU wording above a window threshold —
/// vLLM 0.19.1 vllm/v1/core/kv_cache_utils.py `_check_enough_kv_cache_memory`, the line the
/// watchdog classes `kv-cache-budget` — and starts the real vLLM at or below it.
fn kv_budget_wrapper(dir: &std::path::Path, above: u64) -> String {
    replay_wrapper(
        dir,
        "vllm-kv-budget.sh",
        &format!(
            r#"# Replays vLLM's GPU KV-budget refusal above a window, around the real vLLM start.
len=0; prev=""
for a in "$@"; do
  if [ "$prev" = "--max-model-len" ]; then len="$a"; fi
  prev="$a"
done
if [ "$len" -gt {above} ]; then
  echo "ERROR 12-07 06:00:00 [core.py:708] ValueError: To serve at least one request with the models's max seq len ($len), (0.19 GiB KV cache is needed, which is larger than the available KV cache memory (0.09 GiB). Based on the available memory, the estimated maximum model length is {above}. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine." >&2
  exit 1
fi
"#
        ),
    )
}

/// A shell script at `dir/name`: `body` (which may print an engine's GPU-only words and exit),
/// then its arguments as the command (the seat gives the real interpreter as the first).
fn replay_wrapper(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join(name);
    std::fs::write(&script, format!("#!/usr/bin/env bash\n{body}exec \"$@\"\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// A process seat of the real vLLM whose command is `wrapper`, the real interpreter its first
/// argument.
fn wrapped_vllm_seat(name: &str, wrapper: &str) -> String {
    let t = vllm::tier();
    let real = t.python.display().to_string();
    let seat = vllm_seat(name, vllm::free_port(), &t.model_dir, &[]);
    let seat = seat
        .replace(
            &format!("command = {real:?}"),
            &format!("command = {wrapper:?}"),
        )
        .replace("args = [", &format!("args = [{real:?}, "));
    assert!(seat.contains(wrapper), "{seat}");
    seat
}

/// A KV budget the engine states is isolated by its own arithmetic: the window it says the
/// budget holds starts (a real vLLM start), one step above fails, and the factor is the window;
/// the 8-bit KV cache that would keep the asked window is priced and, past the budget, listed.
#[tokio::test]
async fn a_stated_kv_budget_on_vllm_is_isolated_to_the_window_it_predicts() {
    let _g = vllm::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let wrapper = kv_budget_wrapper(dir.path(), 4096);
    let seat = wrapped_vllm_seat("kv-seat", &wrapper);
    let campaign = r#"[campaign]
name = "vllm-kv"
fleet = "fleet.toml"
suites = ["smoke"]
limit = 1
out = "out"

[[candidate]]
name = "kv"
seat = "kv-seat"
set_args = { "--max-model-len" = "8192" }
[candidate.isolate]
max_starts = 2
"#;
    let f = Files::write(dir.path(), &seat, campaign);
    let _cleanup = f.guard();
    let o = run_campaign(&f, &["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let iso = crate::campaign::isolation(&rec, "kv");
    assert_eq!(iso["class"], "kv-cache-budget", "{iso:#}");
    assert_eq!(iso["status"], "isolated", "{iso:#}");
    assert_eq!(
        iso["factor"], "the window: the largest that fits is 4096 (4608 fails)",
        "{iso:#}"
    );
    assert_eq!(iso["starts"], 2, "{iso:#}");
    // The lever that would keep the window, priced to fit (8-bit KV holds about 8192), was cut
    // by the budget of 2 starts: listed, not started.
    let cut = iso["not_attempted"].to_string();
    assert!(cut.contains("--kv-cache-dtype fp8"), "{iso:#}");
    let passed = crate::campaign::row(&rec, iso["passed"].as_str().unwrap());
    assert_eq!(passed["outcome_label"], "completed", "{passed:#}");
}

/// docs/field-cases.md B4's multimodal checkpoint: the engine profiled an encoder and left a negative KV
/// budget (vLLM's GPU-only words, replayed by a wrapper while `--language-model-only` is absent).
/// The campaign's one probe is the language model alone, a real vLLM start, and it isolates the
/// encoder's reservation without raising the fraction.
#[tokio::test]
async fn a_multimodal_negative_budget_is_isolated_by_the_language_model_alone() {
    let _g = vllm::serial().await;
    let dir = bakeoff_testkit::tempdir();
    let wrapper = replay_wrapper(
        dir.path(),
        "vllm-encoder.sh",
        r#"# Replays vLLM's encoder profile and a negative KV budget unless --language-model-only.
case " $* " in
  *" --language-model-only "*) ;;
  *)
    echo "INFO 12-07 06:00:00 [gpu_model_runner.py:6166] Encoder cache will be initialized with a budget of 8192 tokens, and profiled with 1 image items of the maximum feature size." >&2
    echo "INFO 12-07 06:00:01 [gpu_worker.py:412] Available KV cache memory: -0.42 GiB" >&2
    echo "ERROR 12-07 06:00:01 [core.py:708] ValueError: No available memory for the cache blocks. Try increasing \`gpu_memory_utilization\` when initializing the engine." >&2
    exit 1 ;;
esac
"#,
    );
    let seat = wrapped_vllm_seat("mm-seat", &wrapper);
    let campaign = r#"[campaign]
name = "vllm-mm"
fleet = "fleet.toml"
suites = ["smoke"]
limit = 1
out = "out"

[[candidate]]
name = "mm"
seat = "mm-seat"
[candidate.isolate]
max_starts = 2
"#;
    let f = Files::write(dir.path(), &seat, campaign);
    let _cleanup = f.guard();
    let o = run_campaign(&f, &["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let rec = f.record();
    let iso = crate::campaign::isolation(&rec, "mm");
    assert_eq!(iso["class"], "kv-cache-budget", "{iso:#}");
    assert_eq!(iso["status"], "isolated", "{iso:#}");
    assert_eq!(
        iso["factor"], "the multimodal encoder's reservation: --language-model-only starts",
        "{iso:#}"
    );
    assert_eq!(iso["starts"], 1, "{iso:#}");
    let passed = crate::campaign::row(&rec, iso["passed"].as_str().unwrap());
    assert_eq!(passed["outcome_label"], "completed", "{passed:#}");
}
