//! JSON text in and out. The contract carries JSON-valued fields (`input-schema`,
//! `output-schema`, `annotations`, a server's `options`, a shape's results) as text, so a
//! plugin parses what it reads and serialises what it returns; these do both with errors that
//! name what was parsed. The tool-aware ones (`input_schema`, `shape_text`, …) are in `world`.

use serde_json::Value;

/// Parses JSON text; the error says what was being parsed (`what`, e.g. `tool echo: input-schema`).
pub fn parse_json(what: &str, text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| format!("{what} is not valid JSON: {e}"))
}

/// A value as compact JSON text (what the host reads back), keeping key order.
pub fn json_text(value: &Value) -> String {
    // Serialising a `Value` to a string cannot fail: every key is a string already.
    value.to_string()
}

/// Every string value inside `value` (object keys left out), in document order: what a guard
/// scans for a word or a secret whatever shape the arguments or the answer have.
pub fn strings(value: &Value) -> Vec<&str> {
    let mut found = Vec::new();
    collect_strings(value, &mut found);
    found
}

// Recursion is bounded: serde_json refuses to parse JSON nested deeper than 128 levels.
fn collect_strings<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => found.push(text),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, found)),
        Value::Object(map) => map.values().for_each(|item| collect_strings(item, found)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Replaces each string value inside `value` (object keys left out) for which `with` returns
/// `Some`, in document order; returns how many it replaced, so a guard passes when it is 0 and
/// answers a mutation otherwise. The shape (keys, arrays, other values) stays as it was, which is
/// what a guard's mutation must keep.
pub fn replace_strings(value: &mut Value, with: &mut impl FnMut(&str) -> Option<String>) -> usize {
    match value {
        Value::String(text) => match with(text) {
            Some(new) => {
                *text = new;
                1
            }
            None => 0,
        },
        Value::Array(items) => items.iter_mut().map(|item| replace_strings(item, with)).sum(),
        Value::Object(map) => map.values_mut().map(|item| replace_strings(item, with)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// "a string", "an array", …: for messages about a value of the wrong kind.
// Only the world's `shape_text` uses it, and a build without a kind has no world.
#[allow(dead_code)]
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_name_what_was_parsed() {
        let err = parse_json("tool echo: input-schema", "{").err().unwrap_or_default();
        assert!(err.starts_with("tool echo: input-schema is not valid JSON: "), "{err}");
        let value = parse_json("x", r#"{"b":1,"a":2}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(json_text(&value), r#"{"b":1,"a":2}"#);
    }

    #[test]
    fn strings_are_found_and_replaced_in_document_order_keys_untouched() {
        let text = r#"{"q":"DROP it","n":[1,"drop",{"drop":true,"x":null}],"k":"keep"}"#;
        let mut value = parse_json("x", text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(strings(&value), ["DROP it", "drop", "keep"]);
        let replaced = replace_strings(&mut value, &mut |s: &str| {
            s.to_lowercase().contains("drop").then(|| s.replace("DROP", "-").replace("drop", "-"))
        });
        assert_eq!(replaced, 2);
        assert_eq!(json_text(&value), r#"{"q":"- it","n":[1,"-",{"drop":true,"x":null}],"k":"keep"}"#);
        assert_eq!(replace_strings(&mut value, &mut |_: &str| None), 0);
    }
}
