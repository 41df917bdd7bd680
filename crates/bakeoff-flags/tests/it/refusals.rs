//! Each check refuses with one line that names the flag and the fix; the library errors a
//! flag's value goes through keep their own variant (the binary classifies them).

use bakeoff_flags::FlagError;

use crate::{check, refusal};

const URL: &str = "http://127.0.0.1:1";

#[test]
fn a_value_out_of_range_names_its_flag_and_the_fix() {
    assert_eq!(
        refusal(&["eval", "run", "--endpoint", URL, "--connect-timeout", "0"]),
        "--connect-timeout must be at least 1 second"
    );
    assert_eq!(
        refusal(&["eval", "run", "--endpoint", URL, "--limit", "0"]),
        "--limit must be at least 1"
    );
    assert_eq!(
        refusal(&["bench", "run", "--endpoint", URL, "--duration", "0"]),
        "--duration must be a positive number of seconds"
    );
    assert_eq!(
        refusal(&["plan", "--margin", "-1"]),
        "--margin -1: must be a number of GiB, 0 or more; fix: e.g. --margin 2 (0 for no margin)"
    );
    assert_eq!(
        refusal(&["eval", "run", "--local-ctx", "0"]),
        "--local-ctx and --local-parallel must be positive"
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
    let levels = check(&["bench", "run", "--endpoint", URL, "--concurrency", "0"]);
    assert!(matches!(levels, Err(FlagError::Load(_))), "{levels:?}");
    let depths = check(&["eval", "run", "--endpoint", URL, "--context-depths", "120"]);
    assert_eq!(
        depths.map_err(|e| e.to_string()),
        Err("context depth \"120\" is not a percentage 0–100".to_string())
    );
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
