//! `eval damage` against the real vLLM: its self-check (the reference against itself, salted so
//! no prefix cache answers) passes on vLLM, and two configurations of the one engine are
//! compared — the base against the base with the applied LoRA (beyond the noise) and against the
//! zero-update LoRA (within it).

use std::path::Path;

use bakeoff_testkit::vllm::{self, SERVED};

use crate::util::{first_prompts, read_json};

use super::run;

async fn damage(url: &str, candidate: &str, dir: &Path) -> (i32, serde_json::Value, String) {
    let p = first_prompts(dir, 8);
    let out = dir.join("out");
    let (code, text, err) = run(&[
        "eval",
        "damage",
        "--endpoint",
        url,
        "--model",
        candidate,
        "--reference",
        url,
        "--reference-model",
        SERVED,
        "--prompts",
        p.to_str().unwrap(),
        "--slug",
        candidate,
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    let art = read_json(&out.join(format!("{candidate}.bakeoff.json")));
    let d = art["suites"]["damage"]["summary"]["damage"].clone();
    (code, d, format!("{text}{err}"))
}

#[tokio::test]
async fn damage_self_checks_on_vllm_and_tells_two_configurations_apart() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let (code, d, text) = damage(&s.url(), "applied", dir.path()).await;
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["self_check"]["passed"], true, "{d}");
    assert_eq!(d["beyond_noise"], true, "{d}");
    assert!(d["kl"]["mean"].as_f64().unwrap() > 0.0, "{d}");

    let dir = bakeoff_testkit::tempdir();
    let (code, d, text) = damage(&s.url(), "noop", dir.path()).await;
    assert_eq!(code, 0, "{text}");
    assert_eq!(d["self_check"]["passed"], true, "{d}");
    assert_eq!(d["beyond_noise"], false, "{d}");
}
