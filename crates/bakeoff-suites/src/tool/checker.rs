//! The tool-call checker, in the manner of BFCL's AST checker
//! (gorilla `bfcl_eval/eval_checker/ast_eval/ast_checker.py`):
//!
//! - the function name matches exactly;
//! - the arguments are a JSON object valid against the tool's JSON Schema (`jsonschema`);
//! - every required parameter is present, and no parameter the schema does not declare;
//! - types: an integer is accepted where a number is expected, never the reverse;
//! - each value is one of the allowed values (strings compared case-insensitively with
//!   spaces and punctuation dropped, numbers numerically); `""` in the allowed list marks an
//!   optional parameter that may be left out; an object in the list is a nested spec;
//! - parallel calls are matched regardless of order;
//! - irrelevance (no expected call) passes only when no call was made.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

pub use super::mismatch::Mismatch;

/// An expected call: the function and, per parameter, the values that are accepted.
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct ExpectedCall {
    pub name: String,
    pub arguments: BTreeMap<String, Vec<Value>>,
}

/// A call as the model made it (name and raw argument text).
#[derive(Debug, Clone, PartialEq)]
pub struct ActualCall {
    pub name: String,
    pub arguments: String,
}

/// Check one call against one expectation, given the tool's parameter schema.
pub fn check_call(
    actual: &ActualCall,
    expected: &ExpectedCall,
    schema: Option<&Value>,
) -> Result<(), Mismatch> {
    if actual.name != expected.name {
        return Err(Mismatch::Name {
            called: shorten(&actual.name),
            expected: expected.name.clone(),
        });
    }
    let args: Value = serde_json::from_str(if actual.arguments.trim().is_empty() {
        "{}"
    } else {
        &actual.arguments
    })
    .map_err(|e| Mismatch::NotJson {
        name: expected.name.clone(),
        reason: e.to_string(),
    })?;
    let Value::Object(args) = args else {
        return Err(Mismatch::NotAnObject(expected.name.clone()));
    };
    if let Some(schema) = schema {
        check_schema_shape(&expected.name, &args, schema)?;
        match jsonschema::validator_for(schema) {
            Ok(v) => {
                let instance = Value::Object(args.clone());
                if let Some(err) = v.iter_errors(&instance).next() {
                    return Err(Mismatch::Schema {
                        name: expected.name.clone(),
                        at: err.instance_path().to_string(),
                        reason: err.to_string(),
                    });
                }
            }
            Err(e) => {
                return Err(Mismatch::InvalidSchema {
                    name: expected.name.clone(),
                    reason: e.to_string(),
                });
            }
        }
    }
    check_values(&expected.name, &args, &expected.arguments)
}

/// Required present, nothing undeclared, and the number/integer rule, with BFCL's messages
/// (the schema validator would say the same less plainly).
fn check_schema_shape(
    name: &str,
    args: &Map<String, Value>,
    schema: &Value,
) -> Result<(), Mismatch> {
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !args.contains_key(r) {
                return Err(Mismatch::RequiredMissing {
                    name: name.to_owned(),
                    param: r.to_owned(),
                });
            }
        }
    }
    for (k, v) in args {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            return Err(Mismatch::Unexpected {
                name: name.to_owned(),
                param: shorten(k),
            });
        };
        let want = match p.get("type").and_then(Value::as_str) {
            // An integer is a number (BFCL accepts Python int for float).
            Some("number") if !v.is_number() => Some("a number"),
            Some("integer") if !is_integer(v) => Some("an integer"),
            Some("string") if !v.is_string() => Some("a string"),
            // `"true"` is a string, not a boolean (BFCL's type check).
            Some("boolean") if !v.is_boolean() => Some("a boolean"),
            _ => None,
        };
        if let Some(want) = want {
            return Err(Mismatch::Type {
                name: name.to_owned(),
                param: k.clone(),
                want,
                got: kind(v),
            });
        }
        if let (Some(nested), Value::Object(inner)) = (p.get("properties"), v) {
            let _ = nested;
            check_schema_shape(&format!("{name}.{k}"), inner, p)?;
        }
    }
    Ok(())
}

fn is_integer(v: &Value) -> bool {
    v.is_i64() || v.is_u64()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a decimal number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every expected parameter has an allowed value (or is optional and absent), and the model
/// passed no parameter the expectation does not know.
fn check_values(
    name: &str,
    args: &Map<String, Value>,
    spec: &BTreeMap<String, Vec<Value>>,
) -> Result<(), Mismatch> {
    for (param, allowed) in spec {
        let optional = allowed.iter().any(|a| a.as_str() == Some(""));
        match args.get(param) {
            None if optional => {}
            None => {
                return Err(Mismatch::Missing {
                    name: name.to_owned(),
                    param: param.clone(),
                });
            }
            Some(v) => {
                if !allowed.iter().any(|a| value_matches(v, a)) {
                    return Err(Mismatch::NotAllowed {
                        name: name.to_owned(),
                        param: param.clone(),
                        value: shorten(&v.to_string()),
                        allowed: shorten(&Value::Array(allowed.clone()).to_string()),
                    });
                }
            }
        }
    }
    for k in args.keys() {
        if !spec.contains_key(k) {
            return Err(Mismatch::Unexpected {
                name: name.to_owned(),
                param: shorten(k),
            });
        }
    }
    Ok(())
}

/// BFCL's string normalization: lower case, spaces and punctuation dropped.
pub fn normalize_string(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn value_matches(v: &Value, allowed: &Value) -> bool {
    match (v, allowed) {
        (_, Value::String(a)) if a.is_empty() => false,
        (Value::String(s), Value::String(a)) => normalize_string(s) == normalize_string(a),
        (Value::Number(x), Value::Number(a)) => match (x.as_f64(), a.as_f64()) {
            (Some(x), Some(a)) => (x - a).abs() <= 1e-9 * a.abs().max(1.0),
            _ => false,
        },
        (Value::Bool(x), Value::Bool(a)) => x == a,
        (Value::Array(xs), Value::Array(al)) => {
            xs.len() == al.len() && xs.iter().zip(al).all(|(x, a)| value_matches(x, a))
        }
        (Value::Object(obj), Value::Object(nested)) => {
            // A nested spec: each field maps to its own allowed list.
            let mut spec = BTreeMap::new();
            for (k, a) in nested {
                let list = match a {
                    Value::Array(l) => l.clone(),
                    other => vec![other.clone()],
                };
                spec.insert(k.clone(), list);
            }
            check_values("", obj, &spec).is_ok()
        }
        _ => false,
    }
}

/// Match all actual calls against all expected ones, in any order. `Ok` only when every
/// expected call is matched by exactly one actual call and no call is left over.
pub fn check_calls(
    actual: &[ActualCall],
    expected: &[ExpectedCall],
    schema_of: &dyn Fn(&str) -> Option<Value>,
) -> Result<(), Mismatch> {
    if expected.is_empty() {
        return match actual.first() {
            None => Ok(()),
            Some(c) => Err(Mismatch::Irrelevant(shorten(&c.name))),
        };
    }
    if actual.is_empty() {
        return Err(Mismatch::NoCall);
    }
    if actual.len() != expected.len() {
        return Err(Mismatch::Count {
            made: actual.len(),
            expected: expected.len(),
        });
    }
    // Tiny n (≤ 4 calls): try every assignment, keep the first error for the report.
    let mut used = vec![false; actual.len()];
    let mut first_err = None;
    if assign(0, actual, expected, schema_of, &mut used, &mut first_err) {
        Ok(())
    } else {
        Err(first_err.unwrap_or(Mismatch::NoMatch))
    }
}

fn assign(
    i: usize,
    actual: &[ActualCall],
    expected: &[ExpectedCall],
    schema_of: &dyn Fn(&str) -> Option<Value>,
    used: &mut [bool],
    first_err: &mut Option<Mismatch>,
) -> bool {
    if i == expected.len() {
        return true;
    }
    let schema = schema_of(&expected[i].name);
    for j in 0..actual.len() {
        if used[j] {
            continue;
        }
        match check_call(&actual[j], &expected[i], schema.as_ref()) {
            Ok(()) => {
                used[j] = true;
                if assign(i + 1, actual, expected, schema_of, used, first_err) {
                    return true;
                }
                used[j] = false;
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    false
}

/// Model text in a check message: short, one line (reporters escape it further).
fn shorten(s: &str) -> String {
    let one: String = s.chars().filter(|c| !c.is_control()).take(60).collect();
    if s.chars().count() > 60 {
        format!("{one}…")
    } else {
        one
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather_schema() -> Value {
        json!({"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"]})
    }
    fn thermo_schema() -> Value {
        json!({"type":"object","properties":{"room":{"type":"string","enum":["bedroom","kitchen"]},"temperature":{"type":"number"},"hours":{"type":"integer"}},"required":["room","temperature"]})
    }
    fn exp(v: Value) -> ExpectedCall {
        serde_json::from_value(v).unwrap()
    }
    fn call(name: &str, args: &str) -> ActualCall {
        ActualCall {
            name: name.into(),
            arguments: args.into(),
        }
    }
    fn schemas(name: &str) -> Option<Value> {
        match name {
            "get_weather" => Some(weather_schema()),
            "set_thermostat" => Some(thermo_schema()),
            _ => None,
        }
    }

    #[test]
    fn mismatch_texts_are_the_checks_words() {
        let e = exp(json!({"name":"get_weather","arguments":{"city":["Paris"]}}));
        let s = weather_schema();
        let t = |name: &str, args: &str| {
            check_call(&call(name, args), &e, Some(&s))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            t("get_Weather", r#"{"city":"Paris"}"#),
            r#"called "get_Weather", expected "get_weather""#
        );
        assert_eq!(
            t("get_weather", r#"{"city":1}"#),
            "get_weather: city should be a string, got an integer"
        );
        assert_eq!(
            t("get_weather", "{}"),
            r#"get_weather: required parameter "city" is missing"#
        );
        assert_eq!(
            t("get_weather", r#"{"city":"Lyon"}"#),
            r#"get_weather: city = "Lyon" is not an allowed value (["Paris"])"#
        );
        assert_eq!(
            t("get_weather", "[1]"),
            "get_weather: arguments are not a JSON object"
        );
        assert_eq!(
            check_calls(&[], std::slice::from_ref(&e), &schemas)
                .unwrap_err()
                .to_string(),
            "no tool call was made"
        );
    }

    #[test]
    fn exact_name_and_allowed_values() {
        let e =
            exp(json!({"name":"get_weather","arguments":{"city":["Paris"],"unit":["celsius",""]}}));
        let s = weather_schema();
        assert!(check_call(&call("get_weather", r#"{"city":"paris"}"#), &e, Some(&s)).is_ok());
        assert!(
            check_call(
                &call("get_weather", r#"{"city":"Paris","unit":"celsius"}"#),
                &e,
                Some(&s)
            )
            .is_ok()
        );
        let err = check_call(&call("get_Weather", r#"{"city":"Paris"}"#), &e, Some(&s))
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected \"get_weather\""), "{err}");
        let err = check_call(&call("get_weather", r#"{"city":"Lyon"}"#), &e, Some(&s))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an allowed value"), "{err}");
    }

    #[test]
    fn required_unexpected_and_enum() {
        let e = exp(json!({"name":"get_weather","arguments":{"city":["Paris"]}}));
        let s = weather_schema();
        let err = check_call(&call("get_weather", r#"{}"#), &e, Some(&s))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("required parameter \"city\" is missing"),
            "{err}"
        );
        let err = check_call(
            &call("get_weather", r#"{"city":"Paris","country":"FR"}"#),
            &e,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("unexpected parameter \"country\""), "{err}");
        // Not in the schema's enum: the JSON Schema validation catches it.
        let e2 =
            exp(json!({"name":"get_weather","arguments":{"city":["Paris"],"unit":["kelvin",""]}}));
        let err = check_call(
            &call("get_weather", r#"{"city":"Paris","unit":"kelvin"}"#),
            &e2,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("JSON Schema"), "{err}");
        let err = check_call(&call("get_weather", r#"{"city": "Paris""#), &e, Some(&s))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid JSON"), "{err}");
    }

    #[test]
    fn integer_accepted_for_number_but_not_the_reverse() {
        let s = thermo_schema();
        let e = exp(
            json!({"name":"set_thermostat","arguments":{"room":["bedroom"],"temperature":[18],"hours":[2,""]}}),
        );
        assert!(
            check_call(
                &call("set_thermostat", r#"{"room":"bedroom","temperature":18}"#),
                &e,
                Some(&s)
            )
            .is_ok()
        );
        assert!(
            check_call(
                &call("set_thermostat", r#"{"room":"bedroom","temperature":18.0}"#),
                &e,
                Some(&s)
            )
            .is_ok()
        );
        let err = check_call(
            &call("set_thermostat", r#"{"room":"bedroom","temperature":"18"}"#),
            &e,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("should be a number"), "{err}");
        let err = check_call(
            &call(
                "set_thermostat",
                r#"{"room":"bedroom","temperature":18,"hours":2.5}"#,
            ),
            &e,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("should be an integer"), "{err}");
    }

    #[test]
    fn booleans_are_typed() {
        let s = json!({"type":"object","properties":{"time":{"type":"string"},"repeat_daily":{"type":"boolean"}},"required":["time","repeat_daily"]});
        let e =
            exp(json!({"name":"set_alarm","arguments":{"time":["06:45"],"repeat_daily":[true]}}));
        assert!(
            check_call(
                &call("set_alarm", r#"{"time":"06:45","repeat_daily":true}"#),
                &e,
                Some(&s)
            )
            .is_ok()
        );
        let err = check_call(
            &call("set_alarm", r#"{"time":"06:45","repeat_daily":"true"}"#),
            &e,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("should be a boolean, got a string"), "{err}");
        let err = check_call(
            &call("set_alarm", r#"{"time":"06:45","repeat_daily":false}"#),
            &e,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not an allowed value"), "{err}");
    }

    #[test]
    fn parallel_calls_in_any_order() {
        let e = vec![
            exp(json!({"name":"get_weather","arguments":{"city":["Paris"]}})),
            exp(json!({"name":"get_weather","arguments":{"city":["London"]}})),
        ];
        let a = vec![
            call("get_weather", r#"{"city":"London"}"#),
            call("get_weather", r#"{"city":"Paris"}"#),
        ];
        assert!(check_calls(&a, &e, &schemas).is_ok());
        let a = vec![
            call("get_weather", r#"{"city":"London"}"#),
            call("get_weather", r#"{"city":"London"}"#),
        ];
        assert!(check_calls(&a, &e, &schemas).is_err());
        let a = vec![call("get_weather", r#"{"city":"London"}"#)];
        assert!(
            check_calls(&a, &e, &schemas)
                .unwrap_err()
                .to_string()
                .contains("1 call(s) made, 2 expected")
        );
    }

    #[test]
    fn nested_objects_and_arrays() {
        let s = json!({"type":"object","properties":{"shape":{"type":"string"},"dimensions":{"type":"object","properties":{"width":{"type":"number"},"height":{"type":"number"}},"additionalProperties":false},"tags":{"type":"array","items":{"type":"string"}}},"required":["shape","dimensions"]});
        let e = exp(
            json!({"name":"area","arguments":{"shape":["rectangle"],"dimensions":[{"width":[4],"height":[2.5]}],"tags":[["a","b"],""]}}),
        );
        assert!(
            check_call(
                &call(
                    "area",
                    r#"{"shape":"rectangle","dimensions":{"width":4,"height":2.5}}"#
                ),
                &e,
                Some(&s)
            )
            .is_ok()
        );
        assert!(check_call(&call("area", r#"{"shape":"rectangle","dimensions":{"width":4,"height":2.5},"tags":["A","b"]}"#), &e, Some(&s)).is_ok());
        assert!(
            check_call(
                &call(
                    "area",
                    r#"{"shape":"rectangle","dimensions":{"width":4,"height":3}}"#
                ),
                &e,
                Some(&s)
            )
            .is_err()
        );
        let err = check_call(
            &call(
                "area",
                r#"{"shape":"rectangle","dimensions":{"width":4,"height":2.5,"depth":1}}"#,
            ),
            &e,
            Some(&s),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("unexpected parameter \"depth\""), "{err}");
    }

    #[test]
    fn irrelevance_passes_only_without_a_call() {
        assert!(check_calls(&[], &[], &schemas).is_ok());
        assert!(check_calls(&[call("get_weather", "{}")], &[], &schemas).is_err());
    }
}
