//! `bakeoff eval compare` of a contaminated and a clean run (docs/metrics.md "Conditions"): no verdict, and
//! the reason names the contaminated side and its finding, until `--allow contaminated`.
//!
//! Run A is a real `eval run` against the real llama-server. Run B is a copy of A's artifact
//! with a `host-contended` flag added to its intelligence suite, as the conditions sampler
//! writes it — edited, not produced by a CPU hog, so the test does not depend on how busy this
//! shared machine is. Any condition flag the real run itself raised is removed from A's copy for
//! the same reason: A is clean by construction, B contaminated by construction.

use crate::util::Bounded;
use std::path::Path;
use std::process::Output;

use crate::util::{bakeoff_cmd, code, eval_run, only_file, read_json, serial_tempdir, text};

const CONDITION_CODES: [&str; 5] = [
    "host-contended",
    "gpu-shared",
    "page-cache-dropped",
    "thermal-throttled",
    "power-capped",
];

fn compare(a: &Path, b: &Path, extra: &[&str]) -> Output {
    bakeoff_cmd()
        .args(["eval", "compare"])
        .args(extra)
        .arg(a)
        .arg(b)
        .output_bounded()
        .unwrap()
}

/// Drop every condition flag from the artifact (run-level and per suite).
fn strip_conditions(v: &mut serde_json::Value) {
    let keep = |f: &serde_json::Value| !CONDITION_CODES.contains(&f["code"].as_str().unwrap_or(""));
    // `get_mut`: indexing a missing key would insert a null.
    if let Some(fl) = v.get_mut("instrument_flags").and_then(|f| f.as_array_mut()) {
        fl.retain(keep);
    }
    for (_, s) in v["suites"].as_object_mut().unwrap() {
        let flags = s.get_mut("summary").and_then(|s| s.get_mut("flags"));
        if let Some(fl) = flags.and_then(|f| f.as_array_mut()) {
            fl.retain(keep);
        }
    }
}

#[tokio::test]
async fn a_contaminated_side_withholds_the_verdict_until_allowed() {
    let (_g, dir) = serial_tempdir().await;
    let server = bakeoff_testkit::real_llama(4096, 1, &[], dir.path()).await;
    let run = dir.path().join("run");
    let o = eval_run(
        &server.url(),
        &run,
        &[
            "--suite",
            "intelligence",
            "--limit",
            "2",
            "--thinking",
            "off",
        ],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    drop(server);
    let mut art = read_json(&only_file(&run, ".bakeoff.json"));
    strip_conditions(&mut art);
    let pa = dir.path().join("a.bakeoff.json");
    std::fs::write(&pa, serde_json::to_string_pretty(&art).unwrap()).unwrap();
    let flags = &mut art["suites"]["intelligence"]["summary"]["flags"];
    if flags.is_null() {
        *flags = serde_json::json!([]);
    }
    flags.as_array_mut().unwrap().push(serde_json::json!({
        "code": "host-contended",
        "severity": "warning",
        "message": "other processes used 1.9 of 2 cores (pids 4242 yes, 4243 yes)",
        "suite": "intelligence"
    }));
    let pb = dir.path().join("b.bakeoff.json");
    std::fs::write(&pb, serde_json::to_string_pretty(&art).unwrap()).unwrap();

    // Clean against clean: the same items, a verdict.
    let o = compare(&pa, &pa, &["--json"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_null(), "{v}");

    // Clean against contaminated: no verdict, and why, naming the side and its finding.
    let o = compare(&pa, &pb, &[]);
    let out = text(&o);
    assert_eq!(code(&o), 0, "{out}");
    assert!(
        out.contains(
            "no verdict: contaminated measurement: A clean; B contaminated — intelligence: \
             host-contended (pass --allow contaminated to compare anyway)"
        ),
        "{out}"
    );
    // The evidence, in full, on its own line.
    assert!(
        out.contains(
            "contaminated: B intelligence: host-contended (other processes used 1.9 of 2 cores \
             (pids 4242 yes, 4243 yes))"
        ),
        "{out}"
    );
    let o = compare(&pa, &pb, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_string(), "{v}");
    let fams = v["families"].as_array().unwrap();
    assert!(!fams.is_empty());
    assert!(fams.iter().all(|f| f["has_verdict"] == false), "{v}");
    assert_eq!(v["confounds"][0]["confound"], "contaminated", "{v}");

    // Allowed: the verdict comes back, the confound still listed (allowed).
    let o = compare(&pa, &pb, &["--allow", "contaminated", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["no_verdict_reason"].is_null(), "{v}");
    assert_eq!(v["confounds"][0]["allowed"], true, "{v}");
    assert!(
        v["families"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["has_verdict"] == true),
        "{v}"
    );
}
