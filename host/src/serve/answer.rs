//! What a client is answered, in each method's own words: a call's outcome as a tool result
//! (an unknown tool, a timeout, a server not connected are results the model reads; bad
//! arguments and protocol faults are JSON-RPC errors), a stored result read back, and the
//! protocol's "not found" for a resource or a prompt — which is also what an item outside the
//! caller's scope gets (`guarded.rs`).

use rmcp::ErrorData as McpError;
use rmcp::model::ResourceContents;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, ReadResourceResponse, ReadResourceResult};

use super::input_rounds::Step;
use super::result_type::Complete as _;
use crate::runtime::{CallError, CatalogError, StoredText};

/// The protocol's "not found" for `uri`: also what a resource outside the caller's scope gets.
pub(super) fn unknown_resource(uri: &str) -> McpError {
    McpError::resource_not_found(format!("Unknown MCP resource: {uri}"), None)
}

/// A catalog's failure as the protocol's error: the request's fault (an unknown prompt, a
/// missing name or URI, bad arguments) as invalid params, anything else as internal.
pub(super) fn catalog_error(e: CatalogError) -> McpError {
    match e {
        CatalogError::UnknownPrompt(_)
        | CatalogError::MissingName
        | CatalogError::MissingUri
        | CatalogError::InvalidArguments(_) => McpError::invalid_params(e.to_string(), None),
        _ => McpError::internal_error(e.to_string(), None),
    }
}

/// What the client is answered: the result, a question to answer first, or why not.
pub(super) fn respond(step: Step) -> Result<CallToolResponse, McpError> {
    let outcome = match step {
        Step::Done(outcome) => outcome,
        Step::Input(asked) => return Ok(CallToolResponse::InputRequired(asked)),
        Step::Cancelled => return Err(McpError::internal_error("the client cancelled the call", None)),
    };
    let error_result = |e: CallError| {
        CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(e.to_string())]))
    };
    match outcome {
        Ok(outcome) => Ok(CallToolResponse::Complete(outcome.with_result_links().into_result().completed())),
        // An unknown tool is a result the model reads, as most servers answer it.
        Err(e @ CallError::UnknownTool(_)) => Ok(error_result(e)),
        Err(e @ (CallError::MissingName | CallError::InvalidArguments(_))) => {
            Err(McpError::invalid_params(e.to_string(), None))
        }
        Err(e @ CallError::Protocol { .. }) => Err(McpError::internal_error(e.to_string(), None)),
        // The model should read why: not connected, timed out, a result that breaks its schema.
        Err(e) => Ok(error_result(e)),
    }
}

/// A result stored whole by the runtime (`toolport://results/<id>`) as `resources/read`
/// answers it; an id it does not hold is the protocol's "not found".
pub(super) fn stored_contents(
    uri: &str,
    stored: Result<StoredText, String>,
) -> Result<ReadResourceResponse, McpError> {
    let stored = stored.map_err(|message| McpError::resource_not_found(message, None))?;
    let contents = ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some(stored.mime_type.to_string()),
        text: stored.text,
        meta: None,
    };
    Ok(ReadResourceResponse::Complete(ReadResourceResult::new(vec![contents])))
}
