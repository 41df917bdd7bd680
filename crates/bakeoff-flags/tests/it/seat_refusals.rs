//! `seat`'s refusals: the seats a verb acts on, the watch's timeouts and the monitor's flags.
//! The fleet file they name is not read for these: the flags are checked first.

use crate::{assert_refused, strs, with};

const FLEET: &str = "fleet.toml";

/// `--all` with names is clap's refusal (the bare verb is the check's, in `refusals.rs`).
#[test]
fn all_with_names_is_refused() {
    for verb in ["up", "down", "restart"] {
        assert_refused(&["seat", verb, "--fleet", FLEET, "--all", "one"], "--all");
    }
}

/// Timeouts that do not fit a duration are refused as the value is parsed: the flag, the
/// value, its range and the fix; never a panic.
#[test]
fn out_of_range_timeouts_are_refused() {
    for (flag, v) in [
        ("--silence-timeout", "1e20"),
        ("--ready-timeout", "-5"),
        ("--load-budget", "NaN"),
        ("--crash-loop-window", "inf"),
    ] {
        let arg = format!("{flag}={v}");
        let args = ["seat", "watch", "--fleet", FLEET, "one", &arg];
        assert_refused(&args, &format!("{flag} {v}: must be a number from "));
        assert_refused(&args, "; fix: ");
    }
}

#[test]
fn monitor_flags_are_refused_in_one_line() {
    let base = ["seat", "monitor", "--fleet", FLEET, "--out", "results"];
    for (extra, says) in [
        (&["--interval", "0"][..], "--interval"),
        (&["--duration=-1"][..], "--duration"),
        (&["--probe-timeout", "1000"][..], "--probe-timeout"),
        (&["--drift-threshold=-5"][..], "--drift-threshold"),
        (&["--drift-min", "lots"][..], "--drift-min"),
        (&["--probe-max-tokens", "0"][..], "--probe-max-tokens"),
    ] {
        assert_refused(&strs(&with(&base, extra)), says);
    }
}
