//! Secrets kept out of calls (`docs/src/trust.md` "Secrets in calls"): the call-time half of
//! `trust/secrets`. Before a call is sent, an argument that carries a secret configured for
//! another server is blocked (or masked, or let through) per the workspace's
//! `secrets.arguments`; when the result is back, every secret in it — gitleaks' patterns, a
//! high-entropy token, any server's configured secret — is replaced by `***` with a note (or
//! the result withheld, or let through) per `secrets.results`.
//!
//! Secrets of the shapes the patterns know are left in arguments: a model handing a key to the
//! very server it is for is the point of some tools, and toolport cannot tell that from a
//! leak. A configured secret it can: it knows whose it is.
//!
//! Applied once, in the executor, so `call`, the session, ACP and `serve` all get it; before
//! `large_results`, so a result stored whole is stored redacted. Every decision is recorded
//! (`trust::audit`) with the rule and the variable's name, never a value.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::ContentBlock;
use serde_json::{Map, Value};

use crate::config::{Secrets, SecretsMode};
use crate::observe::Observer;
use crate::runtime::results::outcome::{CallError, CallOutcome};
use crate::runtime::supervisor::Supervisor;
use crate::trust::audit::{self, Action, Decision};
use crate::trust::secrets::{Found, SecretBook, redact_json, redact_object, redact_string};

/// The rule an audit record names for a configured secret (the variable is in its reason).
const CONFIGURED: &str = "configured-secret";

/// The guard of one call: the workspace's modes, every server's configured secrets, and what
/// it masked in the arguments (said in the result's note).
pub(super) struct Guard<'a> {
    modes: Secrets,
    book: Arc<SecretBook>,
    /// The final name, for messages (as every `CallError` names the tool).
    tool: &'a str,
    /// The tool's name on its server, for the audit trail.
    original: &'a str,
    server: &'a str,
    masked: Vec<(String, String)>,
    observer: Observer,
}

impl<'a> Guard<'a> {
    /// The guard for a call of `tool` (`original` on `server`), under the settings and the
    /// definitions the runtime holds now. Every defined server's secrets count, connected or
    /// not: a secret is its server's whether or not that server is running.
    pub(super) fn new(supervisor: &Supervisor, tool: &'a str, original: &'a str, server: &'a str) -> Self {
        let state = supervisor.lock();
        let modes = state.resolved.settings.secrets;
        let off = modes.arguments == SecretsMode::Off && modes.results == SecretsMode::Off;
        let book = if off { Arc::default() } else { state.secret_book() };
        let observer = supervisor.options.observer.clone();
        Self { modes, book, tool, original, server, masked: Vec::new(), observer }
    }

    /// Checks `args` before they are sent: `Err` when an argument carries another server's
    /// secret under `block`; under `redact` the secret is masked and the call goes on.
    pub(super) fn arguments(&mut self, args: &mut Map<String, Value>) -> Result<(), CallError> {
        if self.book.is_empty() {
            return Ok(());
        }
        match self.modes.arguments {
            SecretsMode::Off => Ok(()),
            SecretsMode::Block => {
                let found = strings(args).find_map(|s| self.book.foreign_in(s, self.server));
                let Some(secret) = found else { return Ok(()) };
                let reason = format!("carried ${} of server {}", secret.variable, secret.server);
                self.record(Action::Blocked, CONFIGURED, &reason);
                Err(CallError::SecretBlocked {
                    tool: self.tool.to_string(),
                    server: self.server.to_string(),
                    reason: format!(
                        "was not called: an argument carries the value of ${}, a secret configured for server {} (workspace setting secrets.arguments is \"block\")",
                        secret.variable, secret.server
                    ),
                })
            }
            SecretsMode::Redact => {
                let mut masked = Vec::new();
                for text in strings_mut(args) {
                    if let Some((clean, found)) = self.book.mask_foreign(text, self.server) {
                        *text = clean;
                        masked.extend(found.into_iter().map(|s| (s.variable.clone(), s.server.clone())));
                    }
                }
                masked.dedup();
                for (variable, server) in &masked {
                    self.record(
                        Action::Redacted,
                        CONFIGURED,
                        &format!("masked ${variable} of server {server} in the arguments"),
                    );
                }
                self.masked = masked;
                Ok(())
            }
        }
    }

    /// The result with its secrets masked and a note saying which rules (under `redact`),
    /// withheld (`block`), or as it came (`off`). Every block is read whole (a link's URI, an
    /// embedded resource's text or text blob), and every string and key of
    /// `structuredContent` and `_meta`: a client passes all of it on.
    pub(super) fn result(&self, mut outcome: CallOutcome) -> Result<CallOutcome, CallError> {
        let mut rules: Found = Vec::new();
        if self.modes.results != SecretsMode::Off {
            let block = self.modes.results == SecretsMode::Block;
            for item in &mut outcome.content {
                rules.extend(redact_block(item, &self.book, !block));
            }
            if let Some(structured) = outcome.structured.as_mut() {
                rules.extend(redact_json(structured, &self.book, !block));
            }
            if let Some(meta) = outcome.meta.as_mut() {
                rules.extend(redact_object(meta, &self.book, !block));
            }
            if block && !rules.is_empty() {
                return Err(self.withheld("a result", &rules));
            }
        }
        let mut notes = Vec::new();
        if !self.masked.is_empty() {
            let which: Vec<String> = self.masked.iter().map(|(v, s)| format!("${v} of server {s}")).collect();
            notes.push(format!(
                "the value of {} was replaced by *** in the arguments before the call",
                which.join(", ")
            ));
        }
        if !rules.is_empty() {
            let named = names(&rules);
            for rule in distinct(&rules) {
                self.record(Action::Redacted, rule_of(rule), &format!("masked {rule} in the result"));
            }
            let count = rules.len();
            let what = if count == 1 { "secret" } else { "secrets" };
            notes.push(format!("{count} {what} in this result replaced by *** ({named})"));
        }
        for note in notes {
            outcome.content.push(ContentBlock::text(format!("[toolport: {note}]")));
        }
        Ok(outcome)
    }

    /// A server's error message (a JSON-RPC error to the call) with its secrets masked under
    /// `redact` (recorded, no note: the message is the server's), or the error withheld under
    /// `block`: an error is what the server answered, as much as a result.
    pub(super) fn error_message(&self, mut message: String) -> Result<String, CallError> {
        if self.modes.results == SecretsMode::Off {
            return Ok(message);
        }
        let block = self.modes.results == SecretsMode::Block;
        let rules = redact_string(&mut message, &self.book, !block);
        if rules.is_empty() {
            return Ok(message);
        }
        if block {
            return Err(self.withheld("an error", &rules));
        }
        for rule in distinct(&rules) {
            self.record(Action::Redacted, rule_of(rule), &format!("masked {rule} in the error"));
        }
        Ok(message)
    }

    /// The refusal of `what` (`a result`, `an error`) that carried `rules`, recorded.
    fn withheld(&self, what: &str, rules: &[Cow<'static, str>]) -> CallError {
        let named = names(rules);
        self.record(Action::Blocked, rule_of(&rules[0]), &format!("{what} withheld: {named}"));
        let verb = if what == "a result" { "returned" } else { "answered with" };
        CallError::SecretBlocked {
            tool: self.tool.to_string(),
            server: self.server.to_string(),
            reason: format!(
                "{verb} {what} carrying a secret ({named}); it was withheld (workspace setting secrets.results is \"block\")"
            ),
        }
    }

    fn record(&self, action: Action, rule: &str, reason: &str) {
        audit::record(
            &self.observer,
            Decision { action, server: self.server, tool: Some(self.original), rule: Some(rule), reason },
        );
    }
}

/// Every secret in one block of a result, found, and masked when `mask`: the same walk as
/// [`redact_json`] over the block's JSON, in the same order. A text block (nearly every block)
/// is walked as it is typed, its text and its `_meta`; any other is walked as JSON, and read
/// back only when something in it was masked.
fn redact_block(block: &mut ContentBlock, book: &SecretBook, mask: bool) -> Found {
    if let ContentBlock::Text(text) = block
        && text.annotations.is_none()
    {
        let mut found = redact_string(&mut text.text, book, mask);
        if let Some(meta) = text.meta.as_mut() {
            found.extend(redact_object(&mut meta.0, book, mask));
        }
        return found;
    }
    let Ok(mut json) = serde_json::to_value(&*block) else { return Found::new() };
    let found = redact_json(&mut json, book, mask);
    if mask && !found.is_empty() {
        // A mask that leaves no block of MCP's (a `***` where rmcp wants one of its words)
        // still passes on masked, as the block's JSON in a text block.
        *block =
            serde_json::from_value(json.clone()).unwrap_or_else(|_| ContentBlock::text(json.to_string()));
    }
    found
}

/// The audit rule of a hit: gitleaks' id, or [`CONFIGURED`] for a `$VARIABLE`.
pub(super) fn rule_of(rule: &str) -> &str {
    if rule.starts_with('$') { CONFIGURED } else { rule }
}

/// Distinct rules in order of first appearance, comma-separated.
pub(super) fn names(rules: &[Cow<'static, str>]) -> String {
    distinct(rules).join(", ")
}

/// Each rule once, in order of first appearance.
pub(super) fn distinct<'a>(rules: &'a [Cow<'static, str>]) -> Vec<&'a str> {
    let mut seen: Vec<&str> = Vec::new();
    for rule in rules {
        if !seen.contains(&rule.as_ref()) {
            seen.push(rule);
        }
    }
    seen
}

/// Every string value in `args`, at any depth.
fn strings(args: &Map<String, Value>) -> impl Iterator<Item = &str> {
    let mut stack: Vec<&Value> = args.values().collect();
    std::iter::from_fn(move || {
        while let Some(value) = stack.pop() {
            match value {
                Value::String(s) => return Some(s.as_str()),
                Value::Array(items) => stack.extend(items),
                Value::Object(map) => stack.extend(map.values()),
                _ => {}
            }
        }
        None
    })
}

/// Every string value in `args`, at any depth, to change.
fn strings_mut(args: &mut Map<String, Value>) -> Vec<&mut String> {
    let mut out = Vec::new();
    strings_within(args.values_mut().collect(), &mut out);
    out
}

/// Every string inside `values`, at any depth, onto `out`.
fn strings_within<'a>(mut stack: Vec<&'a mut Value>, out: &mut Vec<&'a mut String>) {
    while let Some(value) = stack.pop() {
        match value {
            Value::String(s) => out.push(s),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_string_at_any_depth_is_seen() {
        let mut args = Map::new();
        args.insert("a".into(), json!({"b": ["x", {"c": "y"}], "n": 1}));
        args.insert("d".into(), json!("z"));
        let mut seen: Vec<&str> = strings(&args).collect();
        seen.sort();
        assert_eq!(seen, ["x", "y", "z"]);
        assert_eq!(strings_mut(&mut args).len(), 3);
    }

    /// A block walked as typed finds and masks what the walk of its JSON does, in its order.
    #[test]
    fn a_block_is_masked_as_its_json_would_be() {
        let book = SecretBook::default();
        let key = format!("{}{}", "AKIA", "QYLPMN5HHHFPZAM2");
        let blocks = json!([
            {"type": "text", "text": format!("k={key}"), "_meta": {"token": key.clone(), key.clone(): 1}},
            {"type": "text", "text": format!("k={key}"), "annotations": {"priority": 0.5}},
            {"type": "resource_link", "uri": format!("leak://doc/{key}"), "name": "doc"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
        ]);
        let items = blocks.as_array().cloned().unwrap_or_default();
        assert_eq!(items.len(), 4);
        for json in items {
            let mut block: ContentBlock =
                serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{e}"));
            let mut walked = json;
            let expected = redact_json(&mut walked, &book, true);
            assert_eq!(redact_block(&mut block, &book, true), expected);
            assert_eq!(serde_json::to_value(&block).ok(), Some(walked));
        }
    }

    #[test]
    fn rules_are_named_once_in_order() {
        let rules = vec![Cow::Borrowed("jwt"), Cow::Owned("$T".to_string()), Cow::Borrowed("jwt")];
        assert_eq!(names(&rules), "jwt, $T");
        assert_eq!(rule_of("$T"), CONFIGURED);
        assert_eq!(rule_of("jwt"), "jwt");
    }
}
