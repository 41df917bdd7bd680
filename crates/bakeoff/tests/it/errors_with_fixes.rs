//! Errors that must not stop short: every one says what went wrong and the fix
//! (`<what>: <fix>`, docs/measuring.md and docs/fleet.md), and `plan` without a card
//! size says what it cannot price with both ways to give it.

use crate::plan_audit::fixture;
use crate::util::{bakeoff, code, text};

/// A fleet file that is not there: the error names it and the fix, for every command that
/// reads one.
#[test]
fn a_missing_fleet_file_names_the_fix() {
    for args in [
        vec!["seat", "status", "--fleet", "nope.toml"],
        vec!["plan", "--fleet", "nope.toml"],
    ] {
        let o = bakeoff(&args);
        assert_eq!(code(&o), 2, "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("cannot read the fleet file nope.toml"),
            "{err}"
        );
        assert!(err.contains("): check the path"), "{err}");
    }
    let o = bakeoff(&["campaign", "run", "nope-campaign.toml", "--dry-run"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("): check the path"), "{err}");
}

/// No reading and no size given: the headroom line says it is not priced and names both fixes,
/// never "at most unknown by claims".
#[test]
fn plan_without_a_card_size_names_both_fixes() {
    let fleet = fixture("bakeoff/tests/fixtures/fleet-field-case-f8.toml");
    let o = bakeoff(&["plan", "--fleet", fleet.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(!out.contains("unknown by claims"), "{}", text(&o));
    let line = out
        .lines()
        .find(|l| l.contains("headroom:"))
        .unwrap_or_else(|| panic!("no headroom line: {}", text(&o)));
    assert!(line.contains("not priced"), "{line}");
    assert!(line.contains("--gpu-memory-gib"), "{line}");
    assert!(line.contains("gpu_memory_gib under [hosts."), "{line}");
}

/// `audit template` given a URL of another scheme: the endpoint parser's refusal (exit 2),
/// never "No such file or directory" as if it were a path.
#[test]
fn a_template_url_of_another_scheme_is_refused_as_a_url() {
    let o = bakeoff(&["audit", "template", "ftp://example.invalid/model"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("ftp://"), "{err}");
    assert!(!err.contains("No such file"), "{err}");
}
