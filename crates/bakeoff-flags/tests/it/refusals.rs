//! Each check refuses with one line that names the flag and the fix; the library errors a
//! flag's value goes through keep their own variant (the binary classifies them).

use bakeoff_flags::FlagError;

use crate::{check, clap_refusal, refusal};

const URL: &str = "http://127.0.0.1:1";

#[test]
fn a_value_out_of_range_names_its_flag_and_the_fix() {
    // Ranges are checked as the value is parsed (clap's refusal, one line; see `bounds.rs`).
    assert_eq!(
        clap_refusal(&["eval", "run", "--endpoint", URL, "--connect-timeout", "0"]),
        "error: --connect-timeout 0: must be a whole number from 1 to 3600; fix: e.g. --connect-timeout 10"
    );
    assert_eq!(
        clap_refusal(&["eval", "run", "--endpoint", URL, "--limit", "0"]),
        "error: --limit 0: must be a whole number from 1 to 1000000; fix: e.g. --limit 1"
    );
    assert_eq!(
        clap_refusal(&["plan", "--margin", "-1"]),
        "error: --margin -1: must be a number from 0 to 1024; fix: e.g. --margin 2"
    );
    assert_eq!(
        clap_refusal(&["eval", "run", "--local-ctx", "0"]),
        "error: --ctx 0: must be a whole number from 1 to 1048576; fix: e.g. --ctx 8192"
    );
    // Negative, not a number, past the type's own range: each the same one line.
    for (args, want) in [
        (
            &["eval", "run", "--ready-timeout", "-1"][..],
            "error: --ready-timeout -1: must be a whole number from 1 to 86400; fix: e.g. --ready-timeout",
        ),
        (
            &["bench", "run", "--temperature", "NaN"][..],
            "error: --temperature NaN: must be a number from 0 to 2; fix: e.g. --temperature",
        ),
        (
            &["eval", "damage", "--top-k", "4000000000"][..],
            "error: --top-k 4000000000: must be a whole number from 1 to 100",
        ),
    ] {
        let line = clap_refusal(args);
        assert!(line.starts_with(want), "{args:?}: {line}");
    }
    // A check of a value in range stays the config's.
    assert_eq!(
        refusal(&[
            "bench",
            "run",
            "--endpoint",
            URL,
            "--gauge-interval",
            "0.01"
        ]),
        "--gauge-interval must be at least 0.1 s (0 turns the gauges off)"
    );
}

#[test]
fn free_text_that_is_the_record_must_say_something() {
    assert_eq!(
        refusal(&["verdict", "some-slug", "reject", "--reason", "  "]),
        "--reason is empty: say why, it is the record"
    );
    assert_eq!(
        refusal(&[
            "log",
            "add",
            "--title",
            "t",
            "--summary",
            "s",
            "--date",
            "soon"
        ]),
        "--date \"soon\" is not a date; use YYYY-MM-DD"
    );
}

#[test]
fn a_search_needs_its_objectives() {
    assert_eq!(
        refusal(&[
            "bench",
            "run",
            "--endpoint",
            URL,
            "--rate",
            "1,2",
            "--find-capacity"
        ]),
        "--find-capacity needs the objectives to meet: add --slo, e.g. ttft=500ms,tpot=50ms"
    );
}

#[test]
fn flags_that_do_not_go_together_are_refused_before_anything_starts() {
    let versus_search = [
        "bench",
        "run",
        "--endpoint",
        URL,
        "--versus",
        "http://127.0.0.1:2",
        "--rate",
        "1,2",
        "--find-capacity",
        "--slo",
        "ttft=500ms",
    ];
    assert_eq!(
        refusal(&versus_search),
        bakeoff_load::runner::VERSUS_NO_SEARCH
    );
}

#[test]
fn a_value_a_library_parses_keeps_that_library_s_error() {
    let slug = check(&["eval", "run", "--endpoint", URL, "--slug", "Upper"]);
    assert!(matches!(slug, Err(FlagError::Slug(_))), "{slug:?}");
    let url = check(&["eval", "run", "--endpoint", "ftp://x"]);
    assert!(matches!(url, Err(FlagError::Url(_))), "{url:?}");
    let levels = check(&["bench", "run", "--endpoint", URL, "--concurrency", "1.5"]);
    assert!(matches!(levels, Err(FlagError::Load(_))), "{levels:?}");
}

#[test]
fn a_bare_seat_verb_never_means_the_whole_fleet() {
    for verb in ["up", "down", "restart"] {
        assert_eq!(
            refusal(&["seat", verb, "--fleet", "fleet.toml"]),
            "name the seats, or --all for every seat in the fleet",
            "{verb}"
        );
        assert!(check(&["seat", verb, "--fleet", "fleet.toml", "--all"]).is_ok());
        assert!(check(&["seat", verb, "--fleet", "fleet.toml", "a", "b"]).is_ok());
    }
}

#[test]
fn an_empty_quantization_is_not_a_flag_that_agrees() {
    assert_eq!(
        refusal(&["audit", "checkpoint", "dir", "--quantization", " "]),
        "--quantization is empty; fix: give the method the server is started with (e.g. --quantization awq), or leave the flag out for a server started without one"
    );
    assert!(check(&["audit", "checkpoint", "dir", "--quantization", "awq"]).is_ok());
}
