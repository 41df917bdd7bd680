//! JSON checks shared by the crates that write typed records.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// A typed value's JSON bytes equal `then` (the bytes a former `json!` writer produced), and
/// reading `then` back as the type writes the same bytes again: a record written before the
/// type existed and one written since read alike.
pub fn same_bytes_both_ways<T: Serialize + DeserializeOwned>(typed: &T, then: &serde_json::Value) {
    let now = serde_json::to_value(typed).unwrap();
    let then_text = serde_json::to_string(then).unwrap();
    assert_eq!(serde_json::to_string(&now).unwrap(), then_text);
    let read: T = serde_json::from_str(&then_text).unwrap();
    let again = serde_json::to_value(&read).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), then_text);
}
