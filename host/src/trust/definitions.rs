//! What a server says, cut into the texts the rules read: its instructions; each tool's name,
//! titles, description and every string and key of its input and output schemas; each
//! prompt's, resource's and resource template's name, title, description (and a prompt's
//! arguments). Everything here can reach a model, so nothing is left out because it is "only
//! data": a schema's `default`, `enum` or property name is read as much as its description.

use rmcp::model::{Prompt, Resource, ResourceTemplate, Tool};
use serde_json::Value;

use super::rules::Target;

/// One server's definitions as it gave them.
#[derive(Debug, Clone, Default)]
pub struct ServerDefinitions {
    /// The server's name in the config.
    pub name: String,
    /// What it said in `initialize`'s `instructions`, when known.
    pub instructions: Option<String>,
    /// Its tools in the order listed.
    pub tools: Vec<ListedTool>,
    /// Its prompts in the order listed.
    pub prompts: Vec<Prompt>,
    /// Its resources in the order listed.
    pub resources: Vec<Resource>,
    /// Its resource templates in the order listed.
    pub templates: Vec<ResourceTemplate>,
}

/// A tool as its server listed it, with the name it has on toolport's surface.
#[derive(Debug, Clone)]
pub struct ListedTool {
    /// Its name on the surface (after the name policy): another name a description may use.
    pub surface_name: String,
    /// The tool exactly as listed.
    pub tool: Tool,
}

/// One text of a definition: the target rules choose by, its field path, the text.
pub(super) type Text<'a> = (Target, String, &'a str);

/// The server's instructions as texts (none or one).
pub(super) fn instructions_texts(server: &ServerDefinitions) -> Vec<Text<'_>> {
    server
        .instructions
        .iter()
        .map(|text| (Target::Instructions, "instructions".into(), text.as_str()))
        .collect()
}

/// A tool's texts with the target each belongs to and its field path.
pub(super) fn tool_texts(tool: &Tool) -> Vec<Text<'_>> {
    let mut texts = vec![(Target::Name, "name".to_string(), tool.name.as_ref())];
    if let Some(title) = &tool.title {
        texts.push((Target::Title, "title".to_string(), title.as_str()));
    }
    if let Some(title) = tool.annotations.as_ref().and_then(|a| a.title.as_deref()) {
        texts.push((Target::Title, "annotations.title".to_string(), title));
    }
    if let Some(description) = &tool.description {
        texts.push((Target::Description, "description".to_string(), description.as_ref()));
    }
    for (key, value) in tool.input_schema.iter() {
        schema_key(key, "inputSchema", &mut texts);
        schema_texts(value, &format!("inputSchema.{key}"), key, &mut texts);
    }
    for (key, value) in tool.output_schema.iter().flat_map(|schema| schema.iter()) {
        schema_key(key, "outputSchema", &mut texts);
        schema_texts(value, &format!("outputSchema.{key}"), key, &mut texts);
    }
    texts
}

/// A prompt's texts: name, title, description, and each argument's name, title, description.
pub(super) fn prompt_texts(prompt: &Prompt) -> Vec<Text<'_>> {
    let mut texts = named_texts(&prompt.name, prompt.title.as_deref(), prompt.description.as_deref());
    for (i, argument) in prompt.arguments.iter().flatten().enumerate() {
        texts.push((Target::Schema, format!("arguments.{i}.name"), argument.name.as_str()));
        if let Some(title) = &argument.title {
            texts.push((Target::Parameters, format!("arguments.{i}.title"), title.as_str()));
        }
        if let Some(description) = &argument.description {
            texts.push((Target::Parameters, format!("arguments.{i}.description"), description.as_str()));
        }
    }
    texts
}

/// A resource's texts: name, title, description (its URI is an address, not prose).
pub(super) fn resource_texts(resource: &Resource) -> Vec<Text<'_>> {
    named_texts(&resource.name, resource.title.as_deref(), resource.description.as_deref())
}

/// A resource template's texts: name, title, description.
pub(super) fn template_texts(template: &ResourceTemplate) -> Vec<Text<'_>> {
    named_texts(&template.name, template.title.as_deref(), template.description.as_deref())
}

/// The name, title and description a prompt, a resource and a template each have.
fn named_texts<'a>(name: &'a str, title: Option<&'a str>, description: Option<&'a str>) -> Vec<Text<'a>> {
    let mut texts = vec![(Target::Name, "name".to_string(), name)];
    if let Some(title) = title {
        texts.push((Target::Title, "title".to_string(), title));
    }
    if let Some(description) = description {
        texts.push((Target::Description, "description".to_string(), description));
    }
    texts
}

/// A key of a schema object, as a text of its own: a property named like an instruction is
/// read by the model as one. Its field is the key's path with ` (key)` after it.
fn schema_key<'a>(key: &'a str, parent: &str, out: &mut Vec<Text<'a>>) {
    out.push((Target::Schema, format!("{parent}.{key} (key)"), key));
}

/// Every string and key inside a schema value, at any depth, with its path: `description`
/// and `title` strings are prose ([`Target::Parameters`]), the rest data ([`Target::Schema`]).
/// The depth is bounded by the JSON parser's recursion limit.
fn schema_texts<'a>(value: &'a Value, path: &str, key: &str, out: &mut Vec<Text<'a>>) {
    match value {
        Value::String(text) => {
            let target = match key {
                "description" | "title" => Target::Parameters,
                _ => Target::Schema,
            };
            out.push((target, path.to_string(), text.as_str()));
        }
        Value::Object(map) => {
            for (child, value) in map {
                schema_key(child, path, out);
                schema_texts(value, &format!("{path}.{child}"), child, out);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                schema_texts(value, &format!("{path}.{i}"), "", out);
            }
        }
        _ => {}
    }
}
