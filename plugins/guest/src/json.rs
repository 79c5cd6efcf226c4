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
}
