//! The journal read back: what a killed campaign left behind.
#![allow(clippy::unwrap_used)]

use bakeoff_campaign::journal::{JOURNAL, Journal, replay};

#[test]
fn replay_tracks_seats_up_displaced_and_the_open_variant() {
    let dir = tempfile::tempdir().unwrap();
    let now = "2026-12-03T10:00:00Z";
    let lines = [
        format!(
            r#"{{"event":"campaign-started","at":"{now}","name":"c","file":"/x/c.toml","pid":1}}"#
        ),
        format!(r#"{{"event":"variant-started","at":"{now}","variant":"v1","attempt":1}}"#),
        format!(
            r#"{{"event":"displacing","at":"{now}","variant":"v1","seat":"gen","idle_wait_ms":5}}"#
        ),
        format!(r#"{{"event":"seat-stopped","at":"{now}","seat":"never-started"}}"#),
    ];
    let path = dir.path().join(JOURNAL);
    // The last line is cut short, as a kill mid-write leaves it: ignored.
    std::fs::write(&path, lines.join("\n") + "\n{\"event\":\"variant-do").unwrap();
    let st = replay(&path).unwrap();
    assert_eq!(st.name.as_deref(), Some("c"));
    assert_eq!(st.file.as_deref(), Some("/x/c.toml"));
    assert_eq!(st.open.as_ref().map(|o| o.0.as_str()), Some("v1"));
    assert_eq!(st.displaced.len(), 1);
    assert_eq!(st.displaced[0].0, "gen");
    assert!(st.seats_up.is_empty());
    // A bad line that is not the last is an error naming the line.
    std::fs::write(&path, format!("garbage\n{}\n", lines[0])).unwrap();
    let e = replay(&path).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.contains("--fresh"), "{e}");
}

#[test]
fn appended_entries_are_on_disk_before_append_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::open(dir.path()).unwrap();
    j.append(bakeoff_campaign::journal::Entry::VariantStarted {
        at: chrono::Utc::now(),
        variant: "v".into(),
        attempt: 1,
    })
    .unwrap();
    let st = replay(&dir.path().join(JOURNAL)).unwrap();
    assert_eq!(st.attempts.get("v"), Some(&1));
    assert_eq!(j.state().open.as_ref().map(|o| o.1), Some(1));
}
