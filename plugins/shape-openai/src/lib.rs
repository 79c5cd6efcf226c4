//! Built-in tool shape `openai` (the default): one function-calling object per tool.

mod convert;

wit_bindgen::generate!({ world: "tool-shape", path: "../../wit/since_v0.1.0" });

use exports::toolport::plugin::shape::Guest;
use toolport::plugin::types::{Server, Tool};

struct ShapeOpenAi;

impl Guest for ShapeOpenAi {
    fn convert(_server: Server, tools: Vec<Tool>) -> Result<Vec<String>, String> {
        tools.iter().map(|t| convert::to_openai(&t.name, t.description.as_deref(), &t.input_schema)).collect()
    }
}

export!(ShapeOpenAi);
