#![allow(clippy::unwrap_used)]
use super::*;
use crate::*;

pub(crate) fn sample() -> Artifact {
    Artifact::new(
        ArtifactKind::Bakeoff,
        Candidate::new("m-generic", "m", EngineKind::Generic),
        EndpointRecord {
            url: "http://127.0.0.1:1".into(),
            facts: None,
        },
    )
}

#[test]
fn atomic_write_then_read_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let p = artifact_path(dir.path(), "m-generic", ArtifactKind::Bakeoff);
    write_atomic(&p, &sample()).unwrap();
    let back = read_artifact(&p).unwrap();
    assert_eq!(back.candidate.slug, "m-generic");
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1);
}

#[test]
fn unknown_schema_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.bakeoff.json");
    let mut v = serde_json::to_value(sample()).unwrap();
    v["schema_version"] = 99.into();
    std::fs::write(&p, v.to_string()).unwrap();
    let e = read_artifact(&p).unwrap_err().to_string();
    assert!(e.contains("schema_version 99"), "{e}");
}

#[test]
fn journal_survives_a_torn_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = RunFiles::claim(dir.path(), "s", "20261203T000000Z")
        .unwrap()
        .open_journal()
        .unwrap();
    let item = ItemRecord {
        id: "a".into(),
        outcome: Outcome::Ok,
        request: serde_json::json!({}),
        response: ResponseRecord::default(),
        expected: serde_json::Value::Null,
        check: None,
        latency: LatencyRecord::default(),
        error: None,
        extra: serde_json::Value::Null,
    };
    j.append("smoke", &item).unwrap();
    let path = j.path().to_path_buf();
    drop(j);
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"{\"suite\":\"smoke\",\"it").unwrap();
    let lines = Journal::read(&path).unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].item.id, "a");
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_second_run_of_a_slug_never_replaces_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = sample();
    first.candidate.notes = vec!["first".into()];
    let mut a = RunFiles::claim(dir.path(), "m-generic", "20261203T101500Z").unwrap();
    a.open_journal().unwrap();
    let pa = a.write_artifact(&first).unwrap();
    assert!(pa.ends_with("m-generic.bakeoff.json"));

    // The same slug again, even in the same second: new names, the first run untouched.
    for note in ["second", "third"] {
        let mut art = sample();
        art.candidate.notes = vec![note.into()];
        let mut b = RunFiles::claim(dir.path(), "m-generic", "20261203T101500Z").unwrap();
        b.open_journal().unwrap();
        b.write_artifact(&art).unwrap();
    }
    assert_eq!(
        names(dir.path()),
        [
            "m-generic.20261203T101500Z-2.bakeoff.json",
            "m-generic.20261203T101500Z-2.journal.jsonl",
            "m-generic.20261203T101500Z.bakeoff.json",
            "m-generic.20261203T101500Z.journal.jsonl",
            "m-generic.bakeoff.json",
            "m-generic.journal.jsonl",
        ]
    );
    assert_eq!(read_artifact(&pa).unwrap().candidate.notes, ["first"]);
    // A failure of the slug also takes a new stem: a stem never holds two verdicts.
    let mut f = sample();
    f.kind = ArtifactKind::Failure;
    let mut c = RunFiles::claim(dir.path(), "m-generic", "20261203T101501Z").unwrap();
    let pf = c.write_artifact(&f).unwrap();
    assert!(
        pf.ends_with("m-generic.20261203T101501Z.failure.json"),
        "{pf:?}"
    );
}

#[test]
fn a_claimed_stem_taken_meanwhile_moves_on_not_over() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = RunFiles::claim(dir.path(), "s", "r1").unwrap();
    let mut b = RunFiles::claim(dir.path(), "s", "r1").unwrap();
    assert_eq!(a.stem(), b.stem());
    a.write_artifact(&sample()).unwrap();
    let pb = b.write_artifact(&sample()).unwrap();
    assert!(pb.ends_with("s.r1.bakeoff.json"), "{pb:?}");
    assert!(write_new(&pb, &sample()).is_err_and(|e| matches!(e, StoreError::Exists { .. })));
}

#[test]
fn replace_is_explicit_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut old = sample();
    old.kind = ArtifactKind::Failure;
    old.run_id = Some("r0".into());
    let mut a = RunFiles::claim(dir.path(), "s", "r0").unwrap();
    a.open_journal().unwrap();
    a.write_artifact(&old).unwrap();

    let mut r = RunFiles::replacing(dir.path(), "s", "r1").unwrap();
    let rec: Vec<_> = r.replaced().iter().map(|f| f.file.clone()).collect();
    assert_eq!(rec, ["s.failure.json", "s.journal.jsonl"]);
    assert_eq!(r.replaced()[0].run_id.as_deref(), Some("r0"));
    r.open_journal().unwrap();
    let p = r.write_artifact(&sample()).unwrap();
    assert!(p.ends_with("s.bakeoff.json"));
    // The old failure of that stem is gone (recorded above), not left beside the result.
    assert_eq!(names(dir.path()), ["s.bakeoff.json", "s.journal.jsonl"]);
}

#[cfg(unix)]
#[test]
fn artifacts_are_as_readable_as_other_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.bakeoff.json");
    write_new(&p, &sample()).unwrap();
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "x").unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&p), mode(&plain));
}

#[test]
fn journal_of_an_artifact() {
    assert_eq!(
        journal_of(Path::new("d/s.r1.failure.json")).unwrap(),
        Path::new("d/s.r1.journal.jsonl")
    );
    assert!(journal_of(Path::new("d/notes.json")).is_none());
}
