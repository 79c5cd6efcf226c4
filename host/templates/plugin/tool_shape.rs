//! `{{name}}`: a toolport tool shape. Each tool becomes a Gemini-style function declaration,
//! `{"name", "description", "parameters"}`, with the server's input schema as `parameters`.

use serde_json::{Map, Value, json};
use toolport_guest::{Server, ShapeGuest, Tool};

struct Shape;

impl ShapeGuest for Shape {
    /// One JSON object (as text) per tool, in the order given; `Err` fails the server.
    fn convert(_server: Server, tools: Vec<Tool>) -> Result<Vec<String>, String> {
        toolport_guest::debug!("converting {} tools", tools.len());
        tools.iter().map(declaration).collect()
    }
}

fn declaration(tool: &Tool) -> Result<String, String> {
    let mut parameters = toolport_guest::input_schema(tool)?;
    // Gemini's parameters are an OpenAPI subset: it rejects JSON Schema's `$schema` keyword.
    if let Some(schema) = parameters.as_object_mut() {
        schema.remove("$schema");
    }
    let mut object = Map::new();
    object.insert("name".into(), json!(tool.name));
    let description = tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default();
    object.insert("description".into(), json!(description));
    object.insert("parameters".into(), parameters);
    toolport_guest::shape_text(tool, &Value::Object(object))
}

toolport_guest::export!(Shape);
