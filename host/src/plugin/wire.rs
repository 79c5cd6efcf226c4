//! Conversions at the boundary between toolport's types and the WIT records.

use super::bindings::{Server, Tool, Verdict as WitVerdict};
use super::model::{ToolInfo, Verdict};
use crate::config::{MASK, ServerDef};

/// The WIT server record. `reveal_values` is true only for transports, which need the values:
/// a name policy or a tool shape has no business seeing a server's secrets, so it gets
/// [`MASK`] instead. `type` is the normalised one as is (empty when absent): the contract
/// forbids guessing it from `command` or `url`.
pub(crate) fn server(def: &ServerDef, reveal_values: bool) -> Server {
    let pairs = |list: &[(String, String)]| {
        list.iter()
            .map(|(k, v)| (k.clone(), if reveal_values { v.clone() } else { MASK.to_string() }))
            .collect::<Vec<_>>()
    };
    Server {
        name: def.name.clone(),
        type_: def.transport.clone().unwrap_or_default(),
        url: def.url.clone(),
        command: def.command.clone(),
        args: def.args.clone(),
        env: pairs(&def.env),
        headers: pairs(&def.headers),
        cwd: def.cwd.clone(),
        options: "{}".to_string(),
    }
}

/// The WIT tool record; a missing (null) input schema travels as `{}`.
pub(crate) fn tool(info: &ToolInfo) -> Tool {
    // `to_string` writes straight into a buffer; `Value`'s `Display` goes through the slower
    // `fmt` machinery, which showed up in the per-call profile. A `Value` always serialises.
    let json = |v: &serde_json::Value| serde_json::to_string(v).unwrap_or_else(|_| "{}".to_string());
    Tool {
        name: info.name.clone(),
        title: info.title.clone(),
        description: info.description.clone(),
        input_schema: if info.input_schema.is_null() { "{}".to_string() } else { json(&info.input_schema) },
        output_schema: info.output_schema.as_ref().map(json),
        annotations: info.annotations.as_ref().map(json),
    }
}

impl From<WitVerdict> for Verdict {
    fn from(v: WitVerdict) -> Self {
        match v {
            WitVerdict::Keep => Self::Keep,
            WitVerdict::Rename(name) => Self::Rename(name),
            WitVerdict::Hide => Self::Hide,
            WitVerdict::Reject(reason) => Self::Reject(reason),
        }
    }
}
