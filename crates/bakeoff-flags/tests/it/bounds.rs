//! Every numeric flag of every subcommand has a documented range, and a value outside it (or
//! not a number) is refused as it is parsed, with one line naming the flag and the fix: the
//! walk finds the flags in clap's own tree, so a flag added later is walked too. The binary
//! prints that line and exits 2 for every refusal clap makes (its own tests pin the code).

use bakeoff_flags::cli::bounds::{documented_range, is_numeric};
use bakeoff_flags::cli::{command, refusal::one_line_refusal};
use clap::error::ErrorKind;
use clap::{Arg, Command};

/// The values every numeric flag is tried with.
const PROBES: [&str; 4] = ["0", "-1", "NaN", "4000000000"];

/// Each subcommand with its path from the top (`["bench", "run"]`).
fn subcommands(cmd: &Command, path: Vec<String>, out: &mut Vec<(Vec<String>, Command)>) {
    out.push((path.clone(), cmd.clone()));
    for sub in cmd.get_subcommands() {
        let mut p = path.clone();
        p.push(sub.get_name().to_string());
        subcommands(sub, p, out);
    }
}

/// A value clap accepts for a required argument, so the command line reaches the flag tried:
/// a choice's first value, a number's lower end, else any text.
fn filler(a: &Arg) -> String {
    if let Some(r) = documented_range(a) {
        return r.min;
    }
    a.get_possible_values()
        .first()
        .map(|p| p.get_name().to_string())
        .unwrap_or_else(|| "x".to_string())
}

/// `bakeoff PATH… REQUIRED… --FLAG VALUE`.
fn command_line(path: &[String], cmd: &Command, flag: &Arg, value: &str) -> Vec<String> {
    let mut argv = vec!["bakeoff".to_string()];
    argv.extend(path.iter().cloned());
    for a in cmd.get_arguments() {
        if !a.is_required_set() || a.get_id() == flag.get_id() {
            continue;
        }
        match a.get_long() {
            Some(long) => {
                argv.push(format!("--{long}"));
                argv.push(filler(a));
            }
            None => argv.push(filler(a)),
        }
    }
    argv.push(format!(
        "--{}",
        flag.get_long()
            .unwrap_or_else(|| panic!("{:?}", flag.get_id()))
    ));
    argv.push(value.to_string());
    argv
}

fn is_float(a: &Arg) -> bool {
    let id = a.get_value_parser().type_id();
    id == std::any::TypeId::of::<f64>() || id == std::any::TypeId::of::<f32>()
}

#[test]
fn every_numeric_flag_refuses_values_outside_its_documented_range_with_one_line() {
    let root = command();
    let mut all = Vec::new();
    subcommands(&root, Vec::new(), &mut all);
    let mut walked = 0;
    let mut failures = Vec::new();
    for (path, cmd) in &all {
        for flag in cmd.get_arguments().filter(|a| is_numeric(a)) {
            walked += 1;
            let name = format!("{} --{}", path.join(" "), flag.get_id());
            let Some(range) = documented_range(flag) else {
                failures.push(format!("{name}: no [range: A–B] in its help"));
                continue;
            };
            for v in PROBES {
                let argv = command_line(path, cmd, flag, v);
                match command().try_get_matches_from(&argv) {
                    Err(e) => {
                        let line = one_line_refusal(&e).unwrap_or_default();
                        let long = format!("--{}", flag.get_long().unwrap_or_default());
                        if e.kind() != ErrorKind::ValueValidation
                            || line.contains('\n')
                            || !line.contains(&long)
                            || !line.contains("fix:")
                        {
                            failures.push(format!("{name} {v}: {:?}: {line}", e.kind()));
                        }
                    }
                    Ok(_) => {
                        let inside = if is_float(flag) {
                            range.holds_real(v)
                        } else {
                            range.holds_whole(v)
                        };
                        if !inside {
                            failures.push(format!("{name} {v}: accepted outside {range}"));
                        }
                    }
                }
            }
        }
    }
    assert!(walked > 70, "only {walked} numeric flags found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn clap_s_refusals_of_numbers_name_the_flag_typed_and_the_fix() {
    let line = |args: &[&str]| {
        let argv = std::iter::once("bakeoff").chain(args.iter().copied());
        match command().try_get_matches_from(argv) {
            Ok(_) => panic!("{args:?} was accepted"),
            Err(e) => one_line_refusal(&e).unwrap_or_default(),
        }
    };
    assert_eq!(
        line(&["eval", "run", "--ready-timeout", "-1"]),
        "error: --ready-timeout -1: must be a whole number from 1 to 86400; fix: e.g. --ready-timeout 60"
    );
    assert_eq!(
        line(&["eval", "run", "--ctx", "0"]),
        "error: --ctx 0: must be a whole number from 1 to 1048576; fix: e.g. --ctx 8192"
    );
    assert_eq!(
        line(&[
            "seat",
            "up",
            "--fleet",
            "f.toml",
            "--all",
            "--silence-timeout",
            "0"
        ]),
        "error: --silence-timeout 0: must be a number from 1 to 86400; fix: e.g. --silence-timeout 300"
    );
    assert_eq!(
        line(&["bench", "run", "--concurrency", "1,,2"]),
        "error: --concurrency 1,,2: each item must be a number from 1 to 4096, comma-separated; fix: e.g. --concurrency 1,2,4,8,16,32,64"
    );
    assert_eq!(
        line(&["bench", "run", "--prompt-tokens", "4000000000"]),
        "error: --prompt-tokens 4000000000: must be N or A-B, whole numbers from 1 to 1048576, or @file.jsonl; fix: e.g. --prompt-tokens 128"
    );
    assert!(line(&["log", "archive", "--age", "NaN"]).starts_with("error: --age NaN: "));
    assert!(line(&["eval", "run", "--limit=-1"]).starts_with("error: --limit -1: "));
    assert!(line(&["eval", "run", "--seed", "NaN"]).starts_with("error: --seed NaN: "));
}

#[test]
fn the_help_shows_each_range() {
    let mut root = command();
    let help = root
        .find_subcommand_mut("bench")
        .and_then(|b| b.find_subcommand_mut("run"))
        .map(|r| r.render_long_help().to_string())
        .unwrap_or_default();
    assert!(help.contains("[range: 1–4096]"), "{help}");
    assert!(help.contains("[range: 0–2]"), "{help}");
}
