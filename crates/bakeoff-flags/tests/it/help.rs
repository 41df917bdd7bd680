//! One consistent CLI (docs/reports.md): every subcommand's `--help`, walked as the binary prints
//! it (`bakeoff --help`, then `bakeoff SUB --help` for each subcommand it lists, recursively):
//! the page is clap's, rendered by the parse the binary runs, so no process is spawned (the
//! binary's own test pins that `--help` exits 0 on stdout).
//!
//! The rules, each checked on every page:
//!
//! - every option and every positional argument has a help line;
//! - an option that takes a value shows its default: clap's `[default: …]`, or — for an optional
//!   flag whose default is decided elsewhere — its help says `default:` (`(default: the first id
//!   in /v1/models)`), or says it is `optional` (nothing happens without it), `repeatable` (a
//!   list that may be empty) or `required`; an option the usage line lists without brackets is
//!   required and needs none of these;
//! - a value name says what it holds (`<DIR>`, `<N>`, `<SECS>`), never only the flag's own name
//!   again (`--seed <SEED>`), except where that name is what it holds ([`OWN_NAME_OK`]);
//! - one long flag means one thing: its meaning is the help's first clause (lowercased, cut at
//!   the first full stop, `,`, `:`, `;` or `(`, and clap's `[default: …]` left out), and a flag whose
//!   clauses differ between subcommands fails unless [`MEANING_ALLOWLIST`] says why;
//! - every leaf subcommand's help ends with `Examples:`, and each example is a real command line
//!   of that subcommand (`bakeoff seat up …` under `seat up`).

use std::collections::{BTreeMap, BTreeSet};

use clap::error::ErrorKind;

/// Flags whose value name is their own name, because the name already says what the value is:
/// a slug, a directory, a date.
const OWN_NAME_OK: &[&str] = &["slug", "dir", "date"];

/// Flags that may mean different things on different subcommands, each with the reason.
const MEANING_ALLOWLIST: &[(&str, &str)] = &[
    (
        "out",
        "a results directory everywhere else; `gateway export --out` is the one config file it writes",
    ),
    (
        "duration",
        "the length of one load step under `bench`; how long `seat monitor` watches in all",
    ),
    (
        "reference",
        "what the rest is compared with in both: the template under `audit template`, the \
         endpoint a candidate is measured against under `eval damage`",
    ),
];

/// One option or positional argument of a help page.
#[derive(Debug)]
struct Entry {
    /// `--fleet <FILE>`, `-h, --help`, `[SEAT]...`.
    spec: String,
    /// The help text, its lines joined.
    help: String,
}

impl Entry {
    fn long(&self) -> Option<&str> {
        let start = self.spec.find("--")?;
        let rest = &self.spec[start + 2..];
        Some(rest.split([' ', '=', ',']).next().unwrap_or(rest))
    }

    fn value_name(&self) -> Option<&str> {
        let start = self.spec.find('<')?;
        let end = self.spec[start..].find('>')? + start;
        Some(&self.spec[start + 1..end])
    }

    /// The help without clap's annotations (`[default: …]`, `[aliases: …]`).
    fn plain_help(&self) -> String {
        let mut s = self.help.clone();
        for tag in ["[default: ", "[aliases: ", "[possible values: "] {
            while let Some(i) = s.find(tag) {
                let end = s[i..].find(']').map_or(s.len(), |e| i + e + 1);
                s.replace_range(i..end, "");
            }
        }
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The first clause of the help, normalized: what the flag means. A `.` ends it only as
    /// a full stop (`. `), not inside `llama.cpp` or `docs/fleet.md`.
    fn meaning(&self) -> String {
        let plain = format!("{} ", self.plain_help().to_lowercase());
        let end = [plain.find(". "), plain.find([',', ':', ';', '('])]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(plain.len());
        plain[..end].trim().to_owned()
    }
}

/// One `--help` page, parsed.
#[derive(Debug, Default)]
struct Page {
    usage: String,
    options: Vec<Entry>,
    arguments: Vec<Entry>,
    subcommands: Vec<(String, String)>,
    examples: Vec<String>,
}

fn parse(help: &str) -> Page {
    let mut page = Page::default();
    let mut section = String::new();
    for line in help.lines() {
        if let Some(u) = line.strip_prefix("Usage: ") {
            page.usage = u.to_owned();
            section.clear();
            continue;
        }
        if !line.starts_with(' ') && line.trim_end().ends_with(':') {
            section = line.trim_end().trim_end_matches(':').to_owned();
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        match section.as_str() {
            "Commands" if indent == 2 => {
                let (name, about) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
                page.subcommands
                    .push((name.to_owned(), about.trim().to_owned()));
            }
            "Examples" => page.examples.push(trimmed.to_owned()),
            "Options" | "Arguments" => {
                let starts_entry = indent <= 6
                    && (trimmed.starts_with('-')
                        || trimmed.starts_with('<')
                        || trimmed.starts_with('['));
                let list = if section == "Options" {
                    &mut page.options
                } else {
                    &mut page.arguments
                };
                if starts_entry {
                    let (spec, help) = trimmed.split_once("  ").unwrap_or((trimmed, ""));
                    list.push(Entry {
                        spec: spec.trim().to_owned(),
                        help: help.trim().to_owned(),
                    });
                } else if let Some(last) = list.last_mut() {
                    last.help.push(' ');
                    last.help.push_str(trimmed);
                }
            }
            _ => {}
        }
    }
    page
}

/// `bakeoff PATH… --help` as the binary prints it: the help clap renders for that parse.
fn help_page(path: &[String]) -> String {
    let args = std::iter::once("bakeoff")
        .chain(path.iter().map(String::as_str))
        .chain(["--help"]);
    match bakeoff_flags::cli::parse_from(args) {
        Err(e) if e.kind() == ErrorKind::DisplayHelp => e.render().to_string(),
        Err(e) => panic!("{path:?} --help: {e}"),
        Ok(_) => panic!("{path:?} --help parsed as a command"),
    }
}

/// Every page: the subcommand path and its parsed help.
fn walk() -> Vec<(Vec<String>, Page)> {
    let mut pages = Vec::new();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = todo.pop() {
        let page = parse(&help_page(&path));
        for (name, _) in &page.subcommands {
            if name != "help" {
                let mut sub = path.clone();
                sub.push(name.clone());
                todo.push(sub);
            }
        }
        pages.push((path, page));
    }
    pages.sort_by(|a, b| a.0.cmp(&b.0));
    pages
}

#[test]
fn every_subcommand_help_is_consistent() {
    let pages = walk();
    let leaves = pages
        .iter()
        .filter(|(_, p)| p.subcommands.is_empty())
        .count();
    // The walk found the tree: eval, seat, campaign, bench, audit and log have subcommands.
    assert!(leaves >= 20, "only {leaves} leaf subcommands found");
    let mut problems = Vec::new();
    // Long flag → meaning → where it was seen.
    let mut meanings: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (path, page) in &pages {
        let cmd = format!("bakeoff {}", path.join(" ")).trim().to_owned();
        for (name, about) in &page.subcommands {
            if about.is_empty() {
                problems.push(format!("{cmd}: subcommand {name} has no description"));
            }
        }
        for e in &page.arguments {
            if e.plain_help().is_empty() {
                problems.push(format!("{cmd}: argument {} has no help", e.spec));
            }
        }
        for e in &page.options {
            let plain = e.plain_help();
            if plain.is_empty() {
                problems.push(format!("{cmd}: option {} has no help", e.spec));
                continue;
            }
            let Some(long) = e.long() else { continue };
            if let Some(value) = e.value_name() {
                let lower = e.help.to_lowercase();
                let required = page.usage.contains(&format!("--{long} <"))
                    && !page.usage.contains(&format!("[--{long} <"));
                let shown = e.help.contains("[default: ")
                    || lower.contains("default:")
                    || lower.contains("optional")
                    || lower.contains("repeatable")
                    || lower.contains("required")
                    || required;
                if !shown {
                    problems.push(format!(
                        "{cmd}: {} shows no default (and does not say optional, repeatable or required): {plain}",
                        e.spec
                    ));
                }
                if value.eq_ignore_ascii_case(&long.replace('-', "_"))
                    && !OWN_NAME_OK.contains(&long)
                {
                    problems.push(format!(
                        "{cmd}: --{long} <{value}>: the value name repeats the flag; say what it holds (DIR, N, SECS, …)"
                    ));
                }
            }
            meanings
                .entry(long.to_owned())
                .or_default()
                .entry(e.meaning())
                .or_default()
                .push(cmd.clone());
        }
        if page.subcommands.is_empty() {
            if page.examples.is_empty() {
                problems.push(format!("{cmd}: no Examples: section"));
            }
            for ex in &page.examples {
                if !ex.starts_with(&format!("{cmd} ")) && ex != &cmd {
                    problems.push(format!("{cmd}: example is not a {cmd} command: {ex}"));
                }
            }
        }
    }
    for (long, by_meaning) in &meanings {
        if by_meaning.len() > 1 && !MEANING_ALLOWLIST.iter().any(|(f, _)| f == long) {
            let detail: Vec<String> = by_meaning
                .iter()
                .map(|(m, cmds)| format!("    {m:?} in {}", cmds.join(", ")))
                .collect();
            problems.push(format!(
                "--{long} has {} meanings:\n{}",
                by_meaning.len(),
                detail.join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The names the issue called out have one meaning and one default each.
    for flag in [
        "ready-timeout",
        "fleet",
        "out",
        "ctx",
        "parallel",
        "json",
        "confirm",
    ] {
        assert!(meanings.contains_key(flag), "--{flag} not seen");
    }
}

/// The walk's own checks, on pages made to break each rule.
#[test]
fn the_checker_catches_what_it_should() {
    let help = "\
Usage: bakeoff thing [OPTIONS] --reason <TEXT>

Arguments:
  [SEAT]...  Seats to act on, by name

Options:
      --count <COUNT>
          How many

      --out <DIR>
          Results directory, relative to the working directory

          [default: results]

      --reason <TEXT>
          Why
  -h, --help
          Print help (see a summary with '-h')

Examples:
  bakeoff thing --out results
";
    let p = parse(help);
    assert_eq!(p.arguments.len(), 1);
    assert_eq!(p.options.len(), 4, "{p:?}");
    let count = &p.options[0];
    assert_eq!(count.long(), Some("count"));
    assert_eq!(count.value_name(), Some("COUNT"));
    assert!(!count.help.contains("default"));
    let out = &p.options[1];
    assert_eq!(out.meaning(), "results directory");
    assert!(out.help.contains("[default: results]"));
    assert!(p.usage.contains("--reason <"));
    assert_eq!(p.options[3].meaning(), "print help");
    let ctx = Entry {
        spec: "--ctx <N>".into(),
        help: "llama.cpp `-c`, the context size. More [default: 8192]".into(),
    };
    assert_eq!(ctx.meaning(), "llama.cpp `-c`");
    assert_eq!(p.examples, vec!["bakeoff thing --out results"]);
    // The one-line layout clap uses when no help is long.
    let short = parse(
        "Options:\n      --tail <N>  How many of the log's last lines [default: 100]\n  -h, --help      Print help\n",
    );
    assert_eq!(short.options[0].value_name(), Some("N"));
    assert_eq!(
        short.options[0].plain_help(),
        "How many of the log's last lines"
    );
    let distinct: BTreeSet<String> = short.options.iter().map(Entry::meaning).collect();
    assert_eq!(distinct.len(), 2);
}
