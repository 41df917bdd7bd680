//! Code, tests and docs cite upstream sources with versions (a file and function of a named
//! release) or the project's own docs (docs/field-cases.md, docs/failure-classes.md), never a
//! tracker's numbers: a thread is not the source of a wording, and its number says nothing to a
//! reader without the tracker. This guard reads every `.rs` under `crates/`, `docs/*.md` and
//! `README.md` and names each line that cites one.

use std::path::{Path, PathBuf};

/// Words that, followed by a space and `#N`, make the number a tracker's (`PR #N`,
/// `vllm #N`). Compared in lowercase.
const BEFORE_A_SPACE: &[&str] = &[
    "pr",
    "rfc",
    "issue",
    "issues",
    "pull",
    "vllm",
    "sglang",
    "llama.cpp",
    "ggml",
    "tgi",
    "litellm",
    "ollama",
    "nccl",
    "torch",
    "pytorch",
    "transformers",
];

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/')
}

/// What makes `line` cite a tracker number, if anything: `name#N` and `owner/repo#N`,
/// `PR #N`-style words before `#N`, a follow-on `, #N` / `(#N` / a line opening with `#N`, and
/// `…/issues/N` or `…/pull/N` URLs. Rust attributes (`#[…]`, `#!`), format flags (`{:#x}`,
/// `{:#010x}`), raw strings (`r#"`) and hex colours (`#12ab34`, `:#333`) are not.
pub(crate) fn tracker_reference(line: &str) -> Option<String> {
    for marker in ["issues/", "pull/"] {
        let mut from = 0;
        while let Some(at) = line[from..].find(marker) {
            let end = from + at + marker.len();
            if line[end..].starts_with(|c: char| c.is_ascii_digit()) {
                return Some(format!("a `{marker}N` link"));
            }
            from = end;
        }
    }
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(at, c)) in chars.iter().enumerate() {
        if c != '#' {
            continue;
        }
        let digits: String = line[at + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if digits.is_empty() {
            continue;
        }
        let after = line[at + 1 + digits.len()..].chars().next();
        if after.is_some_and(|a| a.is_ascii_alphanumeric() || a == '_') {
            continue; // a hex colour or an identifier, not a number
        }
        let before: String = chars[..k]
            .iter()
            .rev()
            .map(|&(_, c)| c)
            .take_while(|&c| is_name_char(c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if before.chars().any(|c| c.is_ascii_alphabetic()) {
            return Some(format!("`{before}#{digits}`"));
        }
        let head = line[..at].trim_end();
        let word: String = head
            .chars()
            .rev()
            .take_while(|&c| is_name_char(c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let spaced = head.len() < at;
        if spaced && BEFORE_A_SPACE.contains(&word.to_ascii_lowercase().as_str()) {
            return Some(format!("`{word} #{digits}`"));
        }
        let long = digits.len() >= 2;
        let opening = head
            .trim_start()
            .trim_start_matches("//!")
            .trim_start_matches("///")
            .trim_start_matches("//")
            .trim()
            .is_empty();
        if long && (head.ends_with(',') || head.ends_with('(') || opening) {
            return Some(format!("a follow-on `#{digits}`"));
        }
        if long && spaced && matches!(word.as_str(), "and" | "or") {
            return Some(format!("a follow-on `{word} #{digits}`"));
        }
    }
    None
}

fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            files(&path, keep, out);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

#[test]
fn no_code_test_or_doc_cites_a_tracker_number() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut paths = Vec::new();
    files(
        &root.join("crates"),
        &|p| p.extension().is_some_and(|e| e == "rs"),
        &mut paths,
    );
    let md = |p: &Path| p.extension().is_some_and(|e| e == "md");
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        paths.extend(entries.flatten().map(|e| e.path()).filter(|p| md(p)));
    }
    paths.push(root.join("README.md"));
    paths.sort();
    assert!(paths.len() > 100, "read only {} files", paths.len());

    let mut found = Vec::new();
    for path in &paths {
        // This file names the patterns it refuses.
        if path.ends_with("bakeoff-artifact/tests/it/references.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if let Some(what) = tracker_reference(line) {
                let shown = path.strip_prefix(&root).unwrap_or(path);
                found.push(format!(
                    "{}:{}: {what}: {}",
                    shown.display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "cite the upstream source with its version (file and function) or a section of \
         docs/field-cases.md / docs/failure-classes.md instead of a tracker number:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_guard_tells_tracker_numbers_from_rust_and_colours() {
    // Written with `~` for `#` (and the links built), so that a grep of the tree for tracker
    // numbers does not find the examples.
    let cited = [
        "see vllm~14452 for the log",
        "(intel/torch-xpu-ops~3011)",
        "TGI~710 (2023 wording)",
        "llama.cpp~20431, llama.cpp~11476",
        "fixed in PR ~7826",
        "wrong both ways (vllm ~45178)",
        "the follow-ons (~45178, ~57475)",
        "vllm-project/vllm-ascend~19 and ~1127",
        "         ~7651); a missing shared library",
    ]
    .map(|l| l.replace('~', "#"));
    let links = ["pull", "issues"].map(|kind| format!("https://github.com/o/r/{kind}/25655"));
    for cited in cited.iter().chain(&links) {
        assert!(tracker_reference(cited).is_some(), "missed: {cited}");
    }
    let fine = [
        "#[derive(Debug, Clone)]",
        "#![allow(clippy::unwrap_used)]",
        "format!(\"{:#x} {:#010x} {:#?}\", a, b, c)",
        "let s = r#\"raw\"#;",
        "color: ~333; background:~12ab34; border: 1px solid ~fff",
        "assert!(holds(\"order ~4471 OVER\"));",
        "# Failure classes",
        "## Why each class exists",
        "docs/field-cases.md B1, docs/failure-classes.md",
        "vLLM 0.19.1 vllm/v1/worker/utils.py request_memory",
    ]
    .map(|l| l.replace('~', "#"));
    for fine in &fine {
        assert_eq!(tracker_reference(fine), None, "flagged: {fine}");
    }
}
