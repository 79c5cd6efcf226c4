//! One line of the audit log, as written and as read back (`toolport audit tail`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::shape;
use crate::observe::{Exchange, GuardStep, Kind};

/// One exchange in the audit log. The name field depends on the kind: `tool` for a call, `uri`
/// for a read, `prompt` for a prompt; a sign-in has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditLine {
    /// When it started, RFC 3339 in UTC to the millisecond.
    pub time: String,
    /// `call`, `read`, `prompt` or `sign-in`.
    pub kind: String,
    /// Who asked, when a host named a client (`serve`: `name@session`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The server's configured name.
    pub server: String,
    /// The tool's final name (a call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The resource's URI (a read), without its query and fragment unless values are logged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// The prompt's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// `ok`, `tool-error`, `error` or `denied`.
    pub outcome: String,
    /// Why it was not answered, in a word of ours (`timeout`, `held`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The policies that decided (`serve --policy`): the `permit`s that allowed it, or the
    /// `forbid`s that denied it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<String>,
    /// How long it took, in milliseconds (to the microsecond).
    pub duration_ms: f64,
    /// The arguments' size as JSON, in bytes.
    pub bytes_in: u64,
    /// The result's size as JSON, in bytes.
    pub bytes_out: u64,
    /// The arguments' keys and JSON types ([`shape`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Value>,
    /// The arguments themselves, only under `audit.values: true` (secrets already masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// What guard plugins did to it (a pass is not listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guards: Vec<GuardStep>,
}

impl AuditLine {
    /// The line for `exchange`, which ended now.
    pub fn of(exchange: &Exchange<'_>) -> Self {
        let ended = chrono::Utc::now();
        let started =
            chrono::Duration::from_std(exchange.duration).ok().and_then(|d| ended.checked_sub_signed(d));
        let time = started.unwrap_or(ended).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let values = exchange.audit.values;
        let name = (!exchange.name.is_empty()).then(|| exchange.name.to_string());
        let (tool, uri, prompt) = match exchange.kind {
            Kind::Call => (name, None, None),
            Kind::Read => (None, name.map(|uri| logged_uri(&uri, values)), None),
            Kind::Prompt => (None, None, name),
            Kind::SignIn => (None, None, None),
        };
        AuditLine {
            time,
            kind: exchange.kind.as_str().to_string(),
            client: exchange.client.map(str::to_string),
            server: exchange.server.to_string(),
            tool,
            uri,
            prompt,
            outcome: exchange.outcome.as_str().to_string(),
            error: exchange.error.map(str::to_string),
            policies: exchange.policies.to_vec(),
            duration_ms: (exchange.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0,
            bytes_in: exchange.bytes_in,
            bytes_out: exchange.bytes_out,
            shape: exchange.arguments.map(shape::of_arguments),
            arguments: exchange.arguments.filter(|_| values).map(|a| Value::Object(a.clone())),
            guards: exchange.guards.to_vec(),
        }
    }

    /// The tool, URI or prompt name (empty for a sign-in).
    pub fn name(&self) -> &str {
        self.tool.as_deref().or(self.uri.as_deref()).or(self.prompt.as_deref()).unwrap_or("")
    }
}

/// A URI as the log keeps it: never its userinfo (`slow://admin:pw@doc` is a password), and
/// its query and fragment only when values are logged (they carry a template's arguments, a
/// token).
fn logged_uri(uri: &str, values: bool) -> String {
    let uri = match uri.find(['?', '#']) {
        Some(at) if !values => &uri[..at],
        _ => uri,
    };
    crate::redact::redact_userinfo(uri).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuditChoice;
    use crate::observe::Outcome;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn a_line_has_the_shape_and_not_the_values_unless_asked() -> anyhow::Result<()> {
        let args = json!({"message": "tangerine-42", "n": 3});
        let Value::Object(args) = args else { anyhow::bail!("not an object") };
        let mut exchange = Exchange {
            kind: Kind::Call,
            client: Some("mcp@3f2a9c1e"),
            server: "everything",
            name: "everything_echo",
            outcome: Outcome::Ok,
            duration: Duration::from_micros(3_456),
            bytes_in: 30,
            bytes_out: 80,
            arguments: Some(&args),
            error: None,
            policies: &[],
            audit: AuditChoice::default(),
            guards: &[],
        };
        let line = AuditLine::of(&exchange);
        let text = serde_json::to_string(&line)?;
        assert!(!text.contains("tangerine"), "{text}");
        assert_eq!(line.shape, Some(json!({"message": "string", "n": "number"})));
        assert_eq!(line.duration_ms, 3.456);
        assert_eq!(line.time.len(), "2026-12-04T22:31:07.123Z".len());
        assert_eq!(serde_json::from_str::<AuditLine>(&text)?, line);
        exchange.audit.values = true;
        assert_eq!(AuditLine::of(&exchange).arguments, Some(Value::Object(args.clone())));
        Ok(())
    }

    #[test]
    fn a_read_keeps_no_query_unless_values_are_logged() {
        let mut exchange = Exchange {
            kind: Kind::Read,
            client: None,
            server: "s",
            name: "notes://find?q=salary#top",
            outcome: Outcome::Error,
            duration: Duration::ZERO,
            bytes_in: 0,
            bytes_out: 0,
            arguments: None,
            error: Some("timeout"),
            policies: &[],
            audit: AuditChoice::default(),
            guards: &[],
        };
        assert_eq!(AuditLine::of(&exchange).uri.as_deref(), Some("notes://find"));
        exchange.audit.values = true;
        assert_eq!(AuditLine::of(&exchange).uri.as_deref(), Some("notes://find?q=salary#top"));
    }

    #[test]
    fn a_read_never_keeps_a_password_in_the_uri() {
        for values in [false, true] {
            let exchange = Exchange {
                kind: Kind::Read,
                client: None,
                server: "s",
                name: "slow://admin:hunter2@doc?x=1",
                outcome: Outcome::Ok,
                duration: Duration::ZERO,
                bytes_in: 0,
                bytes_out: 0,
                arguments: None,
                error: None,
                policies: &[],
                audit: AuditChoice { values, ..AuditChoice::default() },
                guards: &[],
            };
            let uri = AuditLine::of(&exchange).uri.unwrap_or_default();
            assert_eq!(uri, if values { "slow://***@doc?x=1" } else { "slow://***@doc" });
        }
    }
}
