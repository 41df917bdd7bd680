//! (docs/suites.md "Structured output") `eval run --suite structured` against the real
//! llama-server serving the instruction-tuned SmolLM2 (the shipped battery: every item one
//! outcome, none an instrument error; what llama.cpp refuses or does not enforce shown as such,
//! in its words), against scripted servers that accept a schema and break it (`not-enforced`,
//! never `valid-wrong`) or refuse it (a bad battery's refusal is `bakeoff-flags`' test). `bench
//! run --schema` against the real llama-server: both sides measured at c = 1 and 2, the
//! difference with an interval, the compile cost apart.

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use bakeoff_testkit::scripted;
use serde_json::{Value, json};

use crate::util::{code, eval_run_async, read_json, serial_tempdir, text, valid_artifact};

const OUTCOMES: [&str; 5] = [
    "refused",
    "not-enforced",
    "truncated",
    "valid-wrong",
    "valid-right",
];

/// The structured suite of an artifact, checked for consistency: every item has one outcome
/// of the suite's own (none `request-failed`); a refusal keeps the server's words and they are
/// in the reply's error body; a schema not enforced names what the reply broke; the per-class
/// counts add up to the items. Returns (id → outcome) and prints the per-class figures.
pub(crate) fn check_structured(a: &Value, engine: &str) -> Vec<(String, String)> {
    let suite = &a["suites"]["structured"];
    let items = suite["items"].as_array().unwrap();
    let mut out = Vec::new();
    for it in items {
        let id = it["id"].as_str().unwrap().to_string();
        let o = it["extra"]["outcome"]
            .as_str()
            .unwrap_or("none")
            .to_string();
        assert!(OUTCOMES.contains(&o.as_str()), "{engine} {id}: {o}: {it}");
        match o.as_str() {
            "refused" => {
                let words = it["extra"]["words"].as_str().unwrap();
                assert!(!words.is_empty(), "{id}");
                let body = it["error"]["body"].as_str().unwrap_or_default();
                let first = words.split_whitespace().next().unwrap();
                assert!(
                    body.contains(first),
                    "{id}: words {words:?} not in body {body:?}"
                );
                assert_eq!(it["outcome"], "http-error", "{id}");
            }
            "not-enforced" => {
                assert!(it["extra"]["violation"].is_string(), "{id}: {it}");
                assert_eq!(it["outcome"], "wrong", "{id}");
            }
            "valid-right" => assert_eq!(it["outcome"], "ok", "{id}"),
            "valid-wrong" => assert_eq!(it["outcome"], "wrong", "{id}"),
            _ => {}
        }
        out.push((id, o));
    }
    let d = &suite["summary"]["details"];
    let classes = d["classes"].as_array().unwrap();
    let sum: u64 = classes.iter().map(|c| c["items"].as_u64().unwrap()).sum();
    assert_eq!(sum as usize, items.len());
    assert_eq!(d["totals"]["request_failed"], 0, "{d}");
    let s = &suite["summary"]["score"];
    eprintln!(
        "{engine}: structured {}/{} valid-right = {:.0}% [{:.0}–{:.0}%], form {}, backend {}",
        s["successes"],
        s["n"],
        s["estimate"].as_f64().unwrap() * 100.0,
        s["low"].as_f64().unwrap() * 100.0,
        s["high"].as_f64().unwrap() * 100.0,
        d["form"],
        d["backend"]
    );
    for c in classes {
        eprintln!(
            "  {:<24} items {} refused {} not-enforced {} truncated {} valid-wrong {} valid-right {}",
            c["class"].as_str().unwrap(),
            c["items"],
            c["refused"],
            c["not_enforced"],
            c["truncated"],
            c["valid_wrong"],
            c["valid_right"]
        );
    }
    for (id, o) in &out {
        if o == "refused" || o == "not-enforced" {
            let it = items.iter().find(|i| i["id"] == id.as_str()).unwrap();
            eprintln!(
                "  {id}: {o}: {}",
                it["extra"]["words"]
                    .as_str()
                    .or(it["extra"]["violation"].as_str())
                    .unwrap_or("")
            );
        }
    }
    out
}

fn outcome_of<'a>(got: &'a [(String, String)], id: &str) -> &'a str {
    got.iter()
        .find(|(i, _)| i == id)
        .map(|(_, o)| o.as_str())
        .unwrap_or("missing")
}

#[tokio::test]
async fn the_real_llama_server_runs_the_shipped_battery_and_names_what_it_refuses() {
    let (_serial, dir) = serial_tempdir().await;
    let smol = crate::util::smollm2_llama(dir.path(), "smollm2", &[]).await;
    let out = dir.path().join("out");
    let o = eval_run_async(
        &smol.url(),
        &out,
        &["--suite", "structured", "--slug", "llama-structured"],
    )
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let a = valid_artifact(&out, ".bakeoff.json");
    assert_eq!(a["run"]["schema_form"], "auto");
    assert_eq!(a["run"]["structured_battery"], Value::Null);
    let got = check_structured(&a, "llama.cpp b11434, SmolLM2-135M-Instruct Q4_1");
    assert_eq!(got.len(), 25);
    let d = &a["suites"]["structured"]["summary"]["details"];
    assert_eq!(d["form"], "response-format");
    // Sent in OpenAI's form, the schema as the battery has it.
    let first = &a["suites"]["structured"]["items"][0];
    let shipped: Value = serde_json::from_str(
        include_str!("../../../bakeoff-suites/data/structured-default.jsonl")
            .lines()
            .find(|l| l.starts_with('{'))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["id"], shipped["id"]);
    assert_eq!(
        first["request"]["response_format"]["json_schema"]["schema"],
        shipped["schema"]
    );
    assert_eq!(first["request"]["response_format"]["type"], "json_schema");
    // llama.cpp's schema conversion follows only `$ref`s into the same document by path: the
    // `$ref` to an `$anchor` is refused, in its own words (b11434: "JSON schema error at
    // #/properties/price: unsupported $ref #money, only references into the same document are
    // supported"), which name no backend.
    assert_eq!(outcome_of(&got, "ref-anchor-price"), "refused");
    let anchor = a["suites"]["structured"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "ref-anchor-price")
        .unwrap();
    let words = anchor["extra"]["words"].as_str().unwrap();
    assert!(words.contains("unsupported $ref #money"), "{words}");
    assert_eq!(d["backend"], Value::Null);
    // The text the operator reads: the cell and the refusal.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("valid-right ="), "{stdout}");
    assert!(stdout.contains("ref-anchor-price: "), "{stdout}");
}

/// A server that accepts whatever schema it is sent, records the requests, and answers every
/// chat request with `reply`. Copies the OpenAI-compatible shape every engine shares (a
/// `/v1/models` list, a streamed chat reply); a llama.cpp or vLLM without constraining (an old
/// build, or a gateway that drops the field) answers so.
fn accepts_and_ignores(reply: &'static str, seen: Arc<Mutex<Vec<Value>>>) -> Router {
    Router::new()
        .route(
            "/v1/models",
            get(|| async {
                Json(json!({"object":"list","data":[{"id":"loose","object":"model"}]}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(b): Json<Value>| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(b);
                    scripted::chat_stream(&[reply], &[], "stop", 12)
                }
            }),
        )
}

#[tokio::test]
async fn a_server_that_accepts_the_schema_and_breaks_it_is_not_enforced_never_valid_wrong() {
    for reply in [
        r#"["not", "an", "object"]"#,
        "Sure! Here is the JSON you asked for.",
    ] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = scripted::serve(accepts_and_ignores(reply, seen.clone())).await;
        let dir = bakeoff_testkit::tempdir();
        let o = eval_run_async(
            &s.url(),
            dir.path(),
            &["--suite", "structured", "--limit", "1"],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", text(&o));
        let a = valid_artifact(dir.path(), ".bakeoff.json");
        let got = check_structured(&a, "scripted");
        assert_eq!(got.len(), 10);
        for (id, o) in &got {
            assert_eq!(o, "not-enforced", "{id}");
        }
        let summary = &a["suites"]["structured"]["summary"];
        assert_eq!(summary["score"]["successes"], 0);
        assert_eq!(summary["details"]["totals"]["not_enforced"], 10);
        assert_eq!(summary["details"]["totals"]["valid_wrong"], 0);
        let flag = summary["flags"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "schema-not-enforced")
            .unwrap();
        assert_eq!(flag["count"], 10);
        // Every schema went out in OpenAI's form.
        let bodies = seen.lock().unwrap().clone();
        let with_schema = bodies
            .iter()
            .filter(|b| b["response_format"]["type"] == "json_schema")
            .count();
        assert_eq!(with_schema, 10, "{bodies:?}");
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("10 not-enforced"), "{stdout}");
    }
}

#[tokio::test]
async fn a_refusal_keeps_the_servers_words_and_native_picks_vllms_field_by_version() {
    // vLLM started with `--structured-outputs-config '{"backend": "xgrammar"}'` answers a schema
    // xgrammar cannot compile with HTTP 400 and a message naming it (vLLM 0.32.0
    // vllm/v1/structured_output/backend_xgrammar.py: "The provided JSON schema contains
    // features not supported by xgrammar."); `/version` as vLLM's.
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let log = seen.clone();
    let app = Router::new()
        .route("/version", get(|| async { Json(json!({"version": "0.11.0"})) }))
        .route(
            "/v1/models",
            get(|| async {
                Json(json!({"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm","max_model_len":4096}]}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(b): Json<Value>| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(b.clone());
                    if b.get("guided_json").is_some() {
                        scripted::json(
                            StatusCode::BAD_REQUEST,
                            json!({"object":"error","message":"The provided JSON schema contains features not supported by xgrammar.","type":"BadRequestError","code":400}),
                        )
                    } else {
                        scripted::chat_stream(&["ok"], &[], "stop", 1)
                    }
                }
            }),
        );
    let s = scripted::serve(app).await;
    let dir = bakeoff_testkit::tempdir();
    let o = eval_run_async(
        &s.url(),
        dir.path(),
        &[
            "--suite",
            "structured",
            "--limit",
            "1",
            "--schema-form",
            "native",
        ],
    )
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let a = valid_artifact(dir.path(), ".bakeoff.json");
    let got = check_structured(&a, "scripted vLLM 0.11.0");
    assert!(got.iter().all(|(_, o)| o == "refused"), "{got:?}");
    let d = &a["suites"]["structured"]["summary"]["details"];
    assert_eq!(d["form"], "guided-json");
    assert_eq!(d["form_asked"], "native");
    assert_eq!(d["backend"], "xgrammar");
    assert_eq!(a["run"]["schema_form"], "native");
    let words = d["classes"][0]["refusals"][0].as_str().unwrap();
    assert!(words.ends_with("not supported by xgrammar."), "{words}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[tokio::test]
async fn bench_schema_on_the_real_llama_server_measures_both_sides_and_the_compile_cost_apart() {
    let (_serial, dir) = serial_tempdir().await;
    let smol =
        crate::util::smollm2_llama(dir.path(), "smollm2-bench", &["-np", "2", "-c", "4096"]).await;
    let schema = write(
        dir.path(),
        "notes.schema.json",
        r#"{"type":"object","properties":{"notes":{"type":"array","items":{"type":"string"}}},"required":["notes"]}"#,
    );
    let out = dir.path().join("out");
    let o = crate::util::bakeoff_async(&[
        "bench",
        "run",
        "--endpoint",
        &smol.url(),
        "--schema",
        &schema,
        "--concurrency",
        "1,2",
        "--requests",
        "4",
        "--prompt-tokens",
        "32",
        "--output-tokens",
        "24",
        "--repeat",
        "2",
        "--warmup",
        "1",
        "--no-calibrate",
        "--allow",
        "contaminated",
        "--out",
        out.to_str().unwrap(),
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let a = valid_artifact(&out, "-unconstrained-bench.bakeoff.json");
    let b = valid_artifact(&out, "-constrained-bench.bakeoff.json");
    for (side, art) in [("unconstrained", &a), ("constrained", &b)] {
        let r = &art["load"]["throughput"];
        assert_eq!(r["schema"]["side"], side);
        assert_eq!(r["schema"]["form"], "response-format");
        let steps = r["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 4, "{side}: two levels, two repeats");
        assert!(
            steps.iter().all(|s| s["ok"].as_u64().unwrap() > 0),
            "{side}"
        );
        // The compile probes are in no step: every step sent exactly its requests.
        assert!(steps.iter().all(|s| s["sent"] == 4), "{side}");
    }
    let c = &b["load"]["throughput"]["schema"]["compile"];
    assert!(
        c["first_constrained_ttft_ms"].as_f64().unwrap() > 0.0,
        "{c}"
    );
    assert!(c["next_constrained_ttft_ms"].as_f64().unwrap() > 0.0, "{c}");
    assert!(c["compile_ms"].is_number(), "{c}");
    // The constrained side's requests carried the schema; the unconstrained side's did not.
    let cmp_path = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.to_string_lossy().contains("schema-")
                && p.to_string_lossy().ends_with(".compare.json")
        })
        .unwrap();
    let cmp = read_json(&cmp_path);
    assert_eq!(cmp["design"], "paired");
    let levels = cmp["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 2, "{cmp}");
    for l in levels {
        for d in l["differences"].as_array().unwrap() {
            if d["metric"] == "spec acceptance" {
                continue;
            }
            assert!(
                d["low"].is_number() && d["high"].is_number(),
                "{}: {} has no interval: {d}",
                l["label"],
                d["metric"]
            );
        }
        eprintln!(
            "{}: {}",
            l["label"],
            l["differences"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| format!(
                    "{} {:.2} → {:.2} (B − A {:+.2} [{:.2}, {:.2}])",
                    d["metric"].as_str().unwrap(),
                    d["a"]["mean"].as_f64().unwrap_or(f64::NAN),
                    d["b"]["mean"].as_f64().unwrap_or(f64::NAN),
                    d["diff"].as_f64().unwrap_or(f64::NAN),
                    d["low"].as_f64().unwrap_or(f64::NAN),
                    d["high"].as_f64().unwrap_or(f64::NAN)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    assert_eq!(cmp["itl"].as_array().unwrap().len(), 2, "{cmp}");
    eprintln!("compile: {c}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("compile cost"), "{stdout}");
    assert!(stdout.contains("ITL p50"), "{stdout}");
}

/// A server that accepts the schema and answers each prompt of `battery` with its known
/// answer (prose for any other prompt).
fn answers_right(battery: &str) -> Router {
    let answers: Vec<(String, String)> = battery
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["prompt"].as_str().unwrap().to_string(),
                v["answer"].to_string(),
            )
        })
        .collect();
    let answers = Arc::new(answers);
    Router::new()
        .route(
            "/v1/models",
            get(|| async {
                Json(json!({"object":"list","data":[{"id":"right","object":"model"}]}))
            }),
        )
        .route(
            "/v1/chat/completions",
            post(move |Json(b): Json<Value>| {
                let answers = answers.clone();
                async move {
                    let prompt = b["messages"][0]["content"].as_str().unwrap_or_default();
                    let reply = answers
                        .iter()
                        .find(|(p, _)| p == prompt)
                        .map(|(_, a)| a.clone())
                        .unwrap_or_else(|| "Hello".into());
                    scripted::chat_stream(&[&reply], &[], "stop", 8)
                }
            }),
        )
}

#[tokio::test]
async fn eval_compare_pairs_two_candidates_per_class_and_the_report_shows_the_classes_escaped() {
    let dir = bakeoff_testkit::tempdir();
    let battery_text = concat!(
        r#"{"id":"e1","class":"<i>enum</i>","prompt":"Pick blue.","schema":{"type":"object","properties":{"c":{"enum":["red","blue"]}},"required":["c"]},"answer":{"c":"blue"}}"#,
        "\n",
        r#"{"id":"t1","class":"types","prompt":"Ada is 36.","schema":{"type":"object","properties":{"age":{"type":"integer"}},"required":["age"]},"answer":{"age":36}}"#,
        "\n"
    );
    let battery = write(dir.path(), "mine.jsonl", battery_text);
    let right = scripted::serve(answers_right(battery_text)).await;
    let broken = scripted::serve(accepts_and_ignores(
        "Sure!",
        Arc::new(Mutex::new(Vec::new())),
    ))
    .await;
    let mut paths = Vec::new();
    for (name, url) in [("right", right.url()), ("broken", broken.url())] {
        let out = dir.path().join(name);
        let o = eval_run_async(
            &url,
            &out,
            &[
                "--suite",
                "structured",
                "--structured-battery",
                &battery,
                "--slug",
                name,
            ],
        )
        .await;
        assert_eq!(code(&o), 0, "{}", text(&o));
        let a = valid_artifact(&out, ".bakeoff.json");
        assert_eq!(a["run"]["structured_battery"], battery.as_str());
        paths.push(crate::util::only_file(&out, ".bakeoff.json"));
    }
    let o = crate::util::bakeoff_cmd()
        .args(["eval", "compare", "--allow", "contaminated", "--json"])
        .arg(&paths[0])
        .arg(&paths[1])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows: Vec<&Value> = v["families"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["suite"] == "structured")
        .collect();
    assert_eq!(rows.len(), 2, "one row per class: {v}");
    for r in rows {
        assert_eq!(r["pairs"], 1, "{r}");
        // A right, B's schema not enforced: A alone is right.
        assert_eq!(r["paired"]["only_a"], 1, "{r}");
        assert_eq!(r["paired"]["only_b"], 0, "{r}");
    }
    // The HTML report's per-feature table, the battery's class names escaped.
    let out = dir.path().join("right");
    let o = crate::util::bakeoff_wide(&["report", out.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("2/2 valid-right"), "{table}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("structured-classes"), "{html}");
    assert!(html.contains("&lt;i&gt;enum&lt;/i&gt;"), "{html}");
    assert!(!html.contains("<i>enum</i>"), "{html}");
}
