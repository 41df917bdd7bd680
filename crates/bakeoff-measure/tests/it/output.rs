//! One output description for every driver: the slug, notes, hardware and run record reach the
//! artifact; a later run of a slug never overwrites an earlier one; `replace` takes the slug's
//! own name and records what it replaced.

use bakeoff_artifact::ArtifactKind;
use bakeoff_suites::SuiteName;

use super::*;

#[tokio::test]
async fn the_output_names_the_artifact_and_a_second_run_never_overwrites_the_first() {
    let server = bakeoff_testkit::scripted::serve(bakeoff_testkit::scripted::all_500()).await;
    let dir = bakeoff_testkit::tempdir();
    let url = server.url();
    let smoke = [SuiteName::Smoke];
    let options = Default::default();

    let (first, _) = measure(
        &url,
        &smoke,
        &options,
        None,
        output(dir.path(), "cand", false),
    )
    .await;
    assert_eq!(
        first.artifact.kind,
        ArtifactKind::Failure,
        "every request fails"
    );
    assert_eq!(first.path, dir.path().join("cand.failure.json"));
    let c = &first.artifact.candidate;
    assert_eq!(c.slug, "cand");
    assert_eq!(c.hardware.as_deref(), Some("test bench"));
    assert_eq!(c.notes, ["written by the measure crate's tests"]);
    assert_eq!(first.artifact.run.command.as_deref(), Some("measure test"));
    let first_bytes = std::fs::read(&first.path).unwrap();

    let (second, _) = measure(
        &url,
        &smoke,
        &options,
        None,
        output(dir.path(), "cand", false),
    )
    .await;
    assert_ne!(second.path, first.path);
    let run_id = second.artifact.run_id.clone().unwrap();
    assert_eq!(
        second.path,
        dir.path().join(format!("cand.{run_id}.failure.json"))
    );
    assert_eq!(
        std::fs::read(&first.path).unwrap(),
        first_bytes,
        "the first run is kept as it was"
    );

    let (third, _) = measure(
        &url,
        &smoke,
        &options,
        None,
        output(dir.path(), "cand", true),
    )
    .await;
    assert_eq!(third.path, first.path, "replace takes the slug's own name");
    assert!(
        !third.artifact.replaces.is_empty(),
        "what it replaced is recorded: {:?}",
        third.artifact.replaces
    );
}
