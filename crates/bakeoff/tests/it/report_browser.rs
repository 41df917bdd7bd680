//! The HTML report in a real headless browser (Debian's `chromium`): the page renders, logs no
//! script error, and a model reply containing `<script>alert(1)</script>` stays text.
//!
//! The hostile reply comes from a scripted OpenAI-compatible server and travels the real path
//! (`bakeoff eval run` → artifact → `bakeoff report`). It copies the plain streamed chat reply
//! every engine sends (vLLM/llama.cpp `chat.completion.chunk` deltas, then usage); the real
//! small model cannot be made to emit a chosen string.
//!
//! The second test measures the real llama-server with the real test model (`eval run` smoke,
//! then a short `bench run` at c = 1, 2, 4) and reads the rendered page: the bench run joins the
//! candidate's row, each sweep has its per-level table, every chart series is named in its
//! legend, and the level axis is labelled with exactly the levels run. With
//! `BAKEOFF_REPORT_PNG=PATH` it also leaves its screenshot there (how docs/img/report.png is
//! made).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post};
use bakeoff_testkit::{real_llama, scripted, tempdir};

use crate::util::{bakeoff, code, eval_run, eval_run_async, serial_tempdir, text};

/// `BAKEOFF_CHROMIUM`, else `chromium` / `chromium-browser` on PATH. Never skips: a browser
/// test that did not run measured nothing.
fn chromium() -> PathBuf {
    if let Ok(p) = std::env::var("BAKEOFF_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var("PATH").unwrap_or_default();
    for dir in path.split(':') {
        for name in ["chromium", "chromium-browser"] {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "headless chromium not found: install Debian's package (`apt-get install -y chromium`) \
         or set BAKEOFF_CHROMIUM to the browser binary"
    );
}

/// Run chromium headless with a deadline (a wedged browser must not hang the suite).
fn run_chromium(args: &[String], profile: &Path) -> (String, String) {
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn hostile_server() -> Router {
    Router::new()
        .route(
            "/v1/models",
            get(|| async {
                scripted::json(
                    StatusCode::OK,
                    serde_json::json!({"object":"list","data":[{"id":"hostile-model","object":"model","max_model_len":4096}]}),
                )
            }),
        )
        .route(
            "/v1/chat/completions",
            post(|| async { scripted::chat_stream(&["<script>alert(1)</script>", "<img src=x onerror=alert(2)>"], &[], "stop", 12) }),
        )
}

#[tokio::test(flavor = "multi_thread")]
async fn html_report_renders_in_chromium_and_model_output_stays_text() {
    let tmp = tempdir();
    let results = tmp.path().join("results");
    let out = results.to_str().unwrap().to_string();
    let server = scripted::serve(hostile_server()).await;
    let url = server.url();
    // The binary is blocking work; the scripted server needs the runtime meanwhile.
    let o = eval_run_async(&url, &results, &["--suite", "smoke"]).await;
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "eval run: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let art = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".bakeoff.json"))
        .expect("a bakeoff artifact");
    assert!(
        std::fs::read_to_string(&art)
            .unwrap()
            .contains("<script>alert(1)</script>"),
        "the hostile reply is recorded verbatim in the artifact"
    );

    let html_path = tmp.path().join("report.html");
    let o = bakeoff(&["report", &out, "--html", html_path.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        !html.contains("<script"),
        "the report itself carries no script"
    );
    assert!(!html.contains("<img"), "no reply can open a tag");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        !html.contains("http://") || !html.contains("src=\"http"),
        "nothing loads from the network"
    );

    let profile = tmp.path().join("chromium-profile");
    let file_url = format!("file://{}", html_path.display());
    let (dom, stderr) = run_chromium(
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--virtual-time-budget=2000".into(),
            "--dump-dom".into(),
            file_url.clone(),
        ],
        &profile,
    );
    // Rendered: the summary table and the drill-down are in the live DOM.
    assert!(
        dom.contains("<table id=\"summary\""),
        "summary table rendered: {dom:.400}"
    );
    assert!(dom.contains("<details"), "per-item drill-down rendered");
    assert!(dom.contains("<svg"), "inline SVG charts rendered");
    // The hostile reply is a text node: serialized back as entities, never as an element.
    assert!(
        !dom.to_lowercase().contains("<script"),
        "no script element in the DOM"
    );
    assert!(!dom.contains("<img"), "no img element in the DOM");
    assert!(
        dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the reply shows as text"
    );
    for bad in ["Uncaught", "Refused to", "SyntaxError", "ReferenceError"] {
        assert!(
            !stderr.contains(bad),
            "script error in the console ({bad}): {stderr}"
        );
    }
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains(":CONSOLE(") && l.contains(&file_url)),
        "the page logged to the console: {stderr}"
    );

    let png = tmp.path().join("report.png");
    run_chromium(
        &[
            "--window-size=1280,1600".into(),
            "--hide-scrollbars".into(),
            format!("--screenshot={}", png.display()),
            file_url,
        ],
        &tmp.path().join("chromium-profile-2"),
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    assert!(
        bytes.len() > 10_000,
        "the screenshot shows a page, not a blank: {} bytes",
        bytes.len()
    );
    drop(server);
}

/// The text of every `<text class="CLASS" …>…</text>` inside the SVG whose `aria-label` is
/// `label`, in document order.
fn svg_texts(dom: &str, label: &str, class: &str) -> Vec<String> {
    let start = dom
        .find(&format!("aria-label=\"{label}\""))
        .unwrap_or_else(|| panic!("no chart {label:?} in the DOM"));
    let svg = &dom[start..start + dom[start..].find("</svg>").unwrap()];
    svg.split(&format!("class=\"{class}\""))
        .skip(1)
        .filter_map(|t| {
            // The element's text: from the last `>` before its `</text>`.
            let t = &t[..t.find("</text>")?];
            Some(t[t.rfind('>')? + 1..].to_string())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_eval_and_bench_render_as_one_row_with_level_tables_and_readable_charts() {
    let (_g, tmp) = serial_tempdir().await;
    let results = tmp.path().join("results");
    let out = results.to_str().unwrap().to_string();
    let server = real_llama(8192, 2, &[], tmp.path()).await;
    let url = server.url();
    let o = eval_run(&url, &results, &["--suite", "smoke"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &url,
        "--concurrency",
        "1,2,4",
        "--requests",
        "4",
        "--prompt-tokens",
        "16",
        "--output-tokens",
        "8",
        "--warmup",
        "1",
        "--no-calibrate",
        "--out",
        &out,
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    drop(server);

    let names: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let bench_file = names
        .iter()
        .find(|n| n.ends_with("-bench.bakeoff.json"))
        .expect("a bench artifact");
    let bench_slug = bench_file.trim_end_matches(".bakeoff.json");
    let eval_slug = bench_slug.trim_end_matches("-bench");
    let bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join(bench_file)).unwrap()).unwrap();
    let levels: Vec<String> = bench["load"]["throughput"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["concurrency"].to_string())
        .collect();
    assert_eq!(levels, ["1", "2", "4"]);

    let o = bakeoff(&["report", &out]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let html_path = results.join("report.html");
    let file_url = format!("file://{}", html_path.display());
    let (dom, _) = run_chromium(
        &[
            "--virtual-time-budget=2000".into(),
            "--dump-dom".into(),
            file_url.clone(),
        ],
        &tmp.path().join("chromium-profile"),
    );
    // One row for the candidate: the bench run joined it, with its figures.
    let summary = &dom[dom.find("<table id=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("</table>").unwrap()];
    assert_eq!(
        summary.matches("<tr>").count(),
        2,
        "header + one row: {summary}"
    );
    assert!(summary.contains(&format!(">{eval_slug}</a>")), "{summary}");
    assert!(summary.contains("bench peak out tok/s"), "{summary}");
    assert!(summary.contains("tok/s @ c="), "{summary}");
    assert!(summary.contains("ms @ c=1"), "{summary}");
    assert!(summary.contains("2 counted (1 bench)"), "{summary}");
    // The per-level table of the sweep, a row per level.
    let lt = &dom[dom
        .find("<table class=\"levels\"")
        .expect("per-level table")..];
    let lt = &lt[..lt.find("</table>").unwrap()];
    for h in [
        "output tok/s",
        "TTFT p50",
        "TTFT p99",
        "TPOT p50",
        "TPOT p99",
        "ITL p50",
        "ITL p99",
        "E2E p50",
        "E2E p99",
    ] {
        assert!(lt.contains(&format!("<th>{h}</th>")), "{h}: {lt}");
    }
    for l in &levels {
        assert!(lt.contains(&format!("<td>c={l}</td>")), "c={l}: {lt}");
    }
    // The level axis is labelled with exactly the levels run, in both level charts.
    for chart in [
        "Concurrency vs output tok/s",
        "TTFT percentiles by concurrency",
    ] {
        assert_eq!(svg_texts(&dom, chart, "x-tick"), levels, "{chart}");
    }
    // Every series is named in its chart's legend, by what differs between the series; what
    // they share is said once, in the caption under the legend.
    let series = format!("{bench_slug} bench throughput");
    assert_eq!(
        svg_texts(&dom, "Concurrency vs output tok/s", "legend-entry"),
        vec![format!("{bench_slug} bench throughput")]
    );
    assert_eq!(
        svg_texts(&dom, "TTFT percentiles by concurrency", "legend-entry"),
        ["p50", "p90", "p99"]
    );
    assert_eq!(
        svg_texts(&dom, "TTFT percentiles by concurrency", "caption"),
        [series.as_str()]
    );
    assert_labels_apart(&dom, "TTFT percentiles by concurrency");
    // Values are printed at the points: one per level per series.
    assert_eq!(
        svg_texts(&dom, "Concurrency vs output tok/s", "value").len(),
        levels.len()
    );
    assert!(dom.contains("aria-label=\"Per-suite scores (Wilson 95% intervals)\""));

    let png = tmp.path().join("report.png");
    run_chromium(
        &[
            "--window-size=1280,2400".into(),
            "--hide-scrollbars".into(),
            format!("--screenshot={}", png.display()),
            file_url,
        ],
        &tmp.path().join("chromium-profile-2"),
    );
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    if let Ok(keep) = std::env::var("BAKEOFF_REPORT_PNG") {
        std::fs::copy(&png, &keep).expect("copy the screenshot to BAKEOFF_REPORT_PNG");
    }
}

/// Every value label of the chart `label`: (x, baseline y, text).
fn value_labels(dom: &str, label: &str) -> Vec<(f64, f64, String)> {
    let start = dom.find(&format!("aria-label=\"{label}\"")).unwrap();
    let svg = &dom[start..start + dom[start..].find("</svg>").unwrap()];
    svg.split("<text class=\"value\" x=\"")
        .skip(1)
        .filter_map(|t| {
            let x: f64 = t.split('"').next()?.parse().ok()?;
            let y: f64 = t.split("y=\"").nth(1)?.split('"').next()?.parse().ok()?;
            let text = t.split('>').nth(1)?.split('<').next()?.to_string();
            Some((x, y, text))
        })
        .collect()
}

/// No two value labels of the chart overlap (10 px text, about 6 px a character, 11 px a
/// line) and none reaches the x-axis tick labels (the plot's floor is y = 252).
fn assert_labels_apart(dom: &str, chart: &str) {
    let labels = value_labels(dom, chart);
    assert!(!labels.is_empty(), "{chart}: no value labels");
    for (i, a) in labels.iter().enumerate() {
        assert!(a.1 <= 249.0, "{chart}: {a:?} sits on the tick labels");
        for b in &labels[i + 1..] {
            let w = 3.0 * (a.2.chars().count() + b.2.chars().count()) as f64;
            assert!(
                !((a.0 - b.0).abs() < w && (a.1 - b.1).abs() < 11.0),
                "{chart}: {a:?} and {b:?} overlap"
            );
        }
    }
}

/// Against the real llama-server and Chromium: `bench run --repeat 2` at c = 1, 2.
/// The rendered page draws each level as its rounds' mean with an error bar (rounds faint),
/// names each round in the per-level table, shows the capacity finding (the summary's bench
/// peak is its figure, not one round's), each level's interval with no negative bound, the
/// `unstable` flag and the contamination mark exactly where the artifact has them, and no
/// two value labels collide.
#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_real_bench_renders_means_error_bars_rounds_and_its_capacity_finding() {
    let (_g, tmp) = serial_tempdir().await;
    let results = tmp.path().join("results");
    let out = results.to_str().unwrap().to_string();
    let server = real_llama(8192, 2, &[], tmp.path()).await;
    let url = server.url();
    let o = bakeoff(&[
        "bench",
        "run",
        "--endpoint",
        &url,
        "--concurrency",
        "1,2",
        "--repeat",
        "2",
        "--requests",
        "4",
        "--prompt-tokens",
        "16",
        "--output-tokens",
        "8",
        "--warmup",
        "1",
        "--no-calibrate",
        "--out",
        &out,
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    drop(server);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(!stdout.contains(" [-"), "no negative bound: {stdout}");

    let bench_file = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("-bench.bakeoff.json"))
        .expect("a bench artifact");
    let bench: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(results.join(&bench_file)).unwrap()).unwrap();
    let load = &bench["load"]["throughput"];
    let steps = load["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "{load:#}");
    let cap = &load["capacity"];
    let peak = cap["peak_throughput"].as_f64().unwrap();
    let peak_label = cap["peak_label"].as_str().unwrap();
    let contaminated = steps
        .iter()
        .filter(|s| {
            s["conditions"]["findings"]
                .as_array()
                .is_some_and(|f| !f.is_empty())
        })
        .count();
    let unstable = load["levels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["unstable"] == true)
        .count();
    eprintln!(
        "peak {peak} @ {peak_label}; {contaminated} contaminated step(s); {unstable} unstable level(s)"
    );

    let o = bakeoff(&["report", &out]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let html_path = results.join("report.html");
    let (dom, _) = run_chromium(
        &[
            "--virtual-time-budget=2000".into(),
            "--dump-dom".into(),
            format!("file://{}", html_path.display()),
        ],
        &tmp.path().join("chromium-profile"),
    );
    // The summary's bench peak is the capacity finding's, the mean of the rounds.
    let summary = &dom[dom.find("<table id=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("</table>").unwrap()];
    let peak_text = if peak < 100.0 {
        format!("{peak:.1} tok/s @ {peak_label}, mean of 2 rounds")
    } else {
        format!("{peak:.0} tok/s @ {peak_label}, mean of 2 rounds")
    };
    assert!(summary.contains(&peak_text), "{peak_text}: {summary}");
    // The capacity finding as the terminal prints it.
    let statement = cap["statement"].as_str().unwrap();
    assert!(
        stdout.contains(&format!("capacity: {statement}")),
        "{stdout}"
    );
    assert!(
        dom.contains("<strong>capacity:</strong>"),
        "capacity finding shown"
    );
    // Each round named in the per-level table; each contaminated step marked.
    let lt = &dom[dom.find("<table class=\"levels\"").unwrap()..];
    let lt = &lt[..lt.find("</table>").unwrap()];
    for l in ["c=1 #1", "c=2 #1", "c=1 #2", "c=2 #2"] {
        assert!(lt.contains(&format!("<td>{l}")), "{l}: {lt}");
    }
    assert_eq!(
        lt.matches("<strong>CONTAMINATED</strong>").count(),
        contaminated,
        "{lt}"
    );
    // Each level over its rounds: no negative bound; unstable where the artifact says so.
    let rt = &dom[dom.find("<table class=\"repeats\"").expect("repeats table")..];
    let rt = &rt[..rt.find("</table>").unwrap()];
    assert_eq!(rt.matches("<tr>").count(), 3, "header + 2 levels: {rt}");
    assert!(!rt.contains("[-"), "{rt}");
    assert_eq!(
        rt.matches("class=\"flag unstable\"").count(),
        unstable,
        "{rt}"
    );
    // One mean per level with its error bar, each round a faint dot, one value label a level.
    let chart = "Concurrency vs output tok/s";
    let start = dom.find(&format!("aria-label=\"{chart}\"")).unwrap();
    let svg = &dom[start..start + dom[start..].find("</svg>").unwrap()];
    assert_eq!(svg.matches("class=\"error-bar\"").count(), 2, "{svg}");
    assert_eq!(svg.matches("class=\"round\"").count(), 4, "{svg}");
    assert_eq!(value_labels(&dom, chart).len(), 2, "{svg}");
    assert_eq!(svg_texts(&dom, chart, "x-tick"), ["1", "2"]);
    assert_labels_apart(&dom, "TTFT percentiles by concurrency");
    assert_eq!(
        svg_texts(&dom, "TTFT percentiles by concurrency", "legend-entry"),
        ["p50", "p90", "p99"]
    );
}
