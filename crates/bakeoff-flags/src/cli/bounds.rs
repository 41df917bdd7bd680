//! Every numeric flag's range, written once: in its help, as `[range: A–B]` (both ends
//! included), which `--help` shows and these parsers enforce, so the documented range and the
//! checked range cannot drift. [`command`] is the command line the binary parses: clap's own
//! tree with, on each flag whose help names a range, a parser that refuses a value outside it
//! (or not a number: `NaN`, `inf`, `1,,2`) with one line naming the flag and the fix, and that
//! takes `-1` as a value to refuse rather than an unknown flag. A flag of a numeric type without
//! a range keeps clap's parser, whose refusals carry no fix: the test that walks every numeric
//! flag fails on it.
//!
//! The shapes: a whole number (an integer field), a number (a float field), a comma-separated
//! `LIST` of numbers (each in range, none empty), and a length `SPEC` (`N`, `A-B` with each end
//! in range, or `@file.jsonl`, read later).

use std::any::TypeId;
use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Arg, Command, CommandFactory, FromArgMatches};

use super::Cli;

/// The command line with every documented range enforced (see the module's text).
pub fn command() -> Command {
    bound(Cli::command())
}

/// Parse a command line (the program's name first) as the binary does.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut matches = command().try_get_matches_from(args)?;
    Cli::from_arg_matches_mut(&mut matches)
}

fn bound(cmd: Command) -> Command {
    cmd.mut_args(bound_arg).mut_subcommands(bound)
}

fn bound_arg(a: Arg) -> Arg {
    let Some(range) = documented_range(&a) else {
        return a;
    };
    let id = a.get_value_parser().type_id();
    macro_rules! typed {
        ($($t:ty => $shape:expr),* $(,)?) => {
            $(if id == TypeId::of::<$t>() {
                return a
                    .value_parser(Bounded::<$t>::new(range, $shape))
                    .allow_negative_numbers(true);
            })*
        };
    }
    typed!(
        u8 => Shape::Whole, u16 => Shape::Whole, u32 => Shape::Whole, u64 => Shape::Whole,
        usize => Shape::Whole, i32 => Shape::Whole, i64 => Shape::Whole,
        f32 => Shape::Real, f64 => Shape::Real,
    );
    if id == TypeId::of::<String>() {
        let shape = match a
            .get_value_names()
            .and_then(|n| n.first())
            .map(|n| n.as_str())
        {
            Some("LIST") => Shape::List,
            Some("SPEC") => Shape::Spec,
            _ => return a,
        };
        return a
            .value_parser(Bounded::<String>::new(range, shape))
            .allow_hyphen_values(true);
    }
    a
}

/// Whether the flag takes a number: a numeric type, or a `LIST`/`SPEC` of numbers whose help
/// names a range. The walk over every flag uses it to find them.
pub fn is_numeric(a: &Arg) -> bool {
    let id = a.get_value_parser().type_id();
    let numeric = [
        TypeId::of::<u8>(),
        TypeId::of::<u16>(),
        TypeId::of::<u32>(),
        TypeId::of::<u64>(),
        TypeId::of::<usize>(),
        TypeId::of::<i8>(),
        TypeId::of::<i16>(),
        TypeId::of::<i32>(),
        TypeId::of::<i64>(),
        TypeId::of::<isize>(),
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
    ];
    numeric.iter().any(|t| id == *t)
        || (id == TypeId::of::<String>()
            && documented_range(a).is_some()
            && matches!(
                a.get_value_names()
                    .and_then(|n| n.first())
                    .map(|n| n.as_str()),
                Some("LIST" | "SPEC")
            ))
}

/// The range a flag's help documents, `[range: A–B]`, both ends included.
pub fn documented_range(a: &Arg) -> Option<Range> {
    [a.get_help(), a.get_long_help()]
        .into_iter()
        .flatten()
        .find_map(|h| Range::in_help(&h.to_string()))
}

/// A flag's documented range; the ends as written (a seed's end does not fit an `f64`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    pub min: String,
    pub max: String,
}

impl Range {
    const MARK: &'static str = "[range: ";

    /// The first `[range: A–B]` in a help text.
    pub fn in_help(help: &str) -> Option<Range> {
        let rest = &help[help.find(Self::MARK)? + Self::MARK.len()..];
        let inner = &rest[..rest.find(']')?];
        let (min, max) = inner.split_once('–')?;
        let r = Range {
            min: min.trim().to_string(),
            max: max.trim().to_string(),
        };
        (r.min.parse::<f64>().is_ok() && r.max.parse::<f64>().is_ok()).then_some(r)
    }

    /// Whether `v`, written as a whole number, lies in the range.
    pub fn holds_whole(&self, v: &str) -> bool {
        match (
            v.trim().parse::<i128>(),
            self.min.parse::<i128>(),
            self.max.parse::<i128>(),
        ) {
            (Ok(v), Ok(lo), Ok(hi)) => lo <= v && v <= hi,
            _ => false,
        }
    }

    /// Whether `v`, written as a number, is finite and lies in the range.
    pub fn holds_real(&self, v: &str) -> bool {
        match (
            v.trim().parse::<f64>(),
            self.min.parse::<f64>(),
            self.max.parse::<f64>(),
        ) {
            (Ok(v), Ok(lo), Ok(hi)) => v.is_finite() && lo <= v && v <= hi,
            _ => false,
        }
    }
}

impl std::fmt::Display for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} to {}", self.min, self.max)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Whole,
    Real,
    List,
    Spec,
}

/// The parser installed on a flag with a documented range; `T` is the field's own type.
#[derive(Clone)]
struct Bounded<T> {
    range: Range,
    shape: Shape,
    _value: PhantomData<fn() -> T>,
}

impl<T> Bounded<T> {
    fn new(range: Range, shape: Shape) -> Self {
        Self {
            range,
            shape,
            _value: PhantomData,
        }
    }

    /// Whether `text` is a value of this flag's shape inside its range.
    fn holds(&self, text: &str) -> bool {
        match self.shape {
            Shape::Whole => self.range.holds_whole(text),
            Shape::Real => self.range.holds_real(text),
            Shape::List => text.split(',').all(|p| self.range.holds_real(p)),
            Shape::Spec => {
                let t = text.trim();
                if t.starts_with('@') {
                    return t.len() > 1;
                }
                match t.split_once('-') {
                    Some((a, b)) => self.range.holds_whole(a) && self.range.holds_whole(b),
                    None => self.range.holds_whole(t),
                }
            }
        }
    }

    fn refusal(&self, cmd: &Command, arg: Option<&Arg>, text: &str) -> clap::Error {
        let flag = arg
            .and_then(Arg::get_long)
            .map(|l| format!("--{l}"))
            .unwrap_or_else(|| "the value".to_string());
        let example = arg
            .and_then(|a| a.get_default_values().first())
            .map(|d| d.to_string_lossy().into_owned())
            .filter(|d| self.holds(d))
            .unwrap_or_else(|| self.range.min.clone());
        let r = &self.range;
        let what = match self.shape {
            Shape::Whole => format!("must be a whole number from {r}"),
            Shape::Real => format!("must be a number from {r}"),
            Shape::List => format!("each item must be a number from {r}, comma-separated"),
            Shape::Spec => {
                format!("must be N or A-B, whole numbers from {r}, or @file.jsonl")
            }
        };
        let msg = format!("{flag} {text}: {what}; fix: e.g. {flag} {example}");
        clap::Error::raw(ErrorKind::ValueValidation, msg).with_cmd(cmd)
    }
}

/// How a field's type is read from a value already known to be in range.
trait Read: Sized {
    fn read(text: &str) -> Option<Self>;
}

macro_rules! read_by_fromstr {
    ($($t:ty),*) => {
        $(impl Read for $t {
            fn read(text: &str) -> Option<Self> {
                text.trim().parse().ok()
            }
        })*
    };
}
read_by_fromstr!(u8, u16, u32, u64, usize, i32, i64, f32, f64);

impl Read for String {
    fn read(text: &str) -> Option<Self> {
        Some(text.to_string())
    }
}

impl<T: Read + Clone + Send + Sync + 'static> TypedValueParser for Bounded<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &Command, arg: Option<&Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        if !self.holds(&text) {
            return Err(self.refusal(cmd, arg, &text));
        }
        T::read(&text).ok_or_else(|| self.refusal(cmd, arg, &text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_read_from_the_help() {
        assert_eq!(
            Range::in_help("Requests per step [range: 1–1000000]."),
            Some(Range {
                min: "1".into(),
                max: "1000000".into()
            })
        );
        assert_eq!(Range::in_help("no range here"), None);
        let seed = Range::in_help("[range: 0–18446744073709551615]");
        assert!(seed.is_some_and(|r| r.holds_whole("18446744073709551615")));
    }

    #[test]
    fn a_value_outside_or_not_a_number_is_refused() {
        let r = Range {
            min: "1".into(),
            max: "4096".into(),
        };
        for v in ["0", "-1", "NaN", "4000000000", "1.5", ""] {
            assert!(!r.holds_whole(v), "{v}");
        }
        assert!(r.holds_whole("4096"));
        for v in ["NaN", "inf", "-1", "5000"] {
            assert!(!r.holds_real(v), "{v}");
        }
        let list = Bounded::<String>::new(r.clone(), Shape::List);
        assert!(list.holds("1,2,4"));
        assert!(!list.holds("1,,2"));
        let spec = Bounded::<String>::new(r, Shape::Spec);
        assert!(spec.holds("64-256") && spec.holds("128") && spec.holds("@x.jsonl"));
        assert!(!spec.holds("-1") && !spec.holds("1-5000") && !spec.holds("@"));
    }
}
