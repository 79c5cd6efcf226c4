//! Secrets kept out of what a resource read and a prompt bring back (issue 44 item 9): the
//! counterpart of `secret_guard.rs` for what is not a tool call, under the same workspace
//! setting, `secrets.results`. A resource's contents (text, and text in base64 blobs), a
//! prompt's messages and description, and the server's JSON-RPC error, are walked whole
//! (`trust::secrets::redact_json`): `redact` masks each secret with `***`, `block` withholds
//! the answer (`CatalogError::SecretBlocked`), `off` passes it as it came.
//!
//! No note is added, unlike a tool's result: a resource's contents are the resource, and a
//! line of ours would become part of a file a client saves; the `***` and the trail say it.
//! Applied in `catalog_calls.rs`, so `read`, `prompt`, the session and `serve` all get it.

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::secret_guard::{distinct, names, rule_of};
use crate::config::SecretsMode;
use crate::observe::Observer;
use crate::runtime::supervisor::Supervisor;
use crate::trust::audit::{self, Action, Decision};
use crate::trust::secrets::{Found, SecretBook, redact_json, redact_string};

/// What a reply guard looks after: a read or a prompt of one server.
pub(super) struct ReplyGuard<'a> {
    mode: SecretsMode,
    book: Arc<SecretBook>,
    server: &'a str,
    /// `resource read` or `prompt`, for the trail (a URI may carry user info: not there).
    what: &'static str,
    observer: Observer,
}

/// Withheld under `block`: what a caller turns into `CatalogError::SecretBlocked`.
pub(super) struct Withheld {
    /// `returned a result carrying a secret (…); it was withheld (…)`.
    pub(super) reason: String,
}

impl<'a> ReplyGuard<'a> {
    /// The guard of a reply from `server`, under the settings the runtime
    /// holds now; `what` names the exchange in the trail.
    pub(super) fn new(supervisor: &Supervisor, server: &'a str, what: &'static str) -> Self {
        let state = supervisor.lock();
        let mode = state.resolved.settings.secrets.results;
        let book = if mode == SecretsMode::Off { Arc::default() } else { state.secret_book() };
        Self { mode, book, server, what, observer: supervisor.options.observer.clone() }
    }

    /// `value` (the server's answer, `result` or `error`) with its secrets masked, or why it
    /// is withheld. Passed through JSON: the walk reads every field, whatever the type.
    pub(super) fn scrubbed<T: Serialize + DeserializeOwned>(
        &self,
        value: T,
        kind: &str,
    ) -> Result<T, Withheld> {
        if self.mode == SecretsMode::Off {
            return Ok(value);
        }
        let Ok(mut json) = serde_json::to_value(&value) else {
            // Not JSON, so not passed on as JSON either: nothing of it to read.
            return Ok(value);
        };
        let found = redact_json(&mut json, &self.book, self.mode == SecretsMode::Redact);
        if found.is_empty() {
            return Ok(value);
        }
        self.decide(&found, kind)?;
        serde_json::from_value(json).map_err(|e| {
            tracing::warn!("a {} of server {} masked no longer reads: {e}", self.what, self.server);
            self.withheld(&found, kind, false)
        })
    }

    /// [`ReplyGuard::scrubbed`] of a JSON value as it is held.
    pub(super) fn scrub_json(&self, value: &mut Value, kind: &str) -> Result<(), Withheld> {
        if self.mode == SecretsMode::Off {
            return Ok(());
        }
        let found = redact_json(value, &self.book, self.mode == SecretsMode::Redact);
        if found.is_empty() { Ok(()) } else { self.decide(&found, kind) }
    }

    /// A server's error message, its secrets masked (or why it is withheld).
    pub(super) fn message(&self, mut message: String) -> Result<String, Withheld> {
        if self.mode == SecretsMode::Off {
            return Ok(message);
        }
        let found = redact_string(&mut message, &self.book, self.mode == SecretsMode::Redact);
        if found.is_empty() {
            return Ok(message);
        }
        self.decide(&found, "error")?;
        Ok(message)
    }

    /// Records what was masked (`redact`), or refuses (`block`).
    fn decide(&self, found: &Found, kind: &str) -> Result<(), Withheld> {
        if self.mode == SecretsMode::Block {
            return Err(self.withheld(found, kind, true));
        }
        for rule in distinct(found) {
            self.record(Action::Redacted, rule_of(rule), &format!("masked {rule} in a {} {kind}", self.what));
        }
        Ok(())
    }

    /// The refusal of an answer carrying `found`: by the setting (`by_setting`), or because
    /// the masked answer no longer read as its type (never seen; withheld rather than passed).
    fn withheld(&self, found: &Found, kind: &str, by_setting: bool) -> Withheld {
        let named = names(found);
        let first = found.first().map_or("", |rule| rule_of(rule));
        self.record(Action::Blocked, first, &format!("a {} {kind} withheld: {named}", self.what));
        let said = if kind == "error" { "answered with an error" } else { "returned a result" };
        let why = if by_setting {
            "workspace setting secrets.results is \"block\""
        } else {
            "it could not be masked"
        };
        Withheld { reason: format!("{said} carrying a secret ({named}); it was withheld ({why})") }
    }

    fn record(&self, action: Action, rule: &str, reason: &str) {
        let decision = Decision { action, server: self.server, tool: None, rule: Some(rule), reason };
        audit::record(&self.observer, decision);
    }
}
