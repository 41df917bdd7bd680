//! clap's refusal of a command line, as one line: bad input gets one line naming the thing and
//! the fix (README "Exit codes and environment"), whether the refusal is clap's (an unknown flag, a value not
//! among a flag's choices) or a config check's. clap renders several lines — the error, the
//! possible values or a tip, a usage line, "For more information, try '--help'" — so the error
//! and its help (the values, the tip) are joined and the usage boilerplate dropped. `--help`
//! and `--version` print as clap prints them.

use clap::error::ErrorKind;

/// The one line to print on stderr for a refusal; `None` for help and version (and the help
/// shown for a missing subcommand), which clap prints itself, where and with the exit code it
/// chooses.
pub fn one_line_refusal(e: &clap::Error) -> Option<String> {
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return None;
    }
    Some(one_line(&e.render().to_string()))
}

/// clap's rendered refusal on one line: its error and the lines that help (possible values, a
/// tip), without the usage line and the pointer to `--help`.
fn one_line(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .collect();
    let mut line = String::new();
    for (k, p) in parts.iter().enumerate() {
        if k > 0 {
            // `[possible values: …]` reads as part of the error; a tip as its own clause.
            line.push_str(if p.starts_with('[') { " " } else { "; " });
        }
        line.push_str(p);
    }
    if line.starts_with("error:") {
        line
    } else {
        format!("error: {line}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_value_keeps_its_choices_on_one_line() {
        let clap_text = "error: invalid value 'maybe' for '--thinking <MODE>'\n  [possible values: on, off, default]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(clap_text),
            "error: invalid value 'maybe' for '--thinking <MODE>' [possible values: on, off, default]"
        );
    }

    #[test]
    fn an_unknown_flag_keeps_its_tip_and_drops_the_usage() {
        let clap_text = "error: unexpected argument '--modle' found\n\n  tip: a similar argument exists: '--model'\n\nUsage: bakeoff eval run --endpoint <URL> --model <ID>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(clap_text),
            "error: unexpected argument '--modle' found; tip: a similar argument exists: '--model'"
        );
    }
}
