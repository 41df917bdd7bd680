//! `bakeoff`: the binary only wires the library crates together (ARCHITECTURE.md).

mod cli;
mod commands;
mod exit;
mod local_default;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::Exit::Usage.into();
        }
    };
    match rt.block_on(commands::run(cli)) {
        Ok(code) => code.into(),
        Err(e) => {
            // Messages can quote file contents and server replies: never let them drive the
            // terminal.
            eprintln!(
                "error: {}",
                bakeoff_report::escape::for_terminal(&format!("{e:#}"), 2000)
            );
            e.exit().into()
        }
    }
}
