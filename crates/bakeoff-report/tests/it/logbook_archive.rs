//! Logbook archival rules on fixtures: aged entries move to the archive, except those whose
//! text carries open deferred work (markers, unchecked boxes) and those the archival cannot be
//! sure about; the index's line count is reported against its target, never forced.

use bakeoff_report::logbook::{self, ARCHIVE, DEFAULT_MARKERS, INDEX, NewEntry};
use chrono::NaiveDate;

fn d(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

fn entry(date: &str, title: &str, body: &str) -> NewEntry {
    NewEntry {
        date: d(date),
        title: title.into(),
        summary: format!("summary of {title}"),
        body: body.into(),
        artifacts: vec!["results/gemma-3-270m-llamacpp-q4km-8k.bakeoff.json".into()],
        commits: vec!["668e590e7d".into()],
    }
}

fn markers() -> Vec<String> {
    DEFAULT_MARKERS.iter().map(|s| s.to_string()).collect()
}

/// A long-kept logbook's shape: several aged entries, most of them still carrying open work.
fn fixture(dir: &std::path::Path) {
    logbook::add(
        dir,
        &entry(
            "2026-06-01",
            "Closed OOM root-cause",
            "Dropped gmu to 0.47. Done.",
        ),
    )
    .unwrap();
    logbook::add(
        dir,
        &entry(
            "2026-06-02",
            "LoRA on NVFP4",
            "Retest before designing around merge.",
        ),
    )
    .unwrap();
    logbook::add(
        dir,
        &entry(
            "2026-06-03",
            "Prompt sizing bug",
            "Filed as a Follow-up fix.",
        ),
    )
    .unwrap();
    logbook::add(
        dir,
        &entry(
            "2026-06-04",
            "Seat swap",
            "- [x] stop old seat\n- [ ] remove the dormant container",
        ),
    )
    .unwrap();
    logbook::add(
        dir,
        &entry(
            "2026-06-05",
            "Template hashes",
            "Open question: which build ships the stale file?",
        ),
    )
    .unwrap();
    logbook::add(
        dir,
        &entry(
            "2026-06-06",
            "Page cache",
            "todo: warm the page cache first",
        ),
    )
    .unwrap();
    logbook::add(
        dir,
        &entry(
            "2026-06-07",
            "Second closed entry",
            "Measured, recorded, nothing left.",
        ),
    )
    .unwrap();
    logbook::add(dir, &entry("2026-08-20", "Recent entry", "Fresh; closed.")).unwrap();
    // An entry whose heading carries no date: the archival cannot judge its age, so it stays.
    std::fs::write(
        dir.join("entries/zz-undated.md"),
        "# Notes without a date\n\n> hand-written\n\nNothing open.\n",
    )
    .unwrap();
}

#[test]
fn aged_closed_entries_move_and_open_work_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fixture(dir);
    let before = std::fs::read_to_string(dir.join(INDEX)).unwrap();
    assert_eq!(before.lines().filter(|l| l.starts_with("- `[")).count(), 8);

    let r = logbook::archive(dir, 30, &markers(), d("2026-08-24"), 250).unwrap();
    let moved: Vec<&str> = r.moved.iter().map(|m| m.1.as_str()).collect();
    assert_eq!(moved, vec!["Closed OOM root-cause", "Second closed entry"]);
    let kept: Vec<(&str, Vec<String>)> = r
        .kept_open
        .iter()
        .map(|(f, m)| (f.as_str(), m.clone()))
        .collect();
    assert_eq!(kept.len(), 5, "{kept:?}");
    assert!(
        kept.iter()
            .any(|(f, m)| f.contains("lora") && m == &vec!["retest".to_string()])
    );
    assert!(
        kept.iter()
            .any(|(f, m)| f.contains("prompt-sizing") && m == &vec!["follow-up".to_string()])
    );
    assert!(
        kept.iter()
            .any(|(f, m)| f.contains("seat-swap") && m == &vec!["unchecked box".to_string()])
    );
    assert!(
        kept.iter()
            .any(|(f, m)| f.contains("template") && m == &vec!["open question".to_string()])
    );
    assert!(
        kept.iter()
            .any(|(f, m)| f.contains("page-cache") && m == &vec!["TODO".to_string()])
    );
    assert_eq!(r.kept_unsure.len(), 1);
    assert!(r.kept_unsure[0].0.contains("undated"));
    assert_eq!(r.young, 1);

    // Moved whole into the archive, out of the index and the entries directory.
    let archive = std::fs::read_to_string(dir.join(ARCHIVE)).unwrap();
    assert!(archive.contains("# `[2026-06-01]` Closed OOM root-cause"));
    assert!(archive.contains("Dropped gmu to 0.47. Done."));
    assert!(archive.contains("- commit: `668e590e7d`"));
    assert!(
        archive.contains(
            "<!-- archived 2026-08-24 from entries/2026-06-01-closed-oom-root-cause.md -->"
        )
    );
    let index = std::fs::read_to_string(dir.join(INDEX)).unwrap();
    assert!(!index.contains("Closed OOM root-cause"));
    assert!(index.contains("LoRA on NVFP4"));
    assert!(
        !dir.join("entries/2026-06-01-closed-oom-root-cause.md")
            .exists()
    );
    assert!(dir.join("entries/2026-06-02-lora-on-nvfp4.md").exists());
    assert_eq!(r.index_lines, index.lines().count());
    assert!(!r.over_target());

    // A second run moves nothing more: the rules, not repetition, decide.
    let again = logbook::archive(dir, 30, &markers(), d("2026-08-24"), 250).unwrap();
    assert!(again.moved.is_empty());
    assert_eq!(again.kept_open.len(), 5);
}

#[test]
fn the_index_target_is_reported_not_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fixture(dir);
    let r = logbook::archive(dir, 30, &markers(), d("2026-08-24"), 5).unwrap();
    // Over the target, yet only the two closed entries moved.
    assert_eq!(r.moved.len(), 2);
    assert!(r.over_target());
    let text = r.render();
    assert!(
        text.contains("above the 5-line target — reported, not forced"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn markers_are_configurable() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    logbook::add(dir, &entry("2026-01-01", "Has TODO", "TODO later")).unwrap();
    logbook::add(
        dir,
        &entry("2026-01-02", "Blocked", "BLOCKED on the vendor"),
    )
    .unwrap();
    let r = logbook::archive(dir, 10, &["blocked".to_string()], d("2026-03-01"), 250).unwrap();
    assert_eq!(r.moved.len(), 1);
    assert_eq!(r.moved[0].1, "Has TODO");
    assert_eq!(r.kept_open[0].1, vec!["blocked".to_string()]);
}

#[test]
fn add_rejects_empty_or_multiline_fields_and_list_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut e = entry("2026-02-02", "", "");
    assert!(
        logbook::add(dir, &e)
            .unwrap_err()
            .to_string()
            .contains("--title")
    );
    e.title = "two\nlines".into();
    assert!(
        logbook::add(dir, &e)
            .unwrap_err()
            .to_string()
            .contains("one line")
    );
    e.title = "Same title".into();
    e.summary = "summary of Same title".into();
    logbook::add(dir, &e).unwrap();
    let second = logbook::add(dir, &e).unwrap();
    assert_eq!(second.file, "entries/2026-02-02-same-title-2.md");
    let all = logbook::list(dir).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].summary, "summary of Same title");
    let text = std::fs::read_to_string(dir.join(&all[0].file)).unwrap();
    assert!(text.contains("- artifact: [results/gemma-3-270m-llamacpp-q4km-8k.bakeoff.json]"));
}

#[test]
fn an_age_reaching_before_the_earliest_date_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    fixture(tmp.path());
    let e = logbook::archive(tmp.path(), u32::MAX, &markers(), d("2026-08-24"), 250)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--age 4294967295") && e.contains("fix: give a smaller --age"),
        "{e}"
    );
    // Nothing moved.
    assert!(!tmp.path().join(ARCHIVE).exists());
}
