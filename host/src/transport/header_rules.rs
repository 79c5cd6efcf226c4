//! SEP-2243's rules for `x-mcp-header` annotations in a tool's `inputSchema`: pure checks, no
//! I/O. rmcp enforces the same rules inside its streamable HTTP transport and drops a breaking
//! tool without telling anyone which server it came from; these checks give the reason our
//! warning names (`http_audit.rs` collects it).

use serde_json::{Map, Value};

/// The first rule the annotations of `input_schema` break, or `None` when they are fine (or
/// absent). Annotations sit on properties reached from the root through `properties` alone;
/// each must be a non-empty HTTP token (RFC 9110 `tchar`s, so ASCII without spaces, colons or
/// control characters), unique ignoring case, on a `string`, `integer` or `boolean` property.
pub fn header_rule_broken(input_schema: &Map<String, Value>) -> Option<String> {
    if input_schema.contains_key("x-mcp-header") {
        return Some("x-mcp-header must annotate a property, not the schema itself".into());
    }
    let mut seen: Vec<String> = Vec::new();
    check_properties(input_schema, "", &mut seen).err()
}

/// Walks `schema.properties` depth first, checking every annotation met.
fn check_properties(schema: &Map<String, Value>, prefix: &str, seen: &mut Vec<String>) -> Result<(), String> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (name, property) in properties {
        let Value::Object(property) = property else { continue };
        let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        if let Some(header) = property.get("x-mcp-header") {
            check_one(&path, header, property, seen)?;
        }
        check_properties(property, &path, seen)?;
    }
    Ok(())
}

fn check_one(
    path: &str,
    header: &Value,
    property: &Map<String, Value>,
    seen: &mut Vec<String>,
) -> Result<(), String> {
    let Value::String(header) = header else {
        return Err(format!("property \"{path}\": x-mcp-header must be a string"));
    };
    if header.is_empty() {
        return Err(format!("property \"{path}\": x-mcp-header is empty"));
    }
    if !header.chars().all(is_tchar) {
        let shown = crate::text::escape_line(header);
        return Err(format!(
            "property \"{path}\": x-mcp-header \"{shown}\" has characters a header name cannot have"
        ));
    }
    let folded = header.to_ascii_lowercase();
    if seen.contains(&folded) {
        return Err(format!(
            "property \"{path}\": x-mcp-header \"{header}\" is a duplicate (names ignore case)"
        ));
    }
    seen.push(folded);
    match property.get("type").and_then(Value::as_str) {
        Some("string" | "integer" | "boolean") => Ok(()),
        other => Err(format!(
            "property \"{path}\": x-mcp-header needs a string, integer or boolean property, not {}",
            other.unwrap_or("an untyped one")
        )),
    }
}

/// RFC 9110 `tchar`: the characters of a header field name.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn broken(schema: Value) -> Option<String> {
        header_rule_broken(schema.as_object().unwrap_or(&Map::new()))
    }

    fn annotated(header: Value, ty: &str) -> Value {
        json!({ "type": "object", "properties": { "value": { "type": ty, "x-mcp-header": header } } })
    }

    #[test]
    fn valid_and_absent_annotations_pass() {
        assert_eq!(broken(json!({ "type": "object" })), None);
        assert_eq!(broken(annotated(json!("Region"), "string")), None);
        assert_eq!(broken(annotated(json!("X-Priority_2"), "integer")), None);
    }

    #[test]
    fn each_rule_names_the_property_and_what_is_wrong() {
        assert_eq!(
            broken(annotated(json!(""), "string")).as_deref(),
            Some("property \"value\": x-mcp-header is empty")
        );
        assert_eq!(
            broken(annotated(json!("A B"), "string")).as_deref(),
            Some("property \"value\": x-mcp-header \"A B\" has characters a header name cannot have")
        );
        assert!(broken(annotated(json!("Ré"), "string")).is_some_and(|e| e.contains("characters")));
        assert!(broken(annotated(json!("a:b"), "string")).is_some_and(|e| e.contains("characters")));
        assert_eq!(
            broken(annotated(json!("Obj"), "object")).as_deref(),
            Some("property \"value\": x-mcp-header needs a string, integer or boolean property, not object")
        );
        assert!(broken(annotated(json!(7), "string")).is_some_and(|e| e.contains("must be a string")));
        let duplicate = json!({ "type": "object", "properties": {
            "a": { "type": "string", "x-mcp-header": "Region" },
            "b": { "type": "string", "x-mcp-header": "REGION" } } });
        assert_eq!(
            broken(duplicate).as_deref(),
            Some("property \"b\": x-mcp-header \"REGION\" is a duplicate (names ignore case)")
        );
        assert!(broken(json!({ "type": "object", "x-mcp-header": "Root" })).is_some());
    }
}
