//! A campaign killed with SIGKILL mid-variant (docs/campaign.md "Resume and recovery"): the
//! variant's seat outlives it and the seat it displaced stays down. The next `campaign run`
//! stops the one, restores the other, records the variant `interrupted` and runs it again —
//! never a finished one; `campaign restore DIR` does only the recovery.

use std::process::{Child, Stdio};

use super::*;
use crate::util::{bakeoff_cmd, code, free_port, serial_tempdir, text};

/// A bench seat `gen` (brought up) and a bench seat `trial` on the same port; one candidate
/// from `trial` with the given ladder (TOML lines) and a window displacing `gen`.
fn recovery_files(dir: &Path, candidate: &str, ladder: &str) -> (Files, u16) {
    let port = free_port();
    let fleet = format!(
        "{}{}",
        process_seat("gen", "bench", port),
        process_seat("trial", "bench", port)
    );
    let campaign = format!(
        r#"{header}
[[candidate]]
name = "{candidate}"
seat = "trial"
{ladder}
[candidate.window]
displaces = ["gen"]
idle_for_s = 1
idle_timeout_s = 30
"#,
        header = campaign_header("recovery-test")
    );
    (Files::write(dir, &fleet, &campaign), port)
}

/// `campaign run` as a child, its output into `DIR/run-N.log`.
fn spawn_run(f: &Files, dir: &Path, n: u32) -> Child {
    let log = std::fs::File::create(dir.join(format!("run-{n}.log"))).unwrap();
    bakeoff_cmd()
        .args(f.run_args(&[]))
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .unwrap()
}

/// Wait until the journal says `variant`'s seat is starting (after `after`'s row, when given)
/// and its process runs; its pid.
fn wait_for_seat(f: &Files, variant: &str, after: Option<&str>, child: &mut Child) -> u32 {
    let mut pid = None;
    wait_until(
        &format!("{variant}'s seat to start"),
        Duration::from_secs(240),
        || {
            if let Ok(Some(st)) = child.try_wait() {
                panic!("campaign run ended ({st}) before {variant}'s seat started");
            }
            let j = f.journal();
            let from = match after {
                Some(a) => match j
                    .iter()
                    .position(|e| e["event"] == "variant-done" && e["row"]["variant"] == a)
                {
                    Some(i) => i,
                    None => return false,
                },
                None => 0,
            };
            let starting = j[from..]
                .iter()
                .any(|e| e["event"] == "seat-starting" && e["variant"] == variant);
            pid = f.pid(variant).filter(|p| alive(*p));
            starting && pid.is_some()
        },
    );
    pid.unwrap()
}

/// The journal's `variant-done` rows of `variant`, in order.
fn done_rows(f: &Files, variant: &str) -> Vec<Value> {
    f.journal()
        .into_iter()
        .filter(|e| e["event"] == "variant-done" && e["row"]["variant"] == variant)
        .map(|e| e["row"].clone())
        .collect()
}

#[tokio::test]
async fn a_killed_campaign_is_recovered_and_resumed_by_the_next_run() {
    let (_g, dir) = serial_tempdir().await;
    let (f, port) = recovery_files(
        dir.path(),
        "resume",
        "[candidate.ladder]\n\"-c\" = [\"1024\", \"768\"]",
    );
    let _cleanup = f.guard();
    let (first, second) = ("resume-c-1024", "resume-c-768");
    f.seat_up("gen");

    let mut child = spawn_run(&f, dir.path(), 1);
    let pid = wait_for_seat(&f, second, Some(first), &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    // The killed campaign left the second variant's seat up and gen down.
    assert!(alive(pid), "{second}'s seat died with the campaign");
    assert!(f.pid("gen").is_none(), "gen was not displaced");
    assert_eq!(done_rows(&f, first).len(), 1);
    assert!(done_rows(&f, second).is_empty());

    let o = f.run(&[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("stopped seat {second} left up by an earlier run")),
        "{err}"
    );
    assert!(err.contains("restored displaced seat gen"), "{err}");
    assert!(!alive(pid), "the seat the killed run left up still runs");

    // The interrupted attempt is journaled as such, then the variant ran again.
    let rows = done_rows(&f, second);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert_eq!(rows[0]["outcome"]["kind"], "interrupted", "{:#}", rows[0]);
    assert_eq!(rows[0]["attempts"], 1);
    let rec = f.record();
    assert_eq!(rec["finished"], true);
    let r2 = row(&rec, second);
    assert_eq!(r2["attempts"], 2, "{r2:#}");
    assert_eq!(r2["outcome_label"], "completed", "{r2:#}");
    assert_eq!(r2["displaced"][0]["restored"], true, "{r2:#}");
    // The finished variant was not run again.
    let r1 = row(&rec, first);
    assert_eq!(r1["attempts"], 1, "{r1:#}");
    assert_eq!(r1["outcome_label"], "completed", "{r1:#}");
    assert_eq!(done_rows(&f, first).len(), 1);
    // A second attempt's files sit beside the first's, never over them.
    assert!(f.out.join(format!("{first}.bakeoff.json")).exists());
    assert!(
        strings(&r2["artifacts"])
            .iter()
            .any(|a| a.starts_with(second) && a.ends_with(".bakeoff.json")),
        "{r2:#}"
    );

    // gen is back and serving; no campaign seat is left.
    assert!(f.pid(second).is_none() && f.pid(first).is_none());
    assert_serves(port, "gen after the recovery");
    f.seat_down("gen");
}

#[tokio::test]
async fn campaign_restore_only_recovers() {
    let (_g, dir) = serial_tempdir().await;
    let (f, port) = recovery_files(dir.path(), "solo", "");
    let _cleanup = f.guard();
    f.seat_up("gen");

    let mut child = spawn_run(&f, dir.path(), 1);
    let pid = wait_for_seat(&f, "solo", None, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(alive(pid));
    assert!(f.pid("gen").is_none(), "gen was not displaced");

    let o = crate::util::bakeoff(&[
        "campaign",
        "restore",
        f.out_arg(),
        "--silence-timeout",
        SILENCE,
        "--ready-timeout",
        "60",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let said = crate::util::stdout(&o);
    assert!(
        said.contains("stopped seat solo left up by an earlier run"),
        "{said}"
    );
    assert!(said.contains("restored displaced seat gen"), "{said}");
    assert!(
        said.contains("recorded variant solo as interrupted"),
        "{said}"
    );
    assert!(!alive(pid), "solo's seat still runs");
    assert!(f.pid("solo").is_none());
    assert_serves(port, "gen after campaign restore");

    // Only the recovery: the variant is recorded interrupted, not run again.
    let rec = f.record();
    let r = row(&rec, "solo");
    assert_eq!(r["outcome_label"], "interrupted", "{r:#}");
    assert_eq!(r["attempts"], 1, "{r:#}");
    assert_eq!(rec["finished"], false);
    assert_eq!(
        f.journal()
            .iter()
            .filter(|e| e["event"] == "variant-started")
            .count(),
        1
    );
    // A second restore has nothing left to do.
    let again = crate::util::bakeoff(&["campaign", "restore", f.out_arg()]);
    assert_eq!(code(&again), 0, "{}", text(&again));
    assert!(
        crate::util::stdout(&again).contains("nothing to recover"),
        "{}",
        text(&again)
    );
    assert_eq!(f.pid("gen").map(alive), Some(true), "gen was touched again");
    f.seat_down("gen");
}
