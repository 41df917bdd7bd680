//! The command line as a library: a command line parsed by clap and checked by `validate`,
//! without spawning the binary (the binary's own tests cover the exit codes these become).

mod bounds;
mod docs;
mod refusals;
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
        Command::Verdict(a) => a.validate().map(drop),
        Command::Audit(bakeoff_flags::cli::AuditCommand::Checkpoint(a)) => a.validate().map(drop),
        Command::Log(LogCommand::Add(a)) => a.validate().map(drop),
        Command::Plan(a) => a.validate().map(drop),
        Command::Seat(SeatCommand::Up(a) | SeatCommand::Restart(a)) => a.validate().map(drop),
        Command::Seat(SeatCommand::Down(a)) => a.validate().map(drop),
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
