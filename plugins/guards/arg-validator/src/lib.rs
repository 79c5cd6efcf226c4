//! Example guard `arg-validator` (phase `request`): refuses, before it reaches its server, a
//! `tools/call` whose `query` or `sql` argument drops or truncates tables ([`sql`]) or whose
//! `path`/`paths` arguments point outside an allowed folder ([`paths`]), and a
//! `resources/read` of a `file:` URI outside that folder. Everything else passes unchanged.
//! What is checked where is in [`check`]; `../README.md` has the configuration.
//!
//! The folder is the plugin's environment variable `GUARD_PATH_PREFIX`, which the sandbox only
//! hands over when the plugin's entry grants it (`"grants": {"env": ["GUARD_PATH_PREFIX"]}`);
//! without that grant it reads as unset and the folder is `/tmp`.

wit_bindgen::generate!({ world: "guard", path: "../../../wit/since_v0.1.0" });

mod check;
mod paths;
mod sql;

use exports::toolport::plugin::hooks::{Context, Decision, Guest, RequestKind};
use serde_json::Value;

struct ArgValidator;

impl Guest for ArgValidator {
    fn on_request(context: Context, params: String) -> Decision {
        // The host always sends JSON; what cannot be read cannot be vouched for.
        let Ok(params) = serde_json::from_str::<Value>(&params) else {
            return deny("the request's params are not JSON, so they cannot be checked".into());
        };
        // Read at every call, not once: each hook runs in a fresh instance anyway.
        let prefix = paths::prefix_from(std::env::var("GUARD_PATH_PREFIX"));
        let refusal = match context.kind {
            RequestKind::ToolsCall => check::call(params.get("arguments").unwrap_or(&Value::Null), &prefix),
            RequestKind::ResourcesRead => match params.get("uri").and_then(Value::as_str) {
                Some(uri) => check::read(uri, &prefix),
                None => Some("the read has no `uri` to check".into()),
            },
            // A prompt's arguments fill in text; they reach no database and no file.
            RequestKind::PromptsGet => None,
        };
        refusal.map_or(Decision::Pass, deny)
    }

    /// Answers are not this guard's business (it is meant for `phase: "request"`).
    fn on_response(_context: Context, _params: String, _answer: String) -> Decision {
        Decision::Pass
    }
}

/// A refusal, its reason naming this guard: the host shows the reason as it is.
fn deny(reason: String) -> Decision {
    Decision::Deny(format!("arg-validator: {reason}"))
}

export!(ArgValidator);
