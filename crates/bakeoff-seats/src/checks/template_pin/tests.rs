//! The pin's checks that need no engine: resolution at parse, the comparison with a checkpoint
//! directory's `chat_template.jinja`, a launch that does not pass the pin, and the stale pin
//! (docs/field-cases.md F4: the checkpoint moved, the pin did not). The served-template checks run
//! against the real llama-server in `tests/it/template_pin.rs`.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::fleet::types::Fleet;

const CHATML: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
const OTHER: &str = "{% for m in messages %}<start_of_turn>{{ m.role }}\n{{ m.content }}<end_of_turn>\n{% endfor %}";

/// A fleet in `dir` with one vLLM process seat serving the checkpoint directory `ckpt`,
/// pinned to `pins/chat.jinja`, with `extra` arguments.
fn fleet(dir: &Path, ckpt: &Path, extra: &str) -> Fleet {
    let text = format!(
        r#"
[[seat]]
name = "pinned"
engine = "vllm"
role = "bench"
port = 18100
chat_template = "pins/chat.jinja"
[seat.process]
command = "vllm"
args = ["serve", "{}"{extra}]
"#,
        ckpt.display()
    );
    Fleet::parse(&text, &dir.join("fleet.toml")).unwrap()
}

fn setup(pin: &str, ckpt_template: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pins")).unwrap();
    std::fs::write(dir.path().join("pins/chat.jinja"), pin).unwrap();
    let ckpt = dir.path().join("ckpt");
    std::fs::create_dir_all(&ckpt).unwrap();
    std::fs::write(ckpt.join("chat_template.jinja"), ckpt_template).unwrap();
    (dir, ckpt)
}

fn codes(f: &[SeatFinding]) -> Vec<&str> {
    f.iter().map(|f| f.code.as_str()).collect()
}

#[test]
fn the_pin_resolves_against_the_fleet_files_directory() {
    let (dir, ckpt) = setup(CHATML, CHATML);
    let f = fleet(dir.path(), &ckpt, "");
    assert_eq!(
        f.seats[0].chat_template.as_deref(),
        Some(dir.path().join("pins/chat.jinja").as_path())
    );
}

#[test]
fn a_missing_or_binary_pin_is_refused_at_parse_naming_seat_path_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
[[seat]]
name = "pinned"
engine = "vllm"
role = "bench"
port = 18100
chat_template = "nope/chat.jinja"
[seat.process]
command = "vllm"
args = ["serve", "/m"]
"#;
    let err = Fleet::parse(text, &dir.path().join("fleet.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("seat \"pinned\""), "{err}");
    assert!(err.contains("nope/chat.jinja"), "{err}");
    assert!(err.contains("fix:"), "{err}");
    assert!(!err.contains('\n'), "{err}");
    std::fs::create_dir_all(dir.path().join("nope")).unwrap();
    std::fs::write(dir.path().join("nope/chat.jinja"), [0xff, 0xfe, 0x00]).unwrap();
    let err = Fleet::parse(text, &dir.path().join("fleet.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not UTF-8 text"), "{err}");
}

#[test]
fn the_pin_against_the_checkpoint() {
    let (dir, ckpt) = setup(CHATML, CHATML);
    let pin = dir.path().join("pins/chat.jinja");
    let passed = format!(r#", "--chat-template", "{}""#, pin.display());
    let f = fleet(dir.path(), &ckpt, &passed);
    let found = before_start(&f, &f.seats[0]);
    assert_eq!(codes(&found), ["template-pin-no-op"], "{found:?}");
    // CRLF and trailing blanks are not a difference (the normalized hash).
    std::fs::write(
        ckpt.join("chat_template.jinja"),
        CHATML.replace('\n', "\r\n") + "\n\n",
    )
    .unwrap();
    assert_eq!(
        codes(&before_start(&f, &f.seats[0])),
        ["template-pin-no-op"]
    );
    std::fs::write(ckpt.join("chat_template.jinja"), OTHER).unwrap();
    let found = before_start(&f, &f.seats[0]);
    assert_eq!(codes(&found), ["template-override"], "{found:?}");
    let short_pin = fingerprint(CHATML).short;
    let short_ck = fingerprint(OTHER).short;
    assert!(found[0].message.contains(&short_pin) && found[0].message.contains(&short_ck));
    // No template in the checkpoint: unchecked.
    std::fs::remove_file(ckpt.join("chat_template.jinja")).unwrap();
    let found = before_start(&f, &f.seats[0]);
    assert_eq!(codes(&found), ["template-pin-unchecked"], "{found:?}");
}

#[test]
fn a_launch_that_does_not_pass_the_pin_is_predicted_to_mismatch() {
    let (dir, ckpt) = setup(CHATML, CHATML);
    let f = fleet(dir.path(), &ckpt, "");
    let found = before_start(&f, &f.seats[0]);
    assert_eq!(
        codes(&found),
        ["template-pin-no-op", "template-pin-not-passed"]
    );
    let w = &found[1];
    assert_eq!(w.severity, FindingSeverity::Warning);
    let pin = dir.path().join("pins/chat.jinja");
    assert_eq!(
        w.fix.as_deref(),
        Some(
            format!(
                r#"add "--chat-template", "{}" to [seat.process] args"#,
                pin.display()
            )
            .as_str()
        )
    );
    // Another file passed: also not the pin. A copy of the pin is the pin.
    let other = dir.path().join("other.jinja");
    std::fs::write(&other, OTHER).unwrap();
    let f = fleet(
        dir.path(),
        &ckpt,
        &format!(r#", "--chat-template={}""#, other.display()),
    );
    assert!(codes(&before_start(&f, &f.seats[0])).contains(&"template-pin-not-passed"));
    let copy = dir.path().join("copy.jinja");
    std::fs::write(&copy, CHATML).unwrap();
    let f = fleet(
        dir.path(),
        &ckpt,
        &format!(r#", "--chat-template", "{}""#, copy.display()),
    );
    assert_eq!(
        codes(&before_start(&f, &f.seats[0])),
        ["template-pin-no-op"]
    );
}

#[test]
fn the_checkpoint_moved_and_the_pin_did_not() {
    let (dir, ckpt) = setup(CHATML, CHATML);
    let pin = dir.path().join("pins/chat.jinja");
    let passed = format!(r#", "--chat-template", "{}""#, pin.display());
    let f = fleet(dir.path(), &ckpt, &passed);
    let seat = &f.seats[0];
    // Nothing recorded yet: no stale finding whatever the checkpoint holds.
    std::fs::write(ckpt.join("chat_template.jinja"), OTHER).unwrap();
    assert!(!codes(&before_start(&f, seat)).contains(&"template-pin-stale"));
    std::fs::write(ckpt.join("chat_template.jinja"), CHATML).unwrap();
    record_good_start(&f, seat).unwrap();
    assert!(record_path(&f, seat).is_file());
    assert_eq!(codes(&before_start(&f, seat)), ["template-pin-no-op"]);
    // The checkpoint's template changes under the same pin.
    std::fs::write(ckpt.join("chat_template.jinja"), OTHER).unwrap();
    let found = before_start(&f, seat);
    assert_eq!(
        codes(&found),
        ["template-override", "template-pin-stale"],
        "{found:?}"
    );
    assert!(
        found[1]
            .message
            .contains("the checkpoint moved, the pin did not")
    );
    // The pin moved with it: not stale (a deliberate new pin).
    std::fs::write(&pin, OTHER).unwrap();
    assert_eq!(codes(&before_start(&f, seat)), ["template-pin-no-op"]);
}
