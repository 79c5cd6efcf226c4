//! Structured output (MCP 2025-06-18 and later): a tool that lists an `outputSchema` promises
//! `structuredContent` that conforms to it, and "clients SHOULD validate". A result that
//! breaks the promise becomes a call error naming where and which keyword, so a caller (often
//! a model) never acts on data of the wrong shape as if it were right.
//!
//! Each schema is compiled once per listing ([`OutputChecks`]), not per call. Compiling never
//! reaches the network or the disk: the crate's resolvers are off (see the workspace
//! `Cargo.toml`) and every `$ref` outside the schema itself is refused ([`jsonschema`]'s
//! offline retriever), because a server's schema must not make toolport fetch anything
//! (SEP-2106). A schema that does not compile (invalid, or a `$ref` it would have to fetch)
//! only costs that tool its check: a warning says so, and its results pass unchecked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

use super::outcome::{CallError, CallOutcome};
use crate::text::{clip_foreign, escape_line};

/// One tool's compiled `outputSchema`. Cheap to clone; two are equal when they are the same
/// compilation (a re-listed tool gets a new one).
#[derive(Clone)]
pub struct OutputCheck(Arc<jsonschema::Validator>);

impl OutputCheck {
    /// Compiles `schema` (draft 2020-12 unless its `$schema` names another), refusing every
    /// external `$ref`. The error is the crate's reason, for the warning.
    pub fn compile(schema: &JsonObject) -> Result<Self, String> {
        let schema = Value::Object(schema.clone());
        jsonschema::options().offline().build(&schema).map(|v| Self(Arc::new(v))).map_err(|e| e.to_string())
    }

    /// Why `outcome` breaks the schema, or `None` when it conforms. A result with `isError`
    /// is the tool reporting a failure, not its output, so it is never checked; one without
    /// `structuredContent` breaks the promise the schema made. Only the first violation is
    /// named (the one to fix first); the server wrote the path and the value, so both come
    /// back escaped and clipped.
    pub fn violation(&self, outcome: &CallOutcome) -> Option<String> {
        if outcome.is_error {
            return None;
        }
        let Some(structured) = &outcome.structured else {
            return Some("no structuredContent, but the tool has an outputSchema".to_string());
        };
        let error = self.0.iter_errors(structured).next()?;
        let path = match error.instance_path().as_str() {
            "" => "the top level".to_string(),
            pointer => escape_line(&clip_foreign(pointer)).into_owned(),
        };
        let keyword = error.kind().keyword().to_string();
        let message = escape_line(&clip_foreign(&error.to_string())).into_owned();
        Some(format!("structuredContent at {path} breaks its outputSchema (\"{keyword}\"): {message}"))
    }
}

impl PartialEq for OutputCheck {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for OutputCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputCheck")
    }
}

/// The executor's hook: `outcome` as the call's result, or the error that names how it breaks
/// the tool's `outputSchema`. `tool` is the name the caller used.
pub fn checked(
    check: Option<&OutputCheck>,
    tool: &str,
    server: &str,
    outcome: CallOutcome,
) -> Result<CallOutcome, CallError> {
    match check.and_then(|c| c.violation(&outcome)) {
        None => Ok(outcome),
        Some(reason) => {
            Err(CallError::InvalidResult { tool: tool.to_string(), server: server.to_string(), reason })
        }
    }
}

/// One tool's last compilation, with the schema it was compiled from.
struct Compiled {
    schema: Arc<JsonObject>,
    check: Option<OutputCheck>,
}

/// The compiled schemas of the tools on the surface, by server and the server's own tool
/// name. Every rebuild of the registry asks again, but only a schema that changed (a new
/// listing with a different one) is compiled again, and warned about again when invalid: a
/// rebuild for another server's sake costs a lookup.
#[derive(Default)]
pub struct OutputChecks {
    // A std mutex: held for lookups and inserts only, never across an await.
    by_tool: Mutex<HashMap<(String, String), Compiled>>,
}

impl OutputChecks {
    /// The check for `tool` of `server`: `None` when the tool has no `outputSchema`, or one
    /// that does not compile (warned about once per listing that brings it).
    pub fn for_tool(&self, server: &str, tool: &Tool) -> Option<OutputCheck> {
        let schema = tool.output_schema.as_ref()?;
        let key = (server.to_string(), tool.name.to_string());
        let mut by_tool = self.by_tool.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(done) = by_tool.get(&key)
            && (Arc::ptr_eq(&done.schema, schema) || done.schema == *schema)
        {
            return done.check.clone();
        }
        let check = match OutputCheck::compile(schema) {
            Ok(check) => Some(check),
            Err(reason) => {
                let tool = escape_line(&tool.name).into_owned();
                let reason = escape_line(&clip_foreign(&reason)).into_owned();
                tracing::warn!(
                    server = %server,
                    tool = %tool,
                    "outputSchema of tool {tool} on server {server} does not compile ({reason}); \
                     its structuredContent will not be validated"
                );
                None
            }
        };
        by_tool.insert(key, Compiled { schema: schema.clone(), check: check.clone() });
        check
    }

    /// Forgets every tool not in `kept` (servers and tools that left the surface), so the
    /// cache holds no more than the surface.
    pub fn retain(&self, kept: &[(String, String)]) {
        let mut by_tool = self.by_tool.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        by_tool.retain(|key, _| kept.contains(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    fn weather() -> OutputCheck {
        let schema = schema(json!({
            "type": "object",
            "properties": {
                "temperature": {"type": "number"},
                "readings": {"type": "array", "items": {"type": "integer", "minimum": 0}}
            },
            "required": ["temperature"]
        }));
        OutputCheck::compile(&schema).unwrap_or_else(|e| panic!("compile: {e}"))
    }

    fn outcome(structured: Option<Value>, is_error: bool) -> CallOutcome {
        CallOutcome { content: Vec::new(), structured, is_error, meta: None }
    }

    #[test]
    fn a_conforming_result_passes() {
        let ok = outcome(Some(json!({"temperature": 21.5, "readings": [1, 2]})), false);
        assert_eq!(weather().violation(&ok), None);
    }

    #[test]
    fn a_mismatch_names_the_path_and_the_keyword() {
        let check = weather();
        let nested = outcome(Some(json!({"temperature": 3, "readings": [1, -4]})), false);
        assert_eq!(
            check.violation(&nested).as_deref(),
            Some(
                "structuredContent at /readings/1 breaks its outputSchema (\"minimum\"): -4 is less than the minimum of 0"
            )
        );
        let top = outcome(Some(json!({"readings": []})), false);
        assert_eq!(
            check.violation(&top).as_deref(),
            Some(
                "structuredContent at the top level breaks its outputSchema (\"required\"): \"temperature\" is a required property"
            )
        );
    }

    #[test]
    fn no_structured_content_breaks_the_schema_but_is_error_is_not_checked() {
        let check = weather();
        assert_eq!(
            check.violation(&outcome(None, false)).as_deref(),
            Some("no structuredContent, but the tool has an outputSchema")
        );
        assert_eq!(check.violation(&outcome(None, true)), None);
        assert_eq!(check.violation(&outcome(Some(json!("wrong")), true)), None);
    }

    #[test]
    fn the_error_is_worded_like_the_executors_others() {
        let check = weather();
        let err = checked(Some(&check), "weather", "demo", outcome(None, false)).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some(
                "MCP tool weather on server demo returned an invalid result: no structuredContent, but the tool has an outputSchema"
            )
        );
        let fine = outcome(Some(json!({"temperature": 1})), false);
        assert_eq!(checked(None, "weather", "demo", outcome(None, false)).ok(), Some(outcome(None, false)));
        assert_eq!(checked(Some(&check), "weather", "demo", fine.clone()).ok(), Some(fine));
    }

    #[test]
    fn an_invalid_schema_or_a_remote_ref_does_not_compile() {
        assert!(OutputCheck::compile(&schema(json!({"type": "no-such-type"}))).is_err());
        // Refused offline: compiling must not fetch it (nothing listens on this port anyway).
        let remote = schema(json!({"$ref": "http://127.0.0.1:9/schema.json"}));
        let err = OutputCheck::compile(&remote).err().unwrap_or_default();
        assert!(err.contains("127.0.0.1:9/schema.json"), "{err}");
        let file = schema(json!({"$ref": "file:///etc/passwd"}));
        assert!(OutputCheck::compile(&file).is_err());
        // A reference inside the schema itself resolves.
        let local =
            schema(json!({"$defs": {"n": {"type": "number"}}, "properties": {"x": {"$ref": "#/$defs/n"}}}));
        let check = OutputCheck::compile(&local).unwrap_or_else(|e| panic!("compile: {e}"));
        assert!(check.violation(&outcome(Some(json!({"x": "one"})), false)).is_some());
    }

    #[test]
    fn a_schema_is_compiled_once_per_listing_and_an_invalid_one_is_skipped() {
        let checks = OutputChecks::default();
        let listed = Tool::new("t", "d", Arc::new(JsonObject::new()))
            .with_raw_output_schema(Arc::new(schema(json!({"type": "object"}))));
        let first = checks.for_tool("s", &listed);
        assert!(first.is_some());
        // A rebuild with the same listing reuses the compilation.
        assert_eq!(checks.for_tool("s", &listed), first);
        // A new listing with another schema compiles again.
        let relisted = listed.clone().with_raw_output_schema(Arc::new(schema(json!({"type": "array"}))));
        let second = checks.for_tool("s", &relisted);
        assert!(second.is_some() && second != first);
        let broken = listed.clone().with_raw_output_schema(Arc::new(schema(json!({"type": 5}))));
        assert_eq!(checks.for_tool("s", &broken), None);
        assert_eq!(checks.for_tool("s", &Tool::new("plain", "d", Arc::new(JsonObject::new()))), None);
        checks.retain(&[]);
        assert!(checks.by_tool.lock().map(|m| m.is_empty()).unwrap_or(false));
    }
}
