//! Example guard `audit-report` (phase `both`, meant for `mode: "audit"`): looks through every
//! string of a request's params and of its answer for what looks like a secret ([`secrets`]),
//! and for each request or answer that has one logs a line and answers
//! `deny("would refuse: …")`.
//!
//! Why it denies rather than only logging: under `mode: "audit"` the host records a guard's
//! denial in the audit trail and lets the request and its answer go on unchanged, so a `deny`
//! is the finding's record, kept with the exchange it belongs to, while the log line is for
//! whoever watches the host. The guard cannot see its mode; under the default `enforce` its
//! denials would be real, which is a configuration choice, not this guard's (see
//! `../README.md`).
//!
//! Findings name where the string was (`arguments.env.TOKEN`, `content[0].text`) and what it
//! looked like, never the string itself.

wit_bindgen::generate!({ world: "guard", path: "../../../wit/since_v0.1.0" });

mod secrets;

use exports::toolport::plugin::hooks::{Context, Decision, Guest, RequestKind};
use serde_json::Value;
use toolport::plugin::log::{Level, log};

struct AuditReport;

impl Guest for AuditReport {
    fn on_request(context: Context, params: String) -> Decision {
        report(&context, "request", &params)
    }

    fn on_response(context: Context, _params: String, answer: String) -> Decision {
        report(&context, "answer", &answer)
    }
}

/// Where the secrets a finding lists at most, so the reason stays one readable line.
const LISTED: usize = 3;

/// Looks through `json` (the request's params or its answer, `part` saying which) and reports.
fn report(context: &Context, part: &str, json: &str) -> Decision {
    let summary = match serde_json::from_str::<Value>(json) {
        Ok(value) => {
            let mut findings = Vec::new();
            walk(&value, "", &mut findings);
            if findings.is_empty() {
                return Decision::Pass;
            }
            let listed: Vec<String> =
                findings.iter().take(LISTED).map(|(at, what)| format!("`{at}` looks like {what}")).collect();
            match findings.len().saturating_sub(LISTED) {
                0 => listed.join(", "),
                more => format!("{} and {more} more", listed.join(", ")),
            }
        }
        Err(_) => format!("the {part} is not JSON, so it could not be checked"),
    };
    let method = match context.kind {
        RequestKind::ToolsCall => "tools/call",
        RequestKind::ResourcesRead => "resources/read",
        RequestKind::PromptsGet => "prompts/get",
    };
    log(
        Level::Warn,
        &format!("finding in the {part} of {method} {} on {}: {summary}", context.target, context.server),
    );
    Decision::Deny(format!("would refuse: {summary}"))
}

/// Every string at any depth, with where it sits; keys are names, not data, and are not read.
fn walk(value: &Value, at: &str, findings: &mut Vec<(String, &'static str)>) {
    match value {
        Value::String(text) => {
            if let Some(what) = secrets::find(text) {
                findings.push((at.to_string(), what));
            }
        }
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, item)| walk(item, &format!("{at}[{i}]"), findings));
        }
        Value::Object(map) => map.iter().for_each(|(key, item)| {
            let here = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
            walk(item, &here, findings);
        }),
        _ => {}
    }
}

export!(AuditReport);
