//! The campaign file: parsed, validated, expanded — every refusal one line naming the thing.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use bakeoff_campaign::Campaign;
use bakeoff_testkit::fleet::seat_header;

/// A fleet with a process seat `base` (llama.cpp, port 9100) and a Docker seat `dock` whose
/// restart policy is `policy`.
fn fleet(dir: &Path, policy: &str) {
    let text = format!(
        "[hosts.local]\ngpus = 0\n{}[seat.process]\ncommand = \"/bin/llama-server\"\nargs = [\"-m\", \"/m.gguf\", \"--ctx-size\", \"1024\", \"--no-warmup\", \"--port\", \"{{port}}\"]\n{}[seat.docker]\nimage = \"img:1\"\ncommand = [\"-c\", \"512\"]\nrestart = \"{policy}\"\n{}[seat.process]\ncommand = \"/bin/true\"\n",
        seat_header("base", "llama.cpp", "bench", 9100, "m"),
        seat_header("dock", "llama.cpp", "bench", 9101, "m"),
        seat_header("gen", "llama.cpp", "production", 9102, "m"),
    );
    std::fs::write(dir.join("fleet.toml"), text).unwrap();
}

fn parse(body: &str) -> Result<Campaign, String> {
    parse_with(body, "no")
}

fn parse_with(body: &str, policy: &str) -> Result<Campaign, String> {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path(), policy);
    let text =
        format!("[campaign]\nname = \"t\"\nfleet = \"fleet.toml\"\nsuites = [\"smoke\"]\n{body}");
    let path = dir.path().join("campaign.toml");
    std::fs::write(&path, &text).unwrap();
    Campaign::load(&path).map_err(|e| e.to_string())
}

#[test]
fn a_ladder_expands_in_file_order_with_its_delta() {
    let c = parse(
        "[[candidate]]\nname = \"g\"\nseat = \"base\"\nremove_args = [\"--no-warmup\"]\nadd_args = [\"--metrics\"]\nenv = { HF_TOKEN = \"secret-value\" }\n[candidate.ladder]\n\"-c\" = [\"8192\", 4096]\n\"--flash-attn\" = [true, false]\n",
    )
    .unwrap();
    let slugs: Vec<&str> = c.variants.iter().map(|v| v.slug.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "g-c-8192-flash-attn",
            "g-c-8192-no-flash-attn",
            "g-c-4096-flash-attn",
            "g-c-4096-no-flash-attn"
        ]
    );
    let v = &c.variants[2];
    assert_eq!(v.index, 3);
    assert!(
        v.delta.contains(&"- --no-warmup".to_string()),
        "{:?}",
        v.delta
    );
    assert!(
        v.delta.contains(&"-c 4096 (was 1024)".to_string()),
        "{:?}",
        v.delta
    );
    assert!(
        v.delta.contains(&"+ --flash-attn".to_string()),
        "{:?}",
        v.delta
    );
    assert!(
        v.delta.contains(&"+ --metrics".to_string()),
        "{:?}",
        v.delta
    );
    // The secret's value is in the seat (it is launched with it), never in what is printed.
    assert!(
        v.delta
            .iter()
            .any(|d| d.starts_with("env HF_TOKEN=<redacted>")),
        "{:?}",
        v.delta
    );
    assert!(
        !v.launch_line().contains("secret-value"),
        "{}",
        v.launch_line()
    );
    // The seat is a bench seat named after the variant, on the base seat's port.
    assert_eq!(v.seat.name, v.slug);
    assert_eq!(v.seat.port, 9100);
    assert_eq!(v.seat.role, bakeoff_seats::Role::Bench);
    let line = v.launch_line();
    assert!(
        line.contains("--ctx-size 4096") && line.contains("--flash-attn --metrics"),
        "{line}"
    );
    assert!(!line.contains("--no-warmup"), "{line}");
}

#[test]
fn a_candidate_without_a_ladder_is_one_variant_named_after_it() {
    let c = parse("[[candidate]]\nname = \"plain\"\nseat = \"base\"\n").unwrap();
    assert_eq!(c.variants.len(), 1);
    assert_eq!(c.variants[0].slug, "plain");
    assert!(c.variants[0].delta.is_empty());
    assert!(c.out.ends_with("results/t"), "{}", c.out.display());
}

#[test]
fn refusals_name_the_thing_and_the_fix() {
    let cases: &[(&str, &str)] = &[
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\ncolour = 1\n",
            "unknown field `colour`",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"nope\"\n",
            "seat \"nope\" is not in the fleet file",
        ),
        (
            "[[candidate]]\nname = \"G_1\"\nseat = \"base\"\n",
            "candidate name \"G_1\"",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\nimage = \"x\"\n",
            "Docker seats only",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\n[candidate.ladder]\n\"-c\" = []\n",
            "has no values",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\n[candidate.ladder]\n\"c\" = [\"1\"]\n",
            "is not a flag",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\n[candidate.window]\ndisplaces = [\"ghost\"]\n",
            "window displaces \"ghost\"",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\n[candidate.window]\ndisplaces = [\"gen\"]\nidle_for_s = 60\nidle_timeout_s = 10\n",
            "idle_timeout_s (10) is shorter",
        ),
        (
            "[[candidate]]\nname = \"g\"\nseat = \"base\"\n[[candidate]]\nname = \"g\"\nseat = \"base\"\n",
            "declared twice",
        ),
        ("", "no [[candidate]]"),
        (
            "limit = 0\n[[candidate]]\nname = \"g\"\nseat = \"base\"\n",
            "limit must be at least 1",
        ),
    ];
    for (body, want) in cases {
        let e = parse(body).unwrap_err();
        assert!(e.contains(want), "{body:?}: {e}");
        assert_eq!(e.lines().count(), 1, "one line: {e}");
    }
    let e = parse("[[candidate]]\nname = \"g\"\nseat = \"base\"\nladder_mode = \"sometimes\"\n")
        .unwrap_err();
    assert!(
        e.contains("ladder_mode") || e.contains("unknown variant"),
        "{e}"
    );
}

/// A Docker seat that restarts itself could come back after its stop and block the restore of
/// what the window displaced (docs/field-cases.md F8): refused before anything runs.
#[test]
fn a_self_restarting_docker_seat_is_refused_as_a_candidate() {
    let e = parse_with(
        "[[candidate]]\nname = \"d\"\nseat = \"dock\"\n",
        "unless-stopped",
    )
    .unwrap_err();
    assert!(
        e.contains("restart = \"unless-stopped\"") && e.contains("docs/field-cases.md F8"),
        "{e}"
    );
    let ok = parse_with(
        "[[candidate]]\nname = \"d\"\nseat = \"dock\"\nimage = \"img:2\"\n",
        "no",
    )
    .unwrap();
    let v = &ok.variants[0];
    assert_eq!(v.seat.container_name().as_deref(), Some("bakeoff-d"));
    assert!(
        v.delta.contains(&"image img:2 (was img:1)".to_string()),
        "{:?}",
        v.delta
    );
}

#[test]
fn production_seats_a_window_displaces_are_listed_for_confirm() {
    let c = parse(
        "[[candidate]]\nname = \"g\"\nseat = \"base\"\n[candidate.window]\ndisplaces = [\"gen\", \"dock\"]\nidle_for_s = 1\n",
    )
    .unwrap();
    assert_eq!(c.displaced_production(), ["gen"]);
}

/// A value TOML's types refuse is one line naming the file, the key and the fix (no caret
/// diagram).
#[test]
fn a_toml_type_error_names_the_file_the_key_and_the_fix() {
    let e = parse("limit = -3\n[[candidate]]\nname = \"g\"\nseat = \"base\"\n").unwrap_err();
    assert!(!e.contains('^') && !e.contains('|'), "{e}");
    assert!(
        e.contains("campaign.toml: line 5, [campaign] limit: "),
        "{e}"
    );
    assert!(
        e.ends_with("; fix: a whole number of 1 or more, e.g. limit = 20"),
        "{e}"
    );
}
