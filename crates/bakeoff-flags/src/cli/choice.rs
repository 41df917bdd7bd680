//! The parser of every fixed-choice flag: clap's own for the value enum, so `--help` and a
//! refusal list the values, after the forgiving reading each flag had when it was a string
//! (blanks around the value; for some, any case, or `_` and spaces for `-`), so that every
//! spelling accepted then still is.

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::ValueEnum;
use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};

/// How a value is read before it is matched against the enum's names and aliases.
#[derive(Debug, Clone, Copy)]
pub enum Reading {
    /// Blanks around it ignored.
    Trimmed,
    /// Trimmed, any case.
    AnyCase,
    /// Trimmed, any case, `_` or a space read as `-` (`--verdict "not enough evidence"`).
    Words,
}

impl Reading {
    fn apply(self, s: &str) -> String {
        let s = s.trim();
        match self {
            Reading::Trimmed => s.to_string(),
            Reading::AnyCase => s.to_ascii_lowercase(),
            Reading::Words => s.to_ascii_lowercase().replace([' ', '_'], "-"),
        }
    }
}

/// One value of `E`.
#[derive(Debug, Clone, Copy)]
pub struct Choice<E> {
    reading: Reading,
    enum_: PhantomData<E>,
}

pub fn choice<E>(reading: Reading) -> Choice<E> {
    Choice {
        reading,
        enum_: PhantomData,
    }
}

impl<E: ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for Choice<E> {
    type Value = E;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<E, clap::Error> {
        let clap_parser = EnumValueParser::<E>::new();
        match value.to_str().map(|s| self.reading.apply(s)) {
            // Refused: parsed again as given, so the error quotes what the operator typed.
            Some(read) => clap_parser
                .parse_ref(cmd, arg, OsStr::new(&read))
                .or_else(|_| clap_parser.parse_ref(cmd, arg, value)),
            None => clap_parser.parse_ref(cmd, arg, value),
        }
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            E::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// One item of a comma-separated list of `E`: a blank item (`--allow contaminated,`) is none,
/// as the lists always skipped them.
#[derive(Debug, Clone, Copy)]
pub struct Item<E>(Choice<E>);

pub fn item<E>(reading: Reading) -> Item<E> {
    Item(choice(reading))
}

impl<E: ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for Item<E> {
    type Value = Option<E>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Option<E>, clap::Error> {
        if value.to_str().is_some_and(|s| s.trim().is_empty()) {
            return Ok(None);
        }
        self.0.parse_ref(cmd, arg, value).map(Some)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// The name `--help` lists for `value`.
pub fn name_of<E: ValueEnum>(value: &E) -> String {
    value
        .to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}
