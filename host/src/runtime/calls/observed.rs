//! Every exchange the runtime makes for a caller — a tool call, a resource read, a prompt —
//! timed from the request to its answer and handed to the runtime's observer (`Observer::finished`:
//! the audit log and the metrics) however it ended: answered, refused before it was sent (unknown,
//! held, blocked, declined), timed out, failed, or dropped by its caller (`cancelled`, from
//! `Drop`, since a dropped future runs no more code).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::config::AuditChoice;
use crate::observe::{self, CallContext, Exchange, Kind, Observer, Outcome};
use crate::runtime::results::outcome::{CallError, CallOutcome};
use crate::runtime::supervisor::Supervisor;
use crate::trust::secrets::{SecretBook, mask_keys, redact_object, redact_string};

/// One exchange under way. Dropped unfinished, it is recorded as cancelled.
pub(super) struct Watch {
    kind: Kind,
    started: Instant,
    client: Option<Arc<str>>,
    /// The policies that let it through (`serve`'s policy file).
    policies: Arc<[String]>,
    name: String,
    /// Known once the request is routed.
    pub(super) server: String,
    /// The arguments as the log may see them: their keys with every secret the scanner or the
    /// servers' definitions know masked (a key is the model's text as much as a value), and
    /// under `audit.values` their values too; otherwise only their shape is read.
    arguments: Option<Map<String, Value>>,
    bytes_in: u64,
    audit: AuditChoice,
    observer: Observer,
    /// What guard plugins did on the way (`guards.rs`).
    pub(super) guards: Vec<crate::observe::GuardStep>,
    done: bool,
}

impl Watch {
    /// Starts the clock on an exchange of `kind` about `name` (a final tool name, a URI, a
    /// prompt name) with `arguments`, asked by the client `context` names.
    pub(super) fn start(
        supervisor: &Supervisor,
        kind: Kind,
        name: &str,
        server: &str,
        arguments: Option<&Map<String, Value>>,
        context: &CallContext,
    ) -> Self {
        let started = Instant::now();
        let (audit, book) = {
            let state = supervisor.lock();
            let audit = state.resolved.settings.audit;
            // Only when there is a line to write (the book is built once per resolution).
            let book = audit.enabled.then(|| state.secret_book());
            (audit, book)
        };
        let bytes_in = arguments.map_or(0, observe::json_size);
        // The log reads the arguments (their shape, or their values); with it off, no copy.
        let arguments = arguments.zip(book.as_deref()).map(|(args, book)| masked(args, book, audit.values));
        // A read's URI is logged whole under `audit.values`: its query may carry a key.
        let mut name = name.to_string();
        if let (Kind::Read, true, Some(book)) = (kind, audit.values, book.as_deref()) {
            redact_string(&mut name, book, true);
        }
        Self {
            kind,
            started,
            client: context.client.clone(),
            policies: Arc::clone(&context.permitted_by),
            name,
            server: server.to_string(),
            bytes_in,
            arguments,
            audit,
            observer: supervisor.options.observer.clone(),
            guards: Vec::new(),
            done: false,
        }
    }

    /// The exchange ended: `error` names why it was not answered.
    pub(super) fn finish(&mut self, outcome: Outcome, error: Option<&str>, bytes_out: u64) {
        self.done = true;
        self.observer.finished(&Exchange {
            kind: self.kind,
            client: self.client.as_deref(),
            server: &self.server,
            name: &self.name,
            outcome,
            duration: self.started.elapsed(),
            bytes_in: self.bytes_in,
            bytes_out,
            arguments: self.arguments.as_ref(),
            error,
            policies: &self.policies,
            audit: self.audit,
            guards: &self.guards,
        });
    }

    /// A tool call ended with `result`.
    pub(super) fn finish_call(&mut self, result: &Result<CallOutcome, CallError>) {
        match result {
            Ok(outcome) => {
                // Sizes are the audit log's alone: with it off, the result is not walked.
                let bytes = if self.audit.enabled {
                    observe::json_size(&outcome.content)
                        + outcome.structured.as_ref().map_or(0, observe::json_size)
                        + outcome.meta.as_ref().map_or(0, observe::json_size)
                } else {
                    0
                };
                let how = if outcome.is_error { Outcome::ToolError } else { Outcome::Ok };
                self.finish(how, None, bytes);
            }
            Err(e) => self.finish(Outcome::Error, Some(call_error_class(e)), 0),
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        if !self.done {
            self.finish(Outcome::Error, Some("cancelled"), 0);
        }
    }
}

/// `args` with every secret in their keys masked, and with `values` in their values too: the
/// scanner's patterns and high-entropy tokens, and every server's configured secrets (the
/// guard only masks another server's, and only when set to). Values the log does not show are
/// not scanned: a large argument costs nothing more.
fn masked(args: &Map<String, Value>, book: &SecretBook, values: bool) -> Map<String, Value> {
    let mut args = args.clone();
    if values {
        redact_object(&mut args, book, true);
    } else {
        mask_keys(&mut args, book);
    }
    args
}

/// A call's failure in a word of ours, for the log: never the message, which may quote a
/// value or a server's words.
pub(super) fn call_error_class(e: &CallError) -> &'static str {
    match e {
        CallError::UnknownTool(_) | CallError::UnknownWhileDown { owner: false, .. } => "unknown-tool",
        CallError::UnknownWhileDown { owner: true, .. } => "not-connected",
        CallError::NoLongerListed { .. } => "no-longer-listed",
        CallError::MissingName => "missing-name",
        CallError::InvalidArguments(_) => "invalid-arguments",
        CallError::NotConnected { .. } => "not-connected",
        CallError::Held { .. } => "held",
        CallError::Timeout { .. } => "timeout",
        CallError::Protocol { .. } => "protocol",
        CallError::SecretBlocked { .. } => "blocked",
        CallError::GuardDenied { .. } => "guard-denied",
        CallError::NotConfirmed { .. } => "declined",
        CallError::InvalidResult { .. } => "invalid-result",
    }
}
