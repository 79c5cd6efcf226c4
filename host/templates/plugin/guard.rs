//! `{{name}}`: a toolport guard. It refuses a `tools/call` whose arguments contain one of the
//! words it is configured with, whatever argument they are in, and passes everything else: other
//! calls, reads, prompts and every answer.
//!
//! The words are [`DEFAULT_WORDS`], or the comma-separated list in the variable [`WORDS_VAR`]
//! when the plugin's entry grants it (`toolport plugin grant {{name}} --env {{words_var}}`):
//! a plugin's environment is empty unless granted.

use serde_json::Value;
use toolport_guest::{Context, Decision, GuardGuest, RequestKind};

/// This guard's name, at the start of its reasons.
const GUARD: &str = "{{name}}";
/// Refused in any argument of any call, ignoring case, unless [`WORDS_VAR`] says otherwise.
const DEFAULT_WORDS: &[&str] = &["rm -rf", "drop table"];
/// The variable that replaces [`DEFAULT_WORDS`]: `WORD,WORD,…`.
const WORDS_VAR: &str = "{{words_var}}";

struct Guard;

impl GuardGuest for Guard {
    /// Before the request is sent: `params` is `{"name", "arguments"}` for a call.
    fn on_request(context: Context, params: String) -> Decision {
        if context.kind != RequestKind::ToolsCall {
            return Decision::Pass;
        }
        let params = match toolport_guest::params_json(&params) {
            Ok(params) => params,
            // Never happens with the host's own params; refusing is the safe answer.
            Err(e) => return Decision::deny(e),
        };
        let arguments = params.get("arguments").unwrap_or(&Value::Null);
        let words = words();
        for text in toolport_guest::strings(arguments) {
            let text = text.to_lowercase();
            if let Some(word) = words.iter().find(|word| text.contains(word.as_str())) {
                let target = &context.target;
                toolport_guest::info!("refused {target} on {}: it contains {word:?}", context.server);
                return Decision::deny(format!("{GUARD}: the arguments of {target} contain {word:?}"));
            }
        }
        Decision::Pass
    }

    /// After the server answered: this guard lets every answer through. Return
    /// `Decision::mutate(&new_answer)` to rewrite one (same shape), `Decision::deny(reason)` to
    /// withhold it.
    fn on_response(_context: Context, _params: String, _answer: String) -> Decision {
        Decision::Pass
    }
}

/// The words to refuse, in lower case: [`WORDS_VAR`]'s when it is set and not blank.
fn words() -> Vec<String> {
    let configured = std::env::var(WORDS_VAR).unwrap_or_default();
    let configured: Vec<String> = configured
        .split(',')
        .map(|word| word.trim().to_lowercase())
        .filter(|word| !word.is_empty())
        .collect();
    if configured.is_empty() {
        DEFAULT_WORDS.iter().map(|word| word.to_string()).collect()
    } else {
        configured
    }
}

toolport_guest::export!(Guard);
