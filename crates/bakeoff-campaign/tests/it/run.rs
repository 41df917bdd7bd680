//! The driver without an engine: a variant whose claim cannot fit is `does-not-fit` with the
//! arithmetic and is never started; a selection that names nothing is refused.
#![allow(clippy::unwrap_used)]

use bakeoff_artifact::campaign::OutcomeKind;
use bakeoff_campaign::Campaign;
use bakeoff_campaign::run::{Reporter, RunOptions, run};
use bakeoff_testkit::fleet::seat_header;

fn options() -> RunOptions {
    RunOptions {
        confirm: false,
        fresh: false,
        only: vec![],
        watch: Default::default(),
        suite_options: Default::default(),
        nvidia_smi: "/nonexistent/nvidia-smi".into(),
        allow_contaminated: false,
        ceilings: Default::default(),
    }
}

/// A vLLM seat on a GPU host whose Docker engine refuses connections (nothing is started
/// there: the check refuses first), and a campaign asking it for 0.95 of a 10 GiB card.
fn campaign(dir: &std::path::Path) -> Campaign {
    let fleet = format!(
        "[hosts.gpu1]\ndocker = \"tcp://127.0.0.1:1\"\naddress = \"127.0.0.1\"\ngpus = 1\n{}host = \"gpu1\"\ngpu_memory_utilization = 0.5\n[seat.docker]\nimage = \"vllm/vllm-openai:v0.26.0\"\ncommand = [\"--model\", \"/models/m\", \"--gpu-memory-utilization\", \"0.5\"]\ngpus = [\"0\"]\nrestart = \"no\"\n",
        seat_header("big", "vllm", "bench", 8000, "m")
    );
    std::fs::write(dir.join("fleet.toml"), fleet).unwrap();
    let text = "[campaign]\nname = \"fit\"\nfleet = \"fleet.toml\"\nsuites = [\"smoke\"]\ngpu_memory_gib = 10\n[[candidate]]\nname = \"huge\"\nseat = \"big\"\nset_args = { \"--gpu-memory-utilization\" = \"0.95\" }\n";
    std::fs::write(dir.join("campaign.toml"), text).unwrap();
    Campaign::load(&dir.join("campaign.toml")).unwrap()
}

#[tokio::test]
async fn a_variant_that_cannot_fit_is_never_started() {
    let dir = tempfile::tempdir().unwrap();
    let c = campaign(dir.path());
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let s = run(&c, &options(), rx, &Reporter::silent()).await.unwrap();
    let row = &s.record.variants[0];
    assert_eq!(row.outcome.kind, OutcomeKind::DoesNotFit, "{row:?}");
    let fit = row.fit.as_ref().unwrap();
    assert_eq!(fit.answer, "no");
    assert!(
        fit.lines
            .iter()
            .any(|l| l.contains("10.00 GiB") || l.contains("10 GiB")),
        "{:?}",
        fit.lines
    );
    assert!(s.record.finished);
    let journal = std::fs::read_to_string(c.out.join("campaign.journal.jsonl")).unwrap();
    assert!(!journal.contains("seat-starting"), "{journal}");
    let md = std::fs::read_to_string(c.out.join("negative-results.md")).unwrap();
    assert!(md.contains("does-not-fit"), "{md}");
}

#[tokio::test]
async fn only_names_a_candidate_or_a_variant() {
    let dir = tempfile::tempdir().unwrap();
    let c = campaign(dir.path());
    let (_tx, rx) = tokio::sync::watch::channel(false);
    let mut o = options();
    o.only = vec!["nope".into()];
    let e = run(&c, &o, rx, &Reporter::silent())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("--only nope") && e.contains("huge"), "{e}");
    assert!(!c.out.join("campaign.journal.jsonl").exists());
}

/// A second run resumes (nothing re-run); `--fresh` keeps the old files under `previous-<time>/`
/// and starts over.
#[tokio::test]
async fn a_rerun_resumes_and_fresh_starts_over_keeping_the_old_files() {
    let dir = tempfile::tempdir().unwrap();
    let c = campaign(dir.path());
    let go = || tokio::sync::watch::channel(false).1;
    run(&c, &options(), go(), &Reporter::silent())
        .await
        .unwrap();
    let s = run(&c, &options(), go(), &Reporter::silent())
        .await
        .unwrap();
    assert_eq!(s.record.variants[0].attempts, 1, "resumed, not re-run");
    let mut fresh = options();
    fresh.fresh = true;
    let s = run(&c, &fresh, go(), &Reporter::silent()).await.unwrap();
    assert_eq!(s.record.variants[0].attempts, 1, "started over");
    assert!(
        s.recovered
            .iter()
            .any(|a| a.to_string().starts_with("old files moved to")
                && a.to_string().contains("previous-")),
        "{:?}",
        s.recovered
    );
    let kept: Vec<_> = std::fs::read_dir(&c.out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("previous-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert!(kept[0].path().join("campaign.journal.jsonl").exists());
    assert!(kept[0].path().join("campaign.json").exists());
    // The new journal holds one run only.
    let journal = std::fs::read_to_string(c.out.join("campaign.journal.jsonl")).unwrap();
    assert_eq!(journal.matches("campaign-started").count(), 1, "{journal}");
}
