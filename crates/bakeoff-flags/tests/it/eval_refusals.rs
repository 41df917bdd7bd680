//! `eval`'s refusals: the endpoint, the names a run is given, and `eval damage`'s and `eval
//! adapter`'s flags and prompt files. Each is one line, before anything is sent.

use crate::{assert_refused, refused, strs, with};

const DEAD: &str = "http://127.0.0.1:1";

#[test]
fn a_bad_endpoint_suite_slug_or_key_is_one_line() {
    for (args, want) in [
        (
            vec!["eval", "preflight", "--endpoint", "not a url"],
            "not a url",
        ),
        (
            vec!["eval", "preflight", "--endpoint", "localhost:8080"],
            "localhost:8080",
        ),
        (
            vec!["eval", "run", "--endpoint", DEAD, "--suite", "nonsense"],
            "nonsense",
        ),
        (
            vec!["eval", "run", "--endpoint", DEAD, "--slug", "../evil"],
            "../evil",
        ),
        (
            vec![
                "eval",
                "preflight",
                "--endpoint",
                DEAD,
                "--api-key-env",
                "BAKEOFF_TEST_UNSET_VAR",
            ],
            "BAKEOFF_TEST_UNSET_VAR",
        ),
        (
            vec!["eval", "preflight"],
            "eval preflight needs --endpoint URL",
        ),
    ] {
        assert_refused(&args, want);
    }
}

#[test]
fn a_port_out_of_range_is_named() {
    assert_refused(
        &["eval", "preflight", "--endpoint", "http://127.0.0.1:99999"],
        "port out of range",
    );
}

#[test]
fn eval_adapter_refuses_bad_flags_and_an_unreadable_prompt_file() {
    let base = ["eval", "adapter", "--endpoint", DEAD, "--adapter", "a"];
    for (extra, says) in [
        (
            &["--top-k", "0"][..],
            "--top-k 0: must be a whole number from 1 to 100; fix: ",
        ),
        (
            &["--max-tokens", "0"][..],
            "--max-tokens 0: must be a whole number from 1 to 1048576; fix: ",
        ),
        (
            &["--prompts", "/nonexistent/prompts.jsonl"][..],
            "cannot read --prompts",
        ),
    ] {
        assert_refused(&strs(&with(&base, extra)), says);
    }
}

#[test]
fn eval_damage_refuses_a_prompt_file_with_a_repeated_id_and_a_bad_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"id\": \"a\", \"prompt\": \"x\"}\n{\"id\": \"a\", \"prompt\": \"y\"}\n",
    )
    .unwrap();
    let base = ["eval", "damage", "--endpoint", DEAD, "--reference", DEAD];
    let line = refused(&strs(&with(&base, &["--prompts", bad.to_str().unwrap()])));
    assert!(line.contains("line 2") && line.contains("twice"), "{line}");
    assert_eq!(line.lines().count(), 1, "{line}");
    assert_refused(
        &strs(&with(&base, &["--top-k", "0"])),
        "--top-k 0: must be a whole number from 1 to 100; fix: ",
    );
}

/// A structured battery or a `--schema` file is read and compiled as the flag is checked: a
/// malformed, uncompilable or empty one is one line naming what is wrong.
#[test]
fn bad_batteries_and_schema_files_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let malformed = write("malformed.jsonl", "{\"id\": \"a\", \"class\":\n");
    let uncompilable = write(
        "uncompilable.jsonl",
        r#"{"id":"a","class":"c","prompt":"p","schema":{"type":"object","properties":{"x":{"type":"string","pattern":"(unclosed"}}},"answer":{}}"#,
    );
    let empty = write("empty.jsonl", "// nothing here\n\n");
    for (file, want) in [
        (&malformed, "malformed.jsonl line 1"),
        (&uncompilable, "the validator cannot compile the schema"),
        (&empty, "has no items"),
    ] {
        let run = ["eval", "run", "--endpoint", DEAD, "--suite", "structured"];
        assert_refused(&strs(&with(&run, &["--structured-battery", file])), want);
    }
    let not_json = write("bad.schema.json", "{\"type\": \"object\",");
    let regex = write(
        "regex.schema.json",
        r#"{"type":"string","pattern":"(unclosed"}"#,
    );
    for (file, want) in [(&not_json, "is not JSON"), (&regex, "cannot compile")] {
        let run = ["bench", "run", "--endpoint", DEAD];
        assert_refused(&strs(&with(&run, &["--schema", file])), want);
    }
}
