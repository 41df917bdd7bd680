//! The docs cannot drift from the command line: every `bakeoff …` command in a fenced block of
//! README.md and docs/*.md, and every example in a command's own `--help`, names subcommands
//! and flags that exist in the real clap definition; and where a doc states a flag's default
//! ("`--tokens N`, default 64"), it is the default clap has, or the one its help states.
//!
//! Read without spawning the binary: the command tree is `Cli::command()`.

// A test of the repository's own files: a missing doc or a bad pattern is the test's failure.
#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};

use bakeoff_flags::cli::Cli;
use clap::CommandFactory;

/// The built command tree (`--help` and `--version` included).
fn root() -> clap::Command {
    let mut c = Cli::command();
    c.build();
    c
}

/// README.md and docs/*.md, from the workspace root.
fn doc_files() -> Vec<PathBuf> {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![ws.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(ws.join("docs"))
        .expect("docs/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// A command line found in a doc: where, and its words.
#[derive(Debug)]
struct Found {
    at: String,
    words: Vec<String>,
}

/// The `bakeoff …` lines of the fenced blocks of `text` (a `\` at a line's end continues it),
/// and the `bakeoff …` spans of inline code in prose and headings.
fn fenced_commands(name: &str, text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut fenced = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            pending = None;
            continue;
        }
        if !fenced {
            // Inline code in prose and headings: `bakeoff eval run --suite context`.
            for (k, span) in line.split('`').enumerate() {
                if k % 2 == 1
                    && let Some(words) = command_words(span)
                {
                    out.push(Found {
                        at: format!("{name}:{}", i + 1),
                        words,
                    });
                }
            }
            continue;
        }
        let (start, joined) = match pending.take() {
            Some((s, mut acc)) => {
                acc.push(' ');
                acc.push_str(line.trim());
                (s, acc)
            }
            None => (i + 1, line.trim().to_string()),
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, head.to_string()));
            continue;
        }
        if let Some(words) = command_words(&joined) {
            out.push(Found {
                at: format!("{name}:{start}"),
                words,
            });
        }
    }
    out
}

/// The words after `bakeoff` when `line` runs bakeoff (after a `$ ` prompt or `VAR=value`
/// assignments), up to a comment, a pipe, a redirection or the next command.
fn command_words(line: &str) -> Option<Vec<String>> {
    let words = shell_words(line);
    let mut it = words.iter().skip_while(|w| *w == "$" || is_assignment(w));
    if it.next().map(String::as_str) != Some("bakeoff") {
        return None;
    }
    let rest: Vec<String> = it
        .take_while(|w| {
            !(w.starts_with('#')
                || matches!(
                    w.as_str(),
                    "|" | "||" | "&&" | ";" | ">" | ">>" | "<" | "2>&1"
                ))
        })
        .cloned()
        .collect();
    // A diagram's `bakeoff (binary: …)` is no command.
    match rest.first() {
        Some(w) if !w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '-' || c == '[') => {
            None
        }
        _ => Some(rest),
    }
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// Splits a line into words as a shell would, quotes kept together.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Every command at and below `c`.
fn descendants(c: &clap::Command) -> Vec<&clap::Command> {
    let mut out = vec![c];
    for s in c.get_subcommands() {
        out.extend(descendants(s));
    }
    out
}

/// Whether `c` takes the long flag `name` (or an alias of one).
fn has_long(c: &clap::Command, name: &str) -> bool {
    c.get_arguments().any(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
    })
}

/// Whether `c`'s long flag `name` takes a value (`--out DIR`, not `--json`).
fn takes_value(c: &clap::Command, name: &str) -> bool {
    c.get_arguments().any(|a| {
        (a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name)))
            && a.get_action().takes_values()
    })
}

fn has_short(c: &clap::Command, ch: char) -> bool {
    c.get_arguments().any(|a| {
        a.get_short() == Some(ch) || a.get_all_short_aliases().is_some_and(|v| v.contains(&ch))
    })
}

fn path_of(path: &[&str]) -> String {
    path.join(" ")
}

/// Checks one command line against the tree: `Err` names the first word clap would not know.
/// `[…]` marks an optional part, `a|b` alternatives, `…` or `...` an elided part (the flags
/// after it are then looked for in every command below).
fn check_words(root: &clap::Command, words: &[String]) -> Result<(), String> {
    let mut cmd = root;
    let mut path = vec!["bakeoff"];
    // After an elision or alternatives in a subcommand's place: the commands the flags may be.
    let mut scope: Option<Vec<&clap::Command>> = None;
    // The previous word was a flag that takes a value: this word is that value.
    let mut value_due = false;
    for raw in words {
        let due = std::mem::take(&mut value_due);
        let w = raw.trim_matches(|c| c == '[' || c == ']');
        if w == "--" {
            break;
        }
        if w.is_empty() {
            continue;
        }
        if w == "…" || w == "..." {
            if cmd.has_subcommands() && scope.is_none() {
                scope = Some(descendants(cmd));
            }
            continue;
        }
        let in_scope = |f: &dyn Fn(&clap::Command) -> bool| match &scope {
            Some(cs) => cs.iter().any(|c| f(c)),
            None => f(cmd),
        };
        if let Some(long) = w.strip_prefix("--") {
            for alt in long.split('|') {
                let name = alt
                    .trim_start_matches('-')
                    .split(['=', '['])
                    .next()
                    .unwrap_or("");
                if name.is_empty() || name.contains('…') {
                    continue;
                }
                if !in_scope(&|c| has_long(c, name)) {
                    return Err(format!("`{} --{name}`: no such flag", path_of(&path)));
                }
                value_due = !alt.contains('=') && in_scope(&|c| takes_value(c, name));
            }
            continue;
        }
        if let Some(shorts) = w.strip_prefix('-') {
            if shorts.starts_with(|c: char| c.is_ascii_alphabetic()) {
                for ch in shorts.chars().take_while(|c| c.is_ascii_alphabetic()) {
                    if !in_scope(&|c| has_short(c, ch)) {
                        return Err(format!("`{} -{ch}`: no such flag", path_of(&path)));
                    }
                    value_due = shorts.len() == 1
                        && in_scope(&|c| {
                            c.get_arguments()
                                .any(|a| a.get_short() == Some(ch) && a.get_action().takes_values())
                        });
                }
            }
            continue;
        }
        // A positional word: a flag's value, a subcommand where one is expected, else one of
        // the command's positional arguments (a leaf without any refuses it).
        if due {
            continue;
        }
        if scope.is_none() && !cmd.has_subcommands() {
            if !cmd.get_positionals().any(|_| true) {
                return Err(format!(
                    "`{} … {w}`: the command takes no positional argument",
                    path_of(&path)
                ));
            }
            continue;
        }
        if scope.is_none() && cmd.has_subcommands() {
            let alts: Vec<&str> = w.split('|').collect();
            let mut found = Vec::new();
            for a in &alts {
                match cmd.find_subcommand(a) {
                    Some(s) => found.push(s),
                    None => {
                        return Err(format!(
                            "`{} {a}`: no such subcommand (there are: {})",
                            path_of(&path),
                            cmd.get_subcommands()
                                .map(|s| s.get_name())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
            }
            if let [one] = found.as_slice() {
                cmd = one;
                path.push(one.get_name());
            } else {
                scope = Some(found.into_iter().flat_map(descendants).collect());
            }
        }
    }
    Ok(())
}

/// The examples a command's own help gives (`after_help`), at every level.
fn help_examples(root: &clap::Command) -> Vec<Found> {
    let mut out = Vec::new();
    for c in descendants(root) {
        for h in [c.get_after_help(), c.get_after_long_help()]
            .into_iter()
            .flatten()
        {
            let text = h.to_string();
            for line in text.lines() {
                if let Some(words) = command_words(line.trim()) {
                    out.push(Found {
                        at: format!("`{} --help`", c.get_name()),
                        words,
                    });
                }
            }
        }
    }
    out
}

fn all_doc_commands() -> Vec<Found> {
    let mut found = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).expect("doc is readable");
        let name = f
            .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
            .unwrap_or(&f)
            .display()
            .to_string();
        found.extend(fenced_commands(&name, &text));
    }
    found
}

#[test]
fn every_documented_command_names_real_subcommands_and_flags() {
    let root = root();
    let found = all_doc_commands();
    assert!(
        found.len() > 20,
        "found only {} commands in the docs: is the reader broken?",
        found.len()
    );
    let mut wrong = Vec::new();
    for f in found.iter().chain(help_examples(&root).iter()) {
        if let Err(e) = check_words(&root, &f.words) {
            wrong.push(format!("{}: {e}", f.at));
        }
    }
    assert!(
        wrong.is_empty(),
        "documented commands clap does not know:\n{}",
        wrong.join("\n")
    );
}

/// The checker itself: it refuses what clap refuses, and reads the notations the docs use.
#[test]
fn the_checker_refuses_a_wrong_flag_and_a_wrong_subcommand() {
    let root = root();
    let words = |s: &str| command_words(s).expect("a bakeoff line");
    assert!(
        check_words(
            &root,
            &words("bakeoff eval run --endpoint URL --suite smoke")
        )
        .is_ok()
    );
    assert!(
        check_words(
            &root,
            &words("bakeoff eval preflight --endpoint U [--model ID] [--json]  # comment --nope")
        )
        .is_ok()
    );
    assert!(check_words(&root, &words("bakeoff log add|list|archive --help")).is_ok());
    let e = check_words(&root, &words("bakeoff bench … --url http://x:8016"))
        .expect_err("bench has no --url");
    assert!(e.contains("--url"), "{e}");
    let e =
        check_words(&root, &words("bakeoff eval run --endpiont URL")).expect_err("a misspelt flag");
    assert!(e.contains("--endpiont"), "{e}");
    let e = check_words(&root, &words("bakeoff seat upp --fleet F")).expect_err("no `seat upp`");
    assert!(e.contains("upp"), "{e}");
    let e = check_words(&root, &words("bakeoff log add \"a title\""))
        .expect_err("log add takes its title as --title");
    assert!(e.contains("positional"), "{e}");
    assert!(check_words(&root, &words("bakeoff log add --title T --summary S")).is_ok());
    // Continuations join, and a diagram's `bakeoff (binary)` is no command.
    let f = fenced_commands(
        "t",
        "```sh\nbakeoff bench run --endpoint U \\\n  --requests 8\nbakeoff (binary: x)\n```\n",
    );
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0].words.contains(&"--requests".to_string()));
}

// ---- stated defaults ------------------------------------------------------------------------

/// A default a doc states: "`--tokens N`, default 64", "`--interval` (default 60 s)",
/// "`--fleet` defaults to `fleet.toml`", "`--out DIR`, by default `results/`".
#[derive(Debug)]
struct StatedDefault {
    at: String,
    flag: String,
    value: String,
}

fn stated_defaults(name: &str, text: &str) -> Vec<StatedDefault> {
    let re = regex::Regex::new(
        r"`--([a-z0-9-]+)(?: [^`]*)?`[,:]? (?:\((?:by )?default:? |(?:by )?default:? |defaults to )`?([^\s`,;)]+)",
    )
    .expect("valid regex");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        for m in re.captures_iter(line) {
            out.push(StatedDefault {
                at: format!("{name}:{}", i + 1),
                flag: m[1].to_string(),
                value: m[2].to_string(),
            });
        }
    }
    out
}

/// A value as compared: lowercase, without a trailing `/` or `.`, and a number as a number.
fn normal(v: &str) -> String {
    let v = v
        .trim_start_matches("./")
        .trim_end_matches(['.', '/'])
        .trim_matches('"')
        .to_lowercase();
    match v.parse::<f64>() {
        Ok(n) => format!("{n}"),
        Err(_) => v,
    }
}

/// The defaults clap holds for `--flag` anywhere in the tree, and those its help states
/// ("default: 20", "(default 64)").
fn known_defaults(root: &clap::Command, flag: &str) -> (bool, Vec<String>) {
    let said = regex::Regex::new(r"default:? `?([^\s`,;)]+)").expect("valid regex");
    let mut exists = false;
    let mut vals = Vec::new();
    for c in descendants(root) {
        for a in c.get_arguments().filter(|a| a.get_long() == Some(flag)) {
            exists = true;
            vals.extend(
                a.get_default_values()
                    .iter()
                    .map(|v| normal(&v.to_string_lossy())),
            );
            for h in [a.get_help(), a.get_long_help()].into_iter().flatten() {
                for m in said.captures_iter(&h.to_string()) {
                    vals.push(normal(&m[1]));
                }
            }
        }
    }
    (exists, vals)
}

#[test]
fn every_stated_default_is_claps() {
    let root = root();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for f in doc_files() {
        let text = std::fs::read_to_string(&f).expect("doc is readable");
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        for d in stated_defaults(&name, &text) {
            let (exists, mut vals) = known_defaults(&root, &d.flag);
            vals.sort();
            vals.dedup();
            if !exists {
                // Not a bakeoff flag (an engine's own, as `--max-num-seqs`).
                continue;
            }
            checked += 1;
            if !vals.contains(&normal(&d.value)) {
                wrong.push(format!(
                    "{}: `--{}` default {} in the doc, but the command line's is {}",
                    d.at,
                    d.flag,
                    d.value,
                    if vals.is_empty() {
                        "not stated".to_string()
                    } else {
                        vals.join(" or ")
                    }
                ));
            }
        }
    }
    assert!(
        checked > 5,
        "only {checked} stated defaults found: is the reader broken?"
    );
    assert!(
        wrong.is_empty(),
        "stated defaults that differ:\n{}",
        wrong.join("\n")
    );
}
