//! The command line as a library: a command line parsed by clap and checked by `validate`,
//! without spawning the binary (the binary's own tests cover the exit codes these become and
//! the one `error: …` line it prints). The refusals of each area sit in their own module.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bench_refusals;
mod bounds;
mod docs;
mod eval_refusals;
mod help;
mod plan_refusals;
mod refusals;
mod seat_refusals;
mod valid;

use bakeoff_flags::FlagError;
use bakeoff_flags::cli::{BenchCommand, Command, EvalCommand, LogCommand, SeatCommand};

/// Parses `bakeoff ARGS…` (clap must accept it).
pub fn parse(args: &[&str]) -> Command {
    match bakeoff_flags::cli::parse_from(std::iter::once("bakeoff").chain(args.iter().copied())) {
        Ok(cli) => cli.command,
        Err(e) => panic!("clap refused {args:?}: {e}"),
    }
}

/// Parses and validates the commands these tests use; `Ok(())` when the checks accept it.
pub fn check(args: &[&str]) -> Result<(), FlagError> {
    match parse(args) {
        Command::Bench(BenchCommand::Run(a)) => a.validate().map(drop),
        Command::Bench(BenchCommand::Calibrate(a)) => a.validate().map(drop),
        Command::Eval(EvalCommand::Run(a)) => a.validate().map(drop),
        Command::Eval(EvalCommand::Preflight(a)) => a.validate().map(drop),
        Command::Eval(EvalCommand::Damage(a)) => a.validate().map(drop),
        Command::Eval(EvalCommand::Adapter(a)) => a.validate().map(drop),
        Command::Verdict(a) => a.validate().map(drop),
        Command::Audit(bakeoff_flags::cli::AuditCommand::Checkpoint(a)) => a.validate().map(drop),
        Command::Log(LogCommand::Add(a)) => a.validate().map(drop),
        Command::Plan(a) => a.validate().map(drop),
        Command::Kv(a) => a.validate().map(drop),
        Command::Seat(SeatCommand::Up(a) | SeatCommand::Restart(a)) => a.validate().map(drop),
        Command::Seat(SeatCommand::Down(a)) => a.validate().map(drop),
        Command::Seat(SeatCommand::Watch(a)) => a.validate().map(drop),
        Command::Seat(SeatCommand::Monitor(a)) => a.validate().map(drop),
        other => panic!("no validation wired in this test for {other:?}"),
    }
}

/// The one-line message a refused command line gives.
pub fn refusal(args: &[&str]) -> String {
    match check(args) {
        Ok(()) => panic!("{args:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

/// The one line clap's refusal of `bakeoff ARGS…` prints (it must refuse).
pub fn clap_refusal(args: &[&str]) -> String {
    match bakeoff_flags::cli::parse_from(std::iter::once("bakeoff").chain(args.iter().copied())) {
        Ok(_) => panic!("clap accepted {args:?}"),
        Err(e) => bakeoff_flags::cli::refusal::one_line_refusal(&e).unwrap_or_default(),
    }
}

/// The line the binary prints on stderr for a refused `bakeoff ARGS…`, whoever refuses it:
/// clap's one line as the value is parsed, else `error: ` and the check's message.
pub fn refused(args: &[&str]) -> String {
    match bakeoff_flags::cli::parse_from(std::iter::once("bakeoff").chain(args.iter().copied())) {
        Err(e) => match bakeoff_flags::cli::refusal::one_line_refusal(&e) {
            Some(line) => line,
            None => panic!("clap refused {args:?} without a one-line refusal: {e}"),
        },
        Ok(_) => format!("error: {}", refusal(args)),
    }
}

/// [`refused`], checked to be one line that names `want`.
pub fn assert_refused(args: &[&str], want: &str) {
    let line = refused(args);
    assert_eq!(line.trim().lines().count(), 1, "{args:?}: {line}");
    assert!(line.starts_with("error: "), "{args:?}: {line}");
    assert!(line.contains(want), "{args:?}: {want:?} not in {line}");
}

/// `bakeoff ARGS… EXTRA…`.
pub fn with(args: &[&str], extra: &[&str]) -> Vec<String> {
    args.iter().chain(extra).map(|a| (*a).to_owned()).collect()
}

/// `&[String]` as `&[&str]`.
pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}
