//! A variant measured under contaminated conditions: a ladder of two
//! variants of the real llama-server, the first completing and the second refused by the
//! engine (`--cache-type-k q9_9`); two real busy loops spin from the journal's
//! `variant-started` of the first to the end of the run. The first variant's row records its
//! conditions (seat load and suite) with `host-contended`; the ladder names it as contaminated
//! and withholds its suggested verdict (its figures), and `--allow contaminated` (on
//! `campaign status`, then on `campaign run`) gives it. The believed cause is drawn all the
//! same — a completion and the engine's own `bad-argument` are evidence whatever the host
//! did — and `campaign status` prints it. The second `campaign run` has nothing left and says
//! so.
//!
//! Limitation: the sampler reads `/proc` about once a second, and the refused start lasts
//! under one: the second variant may or may not be marked. Either way its verdict stands
//! (the deterministic half is `bakeoff-report`'s campaign tests).

use std::process::Stdio;

use super::*;
use crate::util::{Hogs, code, free_port, serial_tempdir, text};

/// A journal event of `variant` (`variant-started`, or `variant-done` with its row).
fn has_event(out: &Path, event: &str, variant: &str) -> bool {
    journal_lines(out)
        .iter()
        .any(|e| e["event"] == event && (e["variant"] == variant || e["row"]["variant"] == variant))
}

#[tokio::test]
async fn a_contaminated_variant_withholds_the_verdict_unless_allowed() {
    let (_g, dir) = serial_tempdir().await;
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "noisy"
seat = "base"
[candidate.ladder]
"--cache-type-k" = ["f16", "q9_9"]
"#,
        header = campaign_header("contaminated-test"),
    );
    let f = Files::write(
        dir.path(),
        &process_seat("base", "bench", free_port()),
        &campaign,
    );
    let _cleanup = f.guard();

    // Output to files, not pipes: nothing reads a pipe until the run ends, and a full one
    // would stall its progress lines.
    let (out_path, err_path) = (dir.path().join("run.out"), dir.path().join("run.err"));
    let mut child = util::bakeoff_cmd()
        .args(f.run_args(&[]))
        .stdout(Stdio::from(std::fs::File::create(&out_path).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err_path).unwrap()))
        .spawn()
        .unwrap();
    // The first variant's slug, once the journal names it.
    let mut first = String::new();
    wait_until(
        "the first variant to start",
        Duration::from_secs(300),
        || {
            if let Some(v) = journal_lines(&f.out)
                .iter()
                .find(|e| e["event"] == "variant-started")
                .and_then(|e| e["variant"].as_str())
            {
                first = v.to_string();
            }
            !first.is_empty()
        },
    );
    let hogs = Hogs::spin(2);
    wait_until(
        "the first variant to finish",
        Duration::from_secs(300),
        || has_event(&f.out, "variant-done", &first),
    );
    let st = child.wait().unwrap();
    drop(hogs);
    let table = std::fs::read_to_string(&out_path).unwrap();
    let err = std::fs::read_to_string(&err_path).unwrap();
    assert_eq!(st.code(), Some(0), "{table}{err}");

    let rec = f.record();
    let r1 = row(&rec, &first);
    eprintln!("{first}: {:#}", r1["conditions"]);
    assert_eq!(r1["outcome_label"], "completed", "{r1:#}");
    let c = &r1["conditions"];
    assert_eq!(c["clean"], false, "{c:#}");
    assert!(
        strings(&c["sampled"]).contains(&"seat load".to_string()),
        "{c:#}"
    );
    assert!(
        strings(&c["sampled"]).contains(&"smoke".to_string()),
        "{c:#}"
    );
    assert!(
        c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["code"] == "host-contended"),
        "{c:#}"
    );
    // Withheld in campaign.json, said in the ladder: which variant and why.
    assert!(r1.get("suggested_verdict").is_none(), "{r1:#}");
    let line = table
        .lines()
        .find(|l| l.starts_with(&format!("contaminated: {first} (")))
        .unwrap_or_else(|| panic!("no contaminated line for {first}:\n{table}"));
    assert!(line.contains("host-contended during"), "{line}");
    assert!(line.contains("WITHHELD"), "{line}");
    // The run's last line: the conditions, naming the contaminated variant.
    let last = table.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("conditions: CONTAMINATED — ")
            && last.contains(&format!("{first}: host-contended")),
        "{last}"
    );
    // The believed cause rests on a completion and the engine's own refusal: drawn, though
    // the completion was contaminated.
    assert!(
        table.contains(
            "believed cause config-specific: `--cache-type-k` separated pass (f16) from fail (q9_9)"
        ),
        "{table}"
    );
    assert!(!table.contains("believed cause withheld"), "{table}");
    // The engine stated the second variant's failure: its verdict stands, marked or not.
    let second = rec["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] != first.as_str())
        .unwrap();
    assert_eq!(second["outcome"]["class"], "bad-argument", "{second:#}");
    assert_eq!(
        second["suggested_verdict"], "reject-under-tested-configuration",
        "{second:#}"
    );
    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    assert!(
        md.contains("**Believed cause class:** config-specific"),
        "{md}"
    );
    assert!(md.contains("withheld for `"), "{md}");
    assert!(
        md.contains(&format!("`{first}` (host-contended during")),
        "{md}"
    );
    assert!(md.contains("CONTAMINATED"), "{md}");

    // `campaign status --allow contaminated`: the verdict given, still marked.
    let s = util::bakeoff(&["campaign", "status", f.out_arg(), "--allow", "contaminated"]);
    assert_eq!(code(&s), 0, "{}", text(&s));
    let st = String::from_utf8_lossy(&s.stdout).into_owned();
    let line = st
        .lines()
        .find(|l| l.starts_with(&format!("contaminated: {first} (")))
        .unwrap_or_else(|| panic!("no contaminated line for {first}:\n{st}"));
    assert!(
        line.contains("suggested verdict watch, given under --allow contaminated"),
        "{line}"
    );
    assert!(!st.contains("believed cause withheld"), "{st}");
    // `campaign status --allow contaminated` prints the believed cause, as
    // `report DIR --allow contaminated` does.
    assert!(st.contains("believed cause config-specific"), "{st}");
    // `report --allow contaminated`: its negative-results log draws the cause; its HTML marks
    // the variant.
    let (md_path, html_path) = (dir.path().join("r.md"), dir.path().join("r.html"));
    let r = util::bakeoff(&[
        "report",
        f.out_arg(),
        "--markdown",
        md_path.to_str().unwrap(),
        "--html",
        html_path.to_str().unwrap(),
        "--allow",
        "contaminated",
    ]);
    assert_eq!(code(&r), 0, "{}", text(&r));
    let md = std::fs::read_to_string(&md_path).unwrap();
    assert!(
        md.contains("**Believed cause class:** config-specific"),
        "{md}"
    );
    let page = std::fs::read_to_string(&html_path).unwrap();
    assert!(page.contains("<strong>CONTAMINATED</strong>"), "{page}");
    // A word it cannot allow is refused.
    let bad = util::bakeoff(&["campaign", "status", f.out_arg(), "--allow", "template"]);
    assert_eq!(code(&bad), 2, "{}", text(&bad));

    // `campaign run --allow contaminated` (nothing left to run): the record and
    // negative-results.md give the verdicts.
    let o = f.run(&["--allow", "contaminated"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // Nothing left to run, and it says so.
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("nothing to run: every variant has an outcome"),
        "{}",
        text(&o)
    );
    let rec = f.record();
    assert_eq!(rec["allow_contaminated"], true, "{rec:#}");
    assert_eq!(row(&rec, &first)["suggested_verdict"], "watch", "{rec:#}");
    let md = std::fs::read_to_string(f.out.join("negative-results.md")).unwrap();
    assert!(
        md.contains("**Believed cause class:** config-specific"),
        "{md}"
    );
    assert!(!md.contains("withheld for `"), "{md}");
    assert!(md.contains(&format!("watch for `{first}`")), "{md}");
}
