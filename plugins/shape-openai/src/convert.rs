//! The conversion itself, free of WIT types so the host's benchmark can run the very same code
//! natively as its baseline.

use serde::Serialize;
use serde_json::value::RawValue;

/// What a schema-less tool gets: OpenAI requires an object schema.
const EMPTY_OBJECT_SCHEMA: &str = r#"{"type":"object","properties":{}}"#;

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    parameters: &'a RawValue,
}

#[derive(Serialize)]
struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

/// `{"type":"function","function":{name, description, parameters}}`. The schema text is
/// embedded as it came (a raw value), so nested objects, `anyOf`, `$defs` and key order all
/// survive byte for byte.
pub fn to_openai(name: &str, description: Option<&str>, input_schema: &str) -> Result<String, String> {
    let parameters =
        schema_or_default(input_schema).map_err(|e| format!("tool {name}: bad inputSchema: {e}"))?;
    let tool =
        OpenAiTool { kind: "function", function: Function { name, description, parameters: &parameters } };
    serde_json::to_string(&tool).map_err(|e| format!("tool {name}: {e}"))
}

/// The schema as a raw JSON value; a missing or empty one becomes an empty object schema.
pub fn schema_or_default(input_schema: &str) -> Result<Box<RawValue>, serde_json::Error> {
    let trimmed = input_schema.trim();
    let text = match trimmed {
        "" | "null" | "{}" => EMPTY_OBJECT_SCHEMA,
        _ => trimmed,
    };
    RawValue::from_string(text.to_string())
}
