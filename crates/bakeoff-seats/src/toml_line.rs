//! A TOML file's parse error as one line that names the key and the fix, for the fleet file
//! and the campaign file alike. The `toml` crate renders its error as a diagram over several
//! lines (the line quoted, a caret under the value); the one-line rule wants the line number,
//! the key (and its table), what is wrong and the fix, and the quoted value may be a secret, so
//! the text is redacted.

use std::ops::Range;

/// `line 4, [[seat]] port: invalid value: integer `70000`, expected u16; fix: a port from 1
/// to 65535, e.g. port = 8000`.
pub fn one_line(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim().replace('\n', " ");
    let place = e.span().map(|span| Place::of(text, span));
    let key = place.as_ref().and_then(|p| p.key.clone());
    let fix = fix(key.as_deref(), &message);
    let at = match &place {
        Some(Place {
            line,
            table,
            key: Some(k),
        }) => match table {
            Some(t) => format!("line {line}, {t} {k}: "),
            None => format!("line {line}, {k}: "),
        },
        Some(Place { line, .. }) => format!("line {line}: "),
        None => String::new(),
    };
    crate::redact::text(&format!("{at}{message}; fix: {fix}"))
}

/// Where an error's span starts: its 1-based line, the key written on that line and the
/// table header above it.
struct Place {
    line: usize,
    key: Option<String>,
    table: Option<String>,
}

impl Place {
    fn of(text: &str, span: Range<usize>) -> Place {
        let start = span.start.min(text.len());
        let before = text.get(..start).unwrap_or("");
        let line_no = before.matches('\n').count() + 1;
        let line = text.lines().nth(line_no - 1).unwrap_or("");
        let key = line
            .split_once('=')
            .map(|(k, _)| k.trim().trim_matches('"').to_string())
            .filter(|k| !k.is_empty() && !k.starts_with('['));
        let table = before
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with('['))
            .map(|l| l.split('#').next().unwrap_or(l).trim().to_string());
        Place {
            line: line_no,
            key,
            table,
        }
    }
}

/// The fix for a key's value of the wrong type or range, or an unknown key.
fn fix(key: Option<&str>, message: &str) -> String {
    let is_int = |t: &str| message.contains(&format!("expected {t}"));
    match key {
        Some("port") if message.contains("expected") => {
            return "a port from 1 to 65535, e.g. port = 8000".to_string();
        }
        Some("limit") if message.contains("expected") => {
            return "a whole number of 1 or more, e.g. limit = 20".to_string();
        }
        _ => {}
    }
    let k = key.unwrap_or("the value");
    let whole = [
        ("u8", u64::from(u8::MAX)),
        ("u16", u64::from(u16::MAX)),
        ("u32", u64::from(u32::MAX)),
        ("u64", u64::MAX),
        ("usize", u64::MAX),
    ];
    if let Some((_, max)) = whole.iter().find(|(t, _)| is_int(t)) {
        return format!("give {k} a whole number from 0 to {max}");
    }
    if message.contains("unknown field") || message.contains("unknown variant") {
        return "use one of the names it lists (docs/fleet.md, docs/campaign.md)".to_string();
    }
    if message.contains("missing field") {
        return "add the field to that table".to_string();
    }
    if message.contains("invalid type") {
        return format!("give {k} a value of the type it expects");
    }
    "correct the TOML on that line (quotes around strings, one key = value per line)".to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Seat {
        name: String,
        port: u16,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct File {
        seat: Vec<Seat>,
    }

    #[test]
    fn a_value_out_of_its_type_names_the_line_the_key_and_the_fix() {
        let text = "[[seat]]\nname = \"a\"\nport = 70000\n";
        let e = toml::from_str::<File>(text).unwrap_err();
        let line = one_line(&e, text);
        assert!(!line.contains('\n') && !line.contains('^'), "{line}");
        assert!(line.starts_with("line 3, [[seat]] port: "), "{line}");
        assert!(
            line.ends_with("; fix: a port from 1 to 65535, e.g. port = 8000"),
            "{line}"
        );
    }

    #[test]
    fn a_syntax_error_is_one_line_with_its_line() {
        let text = "[[seat]]\nname = a\n";
        let e = toml::from_str::<File>(text).unwrap_err();
        let line = one_line(&e, text);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with("line 2, [[seat]] name: "), "{line}");
        assert!(line.contains("; fix: "), "{line}");
    }
}
