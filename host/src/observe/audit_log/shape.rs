//! The shape of a call's arguments: its keys and their JSON types, nested, never a value
//! (`{"path":"string","options":{"depth":"number"}}`; an array as the distinct shapes of its
//! items, `["string"]`). What Docker's gateway logs: enough to see which tool was asked what
//! kind of thing, nothing a model or a person typed into it.

use serde_json::{Map, Value};

/// Deeper than this, an object or array is shown as its type alone: a line stays short.
const MAX_DEPTH: usize = 8;
/// More keys than this in one object are summed up as `"…": "+N more"`.
const MAX_KEYS: usize = 64;
/// A key longer than this is clipped (keys are the model's text too).
const MAX_KEY_CHARS: usize = 64;
/// More distinct item shapes than this in one array are left out.
const MAX_ITEM_SHAPES: usize = 8;

/// The shape of `arguments`.
pub fn of_arguments(arguments: &Map<String, Value>) -> Value {
    object(arguments, 0)
}

fn of(value: &Value, depth: usize) -> Value {
    let word = |w: &str| Value::String(w.to_string());
    match value {
        Value::Null => word("null"),
        Value::Bool(_) => word("boolean"),
        Value::Number(_) => word("number"),
        Value::String(_) => word("string"),
        Value::Object(_) if depth >= MAX_DEPTH => word("object"),
        Value::Array(_) if depth >= MAX_DEPTH => word("array"),
        Value::Object(map) => object(map, depth),
        Value::Array(items) => {
            let mut shapes: Vec<Value> = Vec::new();
            for item in items {
                let shape = of(item, depth + 1);
                if !shapes.contains(&shape) {
                    if shapes.len() == MAX_ITEM_SHAPES {
                        break;
                    }
                    shapes.push(shape);
                }
            }
            Value::Array(shapes)
        }
    }
}

fn object(map: &Map<String, Value>, depth: usize) -> Value {
    let mut out = Map::new();
    for (key, value) in map.iter().take(MAX_KEYS) {
        let key: String = key.chars().take(MAX_KEY_CHARS).collect();
        out.insert(key, of(value, depth + 1));
    }
    if map.len() > MAX_KEYS {
        out.insert("…".to_string(), Value::String(format!("+{} more", map.len() - MAX_KEYS)));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shape(v: Value) -> Value {
        match v {
            Value::Object(map) => of_arguments(&map),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn keys_and_types_nested_never_values() {
        let args = json!({
            "path": "/home/ann/secret-plans.txt",
            "options": {"depth": 3, "follow": true, "filter": null},
            "tags": ["a", "b", 7],
            "rows": [{"id": 1}, {"id": 2}],
            "empty": []
        });
        assert_eq!(
            shape(args.clone()),
            json!({
                "path": "string",
                "options": {"depth": "number", "follow": "boolean", "filter": "null"},
                "tags": ["string", "number"],
                "rows": [{"id": "number"}],
                "empty": []
            })
        );
        let text = shape(args).to_string();
        assert!(!text.contains("ann") && !text.contains('3') && !text.contains("\"a\""), "{text}");
    }

    #[test]
    fn deep_and_wide_arguments_are_bounded() {
        let mut deep = json!("x");
        for _ in 0..20 {
            deep = json!({ "d": deep });
        }
        let text = shape(json!({ "deep": deep })).to_string();
        assert!(text.contains("\"object\"") && text.len() < 200, "{text}");
        let wide: Map<String, Value> = (0..100).map(|i| (format!("k{i:03}"), json!(i))).collect();
        let shaped = of_arguments(&wide);
        assert_eq!(shaped.as_object().map(Map::len), Some(MAX_KEYS + 1));
        assert_eq!(shaped["…"], json!("+36 more"));
    }
}
