//! An item record's typed figures written into it: each suite states its `extra` (and a
//! structured `expected`) as a struct of its own, and it becomes the record's JSON here.
//!
//! `ItemRecord.extra` and `.expected` stay `serde_json::Value` in the artifact, so every artifact
//! bakeoff wrote reads as before, byte for byte; the structs only fix what a suite writes. A
//! conversion can fail (a map keyed by something other than strings, a `Serialize` impl that
//! errs); the record then keeps its field `null` and the failure is kept in [`ItemWrites`],
//! which the suite's summary turns into an `instrument-failure` flag, as
//! [`crate::summary::write_details`] does for the details: never a silent `null`.

use bakeoff_artifact::details::short_type_name;
use bakeoff_artifact::{FlagCode, FlagSeverity, InstrumentFlag, ItemRecord, SuiteSummary};
use serde::Serialize;

/// The field of an item record a typed value is written into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemField {
    Extra,
    Expected,
}

impl ItemField {
    pub fn as_str(self) -> &'static str {
        match self {
            ItemField::Extra => "extra",
            ItemField::Expected => "expected",
        }
    }
}

impl std::fmt::Display for ItemField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An item's typed figures could not be converted to JSON.
#[derive(Debug, thiserror::Error)]
#[error("item {item}: {field} cannot be written as {shape}: {source}")]
pub struct ItemWriteError {
    /// The item's id.
    pub item: String,
    pub field: ItemField,
    /// The type written (`ToolExtra`, …).
    pub shape: &'static str,
    #[source]
    pub source: serde_json::Error,
}

/// `value` as the JSON of `item`'s `field`. The suites' item shapes always convert (plain
/// fields, maps keyed by strings); the error is for one that does not.
pub fn typed_value<T: Serialize>(
    item: &str,
    field: ItemField,
    value: &T,
) -> Result<serde_json::Value, ItemWriteError> {
    serde_json::to_value(value).map_err(|source| ItemWriteError {
        item: item.to_owned(),
        field,
        shape: short_type_name::<T>(),
        source,
    })
}

/// The item writes of one suite's run that failed, in order; [`ItemWrites::raise`] puts them
/// on the suite's summary.
#[derive(Debug, Default)]
pub struct ItemWrites {
    failed: Vec<ItemWriteError>,
}

impl ItemWrites {
    pub fn new() -> Self {
        Self::default()
    }

    /// Write `extra` as `item.extra`; should it not convert, the field is left as it was and
    /// the failure kept.
    pub fn extra<T: Serialize>(&mut self, item: &mut ItemRecord, extra: &T) {
        if let Some(v) = self.convert(item, ItemField::Extra, extra) {
            item.extra = v;
        }
    }

    /// Write `expected` as `item.expected`, as [`ItemWrites::extra`] does.
    pub fn expected<T: Serialize>(&mut self, item: &mut ItemRecord, expected: &T) {
        if let Some(v) = self.convert(item, ItemField::Expected, expected) {
            item.expected = v;
        }
    }

    fn convert<T: Serialize>(
        &mut self,
        item: &ItemRecord,
        field: ItemField,
        value: &T,
    ) -> Option<serde_json::Value> {
        typed_value(&item.id, field, value)
            .map_err(|e| self.failed.push(e))
            .ok()
    }

    /// The failures another part of the run kept (the damage suite's measurement along the
    /// reply), after these.
    pub fn absorb(&mut self, other: ItemWrites) {
        self.failed.extend(other.failed);
    }

    pub fn failures(&self) -> &[ItemWriteError] {
        &self.failed
    }

    /// The `instrument-failure` flag of `suite` when any write failed: the first failure in
    /// words, and how many items lost a field.
    pub fn flag(&self, suite: &str) -> Option<InstrumentFlag> {
        let first = self.failed.first()?;
        let more = self.failed.len() - 1;
        let message = if more == 0 {
            first.to_string()
        } else {
            format!("{first} (and {more} more item field(s) not written)")
        };
        Some(InstrumentFlag {
            code: FlagCode::InstrumentFailure,
            severity: FlagSeverity::Invalid,
            message,
            suite: Some(suite.to_owned()),
            count: Some(self.failed.len() as u64),
        })
    }

    /// Put [`ItemWrites::flag`] on `summary`, when there is one.
    pub fn raise(&self, summary: &mut SuiteSummary, suite: &str) {
        summary.flags.extend(self.flag(suite));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// Shared with the measurement crate, whose records are written the same way.
    pub(crate) use bakeoff_testkit::json::same_bytes_both_ways;

    fn blank(id: &str) -> ItemRecord {
        ItemRecord {
            id: id.into(),
            outcome: bakeoff_artifact::Outcome::Ok,
            request: serde_json::Value::Null,
            response: Default::default(),
            expected: serde_json::Value::Null,
            check: None,
            latency: Default::default(),
            error: None,
            extra: serde_json::Value::Null,
        }
    }

    #[test]
    fn a_typed_value_is_written_into_the_record() {
        #[derive(Serialize)]
        struct Shape {
            family: &'static str,
            turn: u32,
        }
        let mut w = ItemWrites::new();
        let mut it = blank("a");
        w.extra(
            &mut it,
            &Shape {
                family: "f",
                turn: 2,
            },
        );
        w.expected(&mut it, &"paris");
        assert_eq!(
            serde_json::to_string(&it.extra).unwrap(),
            r#"{"family":"f","turn":2}"#
        );
        assert_eq!(it.expected, serde_json::json!("paris"));
        assert!(w.failures().is_empty() && w.flag("smoke").is_none());
    }

    /// A value that cannot become JSON leaves the field `null` and raises `instrument-failure`
    /// on the suite, naming the item, the field and the shape: never a silent `null`.
    #[test]
    fn a_value_that_cannot_be_written_is_a_flag_not_a_silent_null() {
        let keyed_by_bytes: std::collections::BTreeMap<Vec<u8>, u64> = [(vec![1u8], 1)].into();
        let mut w = ItemWrites::new();
        let mut a = blank("tool-1");
        w.extra(&mut a, &keyed_by_bytes);
        assert!(a.extra.is_null());
        let mut summary = crate::summary::summarize(1, &[a]);
        w.raise(&mut summary, "tool");
        let f = &summary.flags[0];
        assert_eq!(f.code, FlagCode::InstrumentFailure);
        assert_eq!(f.severity, FlagSeverity::Invalid);
        assert_eq!(f.suite.as_deref(), Some("tool"));
        assert_eq!(f.count, Some(1));
        assert!(
            f.message
                .starts_with("item tool-1: extra cannot be written as BTreeMap: "),
            "{}",
            f.message
        );

        let mut b = blank("tool-2");
        w.expected(&mut b, &keyed_by_bytes);
        let mut other = ItemWrites::new();
        other.extra(&mut b, &keyed_by_bytes);
        w.absorb(other);
        let f = w.flag("tool").unwrap();
        assert_eq!(f.count, Some(3));
        assert!(
            f.message
                .ends_with(" (and 2 more item field(s) not written)"),
            "{}",
            f.message
        );
        assert_eq!(w.failures()[1].field, ItemField::Expected);
    }
}
