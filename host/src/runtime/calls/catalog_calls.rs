//! Reading a resource and getting a prompt: routed to the server that offers them, sent under
//! that server's call timeout, and what came back (or why nothing did) in a form every view
//! shares. The counterpart of `executor.rs` for what is not a tool.

use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{GetPromptRequestParams, JsonObject, ReadResourceRequestParams, ResourceContents};
use rmcp::service::ServiceError;
use serde_json::Value;

use super::catalog_error::CatalogError;
use super::client_span::traced;
use super::guards::{Chain, Refusal};
use super::observed::Watch;
use super::reply_guard::{ReplyGuard, Withheld};
use super::send::{Deadline, ServerError, send};
use crate::observe::{CallContext, GuardStep, Kind, Outcome, json_size};
use crate::plugin::HookKind;
use crate::runtime::catalog::merged::Catalog;
use crate::runtime::connection::Connection;
use crate::runtime::failed_request::service_error;
use crate::runtime::results::outcome::{CallError, parse_arguments};
use crate::runtime::state::live_catalog;
use crate::runtime::supervisor::Supervisor;
use crate::status::ServerState;
use crate::text::{escape_line, escape_text};

/// The merged catalog of the servers that are `connected` now, in definition order. A server
/// in `error` (say, rejected by the tool-name rules) offers nothing, as it offers no tools.
pub fn catalog(supervisor: &Supervisor) -> Catalog {
    live_catalog(&supervisor.lock().slots)
}

/// `resources/read` of `uri` on `server`. The server is named because a resource template's
/// URIs are listed by no one; a URI two servers list goes to the one the caller names.
pub async fn read(
    supervisor: &Supervisor,
    server: &str,
    uri: &str,
    context: &CallContext,
) -> Result<ResourceRead, CatalogError> {
    let mut watch = Watch::start(supervisor, Kind::Read, uri.trim(), server, None, context);
    let result = read_routed(supervisor, server, uri, context, &mut watch.guards).await;
    match &result {
        Ok(read) => watch.finish(Outcome::Ok, None, json_size(&read.contents)),
        Err(e) => watch.finish(Outcome::Error, Some(e.class()), 0),
    }
    result
}

async fn read_routed(
    supervisor: &Supervisor,
    server: &str,
    uri: &str,
    context: &CallContext,
    steps: &mut Vec<GuardStep>,
) -> Result<ResourceRead, CatalogError> {
    let uri = uri.trim();
    if uri.is_empty() {
        return Err(CatalogError::MissingUri);
    }
    let (conn, timeout) = route(supervisor, server)?;
    let subject = format!("resource {}", escape_line(uri));
    let refused = |Refusal(reason)| CatalogError::GuardDenied {
        subject: subject.clone(),
        server: server.into(),
        reason,
    };
    let chain = Chain::new(supervisor, HookKind::Read, server, uri, uri, context);
    let (params, sent) =
        chain.typed_request(ReadResourceRequestParams::new(uri), steps).await.map_err(refused)?;
    let request = traced(server, conn.peer.clone(), params);
    let guard = ReplyGuard::new(supervisor, server, "resource read");
    let result = settle(supervisor, &conn, server, subject.clone(), timeout, request).await;
    let result = result.map_err(|e| guarded_error(&guard, e))?;
    let result = chain.typed_response(sent.as_ref(), result, steps).await.map_err(refused)?;
    let contents =
        guard.scrubbed(result.contents, "result").map_err(|w| blocked(subject.clone(), server, w))?;
    Ok(ResourceRead { server: server.to_string(), contents })
}

/// `prompts/get` of the prompt called `name` in the catalog, on the server that offers it.
/// `arguments` is JSON text (blank means none); the protocol's arguments are strings.
pub async fn prompt(
    supervisor: &Supervisor,
    name: &str,
    arguments: &str,
    context: &CallContext,
) -> Result<PromptOutcome, CatalogError> {
    let parsed = parse_arguments(arguments).ok();
    let mut watch = Watch::start(supervisor, Kind::Prompt, name.trim(), "", parsed.as_ref(), context);
    let result = prompt_routed(supervisor, name, arguments, context, &mut watch).await;
    match &result {
        Ok(got) => {
            let bytes = json_size(&got.messages) + got.description.as_ref().map_or(0, json_size);
            watch.finish(Outcome::Ok, None, bytes);
        }
        Err(e) => watch.finish(Outcome::Error, Some(e.class()), 0),
    }
    result
}

async fn prompt_routed(
    supervisor: &Supervisor,
    name: &str,
    arguments: &str,
    context: &CallContext,
    watch: &mut Watch,
) -> Result<PromptOutcome, CatalogError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(CatalogError::MissingName);
    }
    let Some(server) = catalog(supervisor).prompt(name).map(|p| p.server.clone()) else {
        return Err(CatalogError::UnknownPrompt(name.to_string()));
    };
    watch.server.clone_from(&server);
    let arguments = prompt_arguments(arguments)?;
    let (conn, timeout) = route(supervisor, &server)?;
    let mut params = GetPromptRequestParams::new(name);
    if !arguments.is_empty() {
        params = params.with_arguments(arguments);
    }
    let subject = format!("prompt {name}");
    let refused = |Refusal(reason)| CatalogError::GuardDenied {
        subject: subject.clone(),
        server: server.clone(),
        reason,
    };
    let chain = Chain::new(supervisor, HookKind::Prompt, &server, name, name, context);
    let (params, sent) = chain.typed_request(params, &mut watch.guards).await.map_err(refused)?;
    let request = traced(&server, conn.peer.clone(), params);
    let guard = ReplyGuard::new(supervisor, &server, "prompt");
    let result = settle(supervisor, &conn, &server, subject.clone(), timeout, request).await;
    let result = result.map_err(|e| guarded_error(&guard, e))?;
    let result = chain.typed_response(sent.as_ref(), result, &mut watch.guards).await.map_err(refused)?;
    let messages = result.messages.iter().filter_map(|m| serde_json::to_value(m).ok()).collect();
    let mut got = serde_json::Map::from_iter([("messages".to_string(), Value::Array(messages))]);
    if let Some(description) = result.description {
        got.insert("description".into(), Value::String(description));
    }
    let mut got = Value::Object(got);
    guard.scrub_json(&mut got, "result").map_err(|w| blocked(subject, &server, w))?;
    let description = got.get("description").and_then(Value::as_str).map(str::to_string);
    let messages = match got.get_mut("messages").map(Value::take) {
        Some(Value::Array(messages)) => messages,
        _ => Vec::new(),
    };
    Ok(PromptOutcome { server, description, messages })
}

/// Any other request for `server` (a completion, a subscription, a log level), sent by
/// `request` on its live session under its call timeout and sorted like a read: what `serve`
/// forwards without the runtime knowing the method.
pub async fn forward<T, F, Fut>(
    supervisor: &Supervisor,
    server: &str,
    subject: String,
    request: F,
) -> Result<T, CatalogError>
where
    F: FnOnce(rmcp::Peer<rmcp::RoleClient>) -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    let (conn, timeout) = route(supervisor, server)?;
    let request = request(conn.peer.clone());
    settle(supervisor, &conn, server, subject, timeout, request).await
}

/// [`forward`] of a `resources/read` or `prompts/get` a host passes through as it came
/// (`serve`), observed like [`read`] and [`prompt`]: `name` is the URI or prompt name, and a
/// JSON-RPC error of the server (the inner `Err`) is an `error` outcome. The answer and the
/// error pass the reply guard (`reply_guard.rs`) first, as a read's and a prompt's do.
#[allow(clippy::too_many_arguments)]
pub async fn forward_observed<P, R, E, F, Fut>(
    supervisor: &Supervisor,
    kind: Kind,
    server: &str,
    name: &str,
    arguments: Option<&JsonObject>,
    context: &CallContext,
    subject: String,
    params: P,
    request: F,
) -> Result<Result<R, E>, CatalogError>
where
    P: serde::Serialize + serde::de::DeserializeOwned,
    R: serde::Serialize + serde::de::DeserializeOwned,
    E: serde::Serialize + serde::de::DeserializeOwned,
    F: FnOnce(rmcp::Peer<rmcp::RoleClient>, P) -> Fut,
    Fut: Future<Output = Result<Result<R, E>, ServiceError>>,
{
    let mut watch = Watch::start(supervisor, kind, name, server, arguments, context);
    let hook = if kind == Kind::Read { HookKind::Read } else { HookKind::Prompt };
    let chain = Chain::new(supervisor, hook, server, name, name, context);
    let refused = |Refusal(reason)| CatalogError::GuardDenied {
        subject: subject.clone(),
        server: server.into(),
        reason,
    };
    let guard =
        ReplyGuard::new(supervisor, server, if kind == Kind::Read { "resource read" } else { "prompt" });
    let answered = match chain.typed_request(params, &mut watch.guards).await {
        Err(refusal) => Err(refused(refusal)),
        Ok((params, sent)) => {
            match forward(supervisor, server, subject.clone(), |peer| request(peer, params)).await {
                Ok(Ok(answer)) => chain
                    .typed_response(sent.as_ref(), answer, &mut watch.guards)
                    .await
                    .map(Ok)
                    .map_err(refused),
                other => other,
            }
        }
    };
    let result = match answered {
        Ok(Ok(answer)) => guard.scrubbed(answer, "result").map(Ok).map_err(|w| blocked(subject, server, w)),
        Ok(Err(error)) => guard.scrubbed(error, "error").map(Err).map_err(|w| blocked(subject, server, w)),
        Err(e) => Err(guarded_error(&guard, e)),
    };
    match &result {
        Ok(Ok(answer)) => watch.finish(Outcome::Ok, None, json_size(answer)),
        Ok(Err(_)) => watch.finish(Outcome::Error, Some("server-error"), 0),
        Err(e) => watch.finish(Outcome::Error, Some(e.class()), 0),
    }
    result
}

/// `e` with the server's own words (a JSON-RPC error's message) through the reply guard: a
/// secret in them masked, or the error withheld under `block`.
fn guarded_error(guard: &ReplyGuard<'_>, e: CatalogError) -> CatalogError {
    match e {
        CatalogError::Protocol { subject, server, message } => match guard.message(message) {
            Ok(message) => CatalogError::Protocol { subject, server, message },
            Err(withheld) => blocked(subject, &server, withheld),
        },
        other => other,
    }
}

/// The refusal of an answer the reply guard withheld.
fn blocked(subject: String, server: &str, withheld: Withheld) -> CatalogError {
    CatalogError::SecretBlocked { subject, server: server.to_string(), reason: withheld.reason }
}

/// Prompt arguments: a JSON object whose values are strings (MCP's `prompts/get` takes
/// `{[name]: string}`), so a number is refused here with its name rather than by the server.
fn prompt_arguments(arguments: &str) -> Result<JsonObject, CatalogError> {
    let map = parse_arguments(arguments).map_err(|e| match e {
        CallError::InvalidArguments(why) => CatalogError::InvalidArguments(why),
        other => CatalogError::InvalidArguments(other.to_string()),
    })?;
    match map.iter().find(|(_, v)| !v.is_string()) {
        Some((key, _)) => Err(CatalogError::InvalidArguments(format!("{key} must be a string"))),
        None => Ok(map),
    }
}

/// The live connection of `server` and its call timeout, or the contract's refusal.
fn route(
    supervisor: &Supervisor,
    server: &str,
) -> Result<(std::sync::Arc<Connection>, Duration), CatalogError> {
    let state = supervisor.lock();
    let Some(slot) = state.slots.iter().find(|s| s.name() == server) else {
        return Err(CatalogError::UnknownServer(server.to_string()));
    };
    let row = slot.status();
    match (row.state, slot.conn()) {
        (ServerState::Disabled, _) => Err(CatalogError::NotEnabled(server.to_string())),
        (ServerState::Paused, _) => Err(CatalogError::Paused(server.to_string())),
        (ServerState::Connected, Some(conn)) => Ok((conn.clone(), slot.resolved.def.timeouts.call)),
        _ => Err(CatalogError::NotConnected {
            server: server.to_string(),
            reason: row.error.unwrap_or_else(|| "not connected".to_string()),
        }),
    }
}

/// Waits for `request` under `timeout` and says what went wrong in a read's words.
async fn settle<T>(
    supervisor: &Supervisor,
    conn: &Connection,
    server: &str,
    subject: String,
    timeout: Duration,
    request: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, CatalogError> {
    let deadline = Deadline { timeout, clock: None };
    send(supervisor, conn, server, deadline, request).await.map_err(|e| match e {
        ServerError::Timeout => {
            CatalogError::Timeout { subject, server: server.to_string(), ms: timeout.as_millis() }
        }
        ServerError::Gone(reason) => CatalogError::NotConnected { server: server.to_string(), reason },
        ServerError::Failed(e) => {
            CatalogError::Protocol { subject, server: server.to_string(), message: service_error(&e) }
        }
    })
}

/// A resource as read: every content the server sent, text or binary.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRead {
    /// The server it was read from.
    pub server: String,
    /// The contents, as the server sent them (binary ones base64, as on the wire).
    pub contents: Vec<ResourceContents>,
}

impl ResourceRead {
    /// `{"contents": [...]}`, MCP's `ReadResourceResult` (blobs stay base64).
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "contents": self.contents })
    }

    /// Text contents as they are (controls escaped); a binary one as one line saying its type
    /// and size, since raw bytes would garble a terminal (`toolport read --output` saves them).
    pub fn render_text(&self) -> String {
        let parts: Vec<String> = self
            .contents
            .iter()
            .map(|content| match content {
                ResourceContents::TextResourceContents { text, .. } => escape_text(text).into_owned(),
                ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
                    let size = match decode(blob) {
                        Ok(bytes) => format!("{} bytes", bytes.len()),
                        Err(why) => why,
                    };
                    let mime = mime_type.as_deref().unwrap_or("unknown type");
                    format!("(binary resource {}: {}, {size})", escape_line(uri), escape_line(mime))
                }
                _ => serde_json::to_string(content).unwrap_or_default(),
            })
            .collect();
        parts.join("\n")
    }

    /// Whether any content is binary (a text view only describes it).
    pub fn has_binary(&self) -> bool {
        self.contents.iter().any(|c| matches!(c, ResourceContents::BlobResourceContents { .. }))
    }

    /// The raw bytes of every content in order: text as UTF-8, binary decoded from base64.
    pub fn bytes(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        for content in &self.contents {
            match content {
                ResourceContents::TextResourceContents { text, .. } => out.extend_from_slice(text.as_bytes()),
                ResourceContents::BlobResourceContents { blob, .. } => out.extend(decode(blob)?),
                _ => return Err("a resource content of an unknown kind".to_string()),
            }
        }
        Ok(out)
    }
}

/// A blob's bytes; MCP sends them base64 (standard alphabet, padded).
fn decode(blob: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD.decode(blob.trim()).map_err(|e| format!("invalid base64: {e}"))
}

/// What `prompts/get` returned.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptOutcome {
    /// The server that answered.
    pub server: String,
    /// The prompt's description, when the server sent one.
    pub description: Option<String>,
    /// Every message as its MCP JSON (`role`, `content`).
    pub messages: Vec<Value>,
}

impl PromptOutcome {
    /// MCP's `GetPromptResult` JSON.
    pub fn to_json(&self) -> Value {
        let mut out = serde_json::json!({ "messages": self.messages });
        if let (Some(description), Some(obj)) = (&self.description, out.as_object_mut()) {
            obj.insert("description".into(), Value::String(description.clone()));
        }
        out
    }

    /// One `<role>: <text>` per message; content that is not text as one line of JSON. The
    /// server wrote it, so controls come back escaped.
    pub fn render_text(&self) -> String {
        let lines: Vec<String> = self
            .messages
            .iter()
            .map(|m| {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("?");
                let content = m.get("content").cloned().unwrap_or(Value::Null);
                let text = match (content.get("type").and_then(Value::as_str), content.get("text")) {
                    (Some("text"), Some(Value::String(text))) => text.clone(),
                    _ => content.to_string(),
                };
                format!("{}: {text}", escape_line(role))
            })
            .collect();
        escape_text(&lines.join("\n")).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_arguments_are_strings() {
        assert_eq!(prompt_arguments(" ").map(|m| m.len()), Ok(0));
        assert_eq!(
            prompt_arguments(r#"{"city": "Paris", "days": 3}"#).err().map(|e| e.to_string()).as_deref(),
            Some("Invalid MCP prompt arguments: days must be a string")
        );
        assert_eq!(
            prompt_arguments("[1]").err().map(|e| e.to_string()).as_deref(),
            Some("Invalid MCP prompt arguments: expected a JSON object, got an array")
        );
    }

    #[test]
    fn binary_contents_are_described_or_decoded() {
        let read = ResourceRead {
            server: "s".into(),
            contents: vec![
                ResourceContents::text("hi\u{1b}]0;x\u{7}", "demo://t"),
                ResourceContents::blob("AAEC", "demo://b").with_mime_type("application/gzip"),
            ],
        };
        assert_eq!(
            read.render_text(),
            "hi\\u{1b}]0;x\\u{7}\n(binary resource demo://b: application/gzip, 3 bytes)"
        );
        assert_eq!(read.bytes(), Ok([b"hi\x1b]0;x\x07".as_slice(), &[0, 1, 2]].concat()));
        assert_eq!(CatalogError::UnknownPrompt("x".into()).to_string(), "Unknown MCP prompt: x");
    }
}
