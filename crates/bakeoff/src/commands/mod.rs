//! One file per verb.

mod audit;
mod audit_cache;
mod audit_seat;
mod bench;
mod bench_compare;
mod campaign;
mod eval_adapter;
mod eval_compare;
mod eval_damage;
mod eval_preflight;
mod eval_run;
mod gateway;
mod log;
mod measuring;
mod plan;
mod report;
mod retract;
mod schema;
mod seat;
mod seat_export;
mod seat_monitor;
mod stop_signal;
mod verdict;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::{Cli, Command, EvalCommand};

/// Human text as it goes to standard output: its free-text lines (notes, conditions, flags,
/// findings, refusals) fitted to the terminal's width like the tables above them, wrapped
/// between words; unchanged on a pipe with no `COLUMNS` (`bakeoff_term::for_screen`).
/// Never for JSON.
fn screen(text: &str) -> String {
    bakeoff_report::table::for_screen(text)
}

/// Each verb converts its arguments once (`validate`, [`bakeoff_flags::config`]) and runs on the result.
pub async fn run(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Eval(EvalCommand::Preflight(a)) => eval_preflight::run(a.validate()?).await,
        Command::Bench(c) => bench::run(c).await,
        Command::Eval(EvalCommand::Run(a)) => eval_run::run((*a).validate()?).await,
        Command::Eval(EvalCommand::Compare(a)) => eval_compare::run(a.validate()),
        Command::Eval(EvalCommand::Adapter(a)) => eval_adapter::run(a.validate()?).await,
        Command::Eval(EvalCommand::Damage(a)) => eval_damage::run((*a).validate()?).await,
        Command::Report(a) => report::run(a.validate()?),
        Command::Verdict(a) => verdict::run(a.validate()?),
        Command::Retract(a) => retract::run(a.validate()?),
        Command::Log(c) => log::run(c),
        Command::Seat(c) => seat::run(c).await,
        Command::Campaign(c) => campaign::run(c).await,
        Command::Gateway(c) => gateway::run(c),
        Command::Plan(a) => plan::run(a.validate()?).await,
        Command::Kv(a) => plan::kv(a.validate()?),
        Command::Audit(c) => audit::run(c).await,
        Command::Schema(a) => schema::run(a),
    }
}
