//! `bakeoff`: the binary only wires the library crates together (docs/architecture.md).

// Standard output and standard error that never panic, named for where they write as ripgrep
// names its `eprintln_locked!`: every command prints through [`output`] with `stdout!`,
// `stdoutln!`, `stderr!` and `stderrln!` (macro_rules scoping: defined here, before the modules
// that use them). `bakeoff schema | head -1` closes the pipe early, and std's `println!` would
// panic on the write (exit 101). Here a closed standard output (EPIPE) is a quiet end of
// output: nothing more is printed, the command runs to its end (artifacts written, servers
// stopped) and the exit code is the command's own. Any other write error is reported once at
// the end (exit 3). A closed standard error is ignored. std's macros are refused by the lints
// below, so none slips back in.
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[allow(unused_macros)]
macro_rules! stdout {
    ($($arg:tt)*) => { $crate::output::out(format_args!($($arg)*)) };
}
#[allow(unused_macros)]
macro_rules! stdoutln {
    () => { $crate::output::out(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::out(format_args!("{}\n", format_args!($($arg)*))) };
}
#[allow(unused_macros)]
macro_rules! stderr {
    ($($arg:tt)*) => { $crate::output::err(format_args!($($arg)*)) };
}
#[allow(unused_macros)]
macro_rules! stderrln {
    () => { $crate::output::err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::output::err(format_args!("{}\n", format_args!($($arg)*))) };
}

mod commands;
mod exit;

use bakeoff_flags::cli;

fn main() -> std::process::ExitCode {
    let cli = match cli::parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => match cli::refusal::one_line_refusal(&e) {
            Some(line) => {
                stderrln!("{}", bakeoff_report::escape::for_terminal(&line, 2000));
                return std::process::ExitCode::from(2);
            }
            None => e.exit(),
        },
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let e = exit::Error::Runtime(e);
            stderrln!("error: {e}");
            return e.exit();
        }
    };
    let code = match rt.block_on(commands::run(cli)) {
        Ok(outcome) => outcome.code(),
        Err(e) => {
            // Messages can quote file contents and server replies: never let them drive the
            // terminal.
            stderrln!(
                "error: {}",
                bakeoff_report::escape::for_terminal(&e.to_string(), 2000)
            );
            e.exit_code()
        }
    };
    match output::finish() {
        Some(e) if code == exit::exit_codes::OK => {
            stderrln!("error: cannot write to standard output: {e}");
            exit::to_exit_code(exit::exit_codes::IO)
        }
        _ => exit::to_exit_code(code),
    }
}

/// The writers behind the print macros above.
mod output {
    use std::io::Write;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// Set at the first failed write: nothing more is written.
    static CLOSED: AtomicBool = AtomicBool::new(false);
    /// The first write error that was not a closed pipe.
    static FAILED: Mutex<Option<String>> = Mutex::new(None);

    pub fn out(args: std::fmt::Arguments<'_>) {
        if CLOSED.load(Ordering::Relaxed) {
            return;
        }
        if let Err(e) = std::io::stdout().lock().write_fmt(args) {
            lost(&e);
        }
    }

    /// Standard error carries human text only (errors, refusals, notes; never JSON): every
    /// line of it fitted to `COLUMNS` or the terminal, unchanged on a log
    /// (`bakeoff_term::for_stderr`).
    pub fn err(args: std::fmt::Arguments<'_>) {
        let text = bakeoff_report::table::for_stderr(&args.to_string());
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    fn lost(e: &std::io::Error) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe
            && let Ok(mut f) = FAILED.lock()
            && f.is_none()
        {
            *f = Some(e.to_string());
        }
    }

    /// Flush what is buffered; the write error that lost output, if any (a closed pipe is
    /// not one: the reader chose to stop reading).
    pub fn finish() -> Option<String> {
        if !CLOSED.load(Ordering::Relaxed)
            && let Err(e) = std::io::stdout().lock().flush()
        {
            lost(&e);
        }
        FAILED.lock().ok().and_then(|f| f.clone())
    }
}
