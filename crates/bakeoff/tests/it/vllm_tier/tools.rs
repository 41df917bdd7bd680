//! Tool calling against the real vLLM, with `--enable-auto-tool-choice --tool-call-parser
//! hermes`: the tool probe says accepted and the suite measures, whatever this tiny model
//! scores. (A server without the flags — one finding with the fix, never one `http-error` per
//! item — is the seat test's, `seats::a_vllm_seat_goes_up_serves_and_comes_down`, so the tier
//! starts one server fewer.)

use bakeoff_testkit::vllm;

use super::{only, run};

#[tokio::test]
async fn with_tool_calling_on_the_suite_measures() {
    let s = vllm::shared().await;
    let dir = bakeoff_testkit::tempdir();
    let (code, text, err) = run(&[
        "eval",
        "run",
        "--endpoint",
        &s.url(),
        "--suite",
        "tool",
        "--limit",
        "1",
        "--out",
        dir.path().to_str().unwrap(),
    ])
    .await;
    assert_eq!(code, 0, "{text}{err}");
    let a = only(dir.path(), ".bakeoff.json");
    let tool = &a["suites"]["tool"];
    assert_eq!(tool["status"], "complete", "{tool}");
    let outcomes = tool["summary"]["outcomes"].as_object().unwrap();
    assert!(!outcomes.contains_key("http-error"), "{outcomes:?}");
    assert_eq!(a["endpoint"]["facts"]["tool_calls"]["state"], "accepted");
}
