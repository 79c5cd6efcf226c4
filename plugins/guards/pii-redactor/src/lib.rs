//! Example guard `pii-redactor` (phase `response`): takes email addresses, phone numbers and
//! payment card numbers out of what a server answers before the model or the person sees it,
//! replacing them with `[email]`, `[phone]` and `[card]`. What counts as each is in
//! [`scan`]; which parts of an answer are read is in [`answer`]. See `../README.md` for the
//! configuration.
//!
//! It answers `mutate` only when it replaced something, so an answer with nothing to hide goes
//! on byte for byte as the server sent it.

wit_bindgen::generate!({ world: "guard", path: "../../../wit/since_v0.1.0" });

mod answer;
mod scan;

use exports::toolport::plugin::hooks::{Context, Decision, Guest, RequestKind};
use serde_json::Value;
use toolport::plugin::log::{Level, log};

use crate::answer::{Kind, redact_answer};

struct PiiRedactor;

impl Guest for PiiRedactor {
    /// Requests are not this guard's business (it is meant for `phase: "response"`); run on
    /// one anyway, it lets it through.
    fn on_request(_context: Context, _params: String) -> Decision {
        Decision::Pass
    }

    fn on_response(context: Context, _params: String, answer: String) -> Decision {
        // The host always sends JSON; were it not, this guard could not vouch for the answer,
        // and a redactor that fails open leaks what it is there to hide.
        let Ok(mut value) = serde_json::from_str::<Value>(&answer) else {
            return Decision::Deny("pii-redactor: the answer is not JSON, so it cannot be checked".into());
        };
        let kind = match context.kind {
            RequestKind::ToolsCall => Kind::Call,
            RequestKind::ResourcesRead => Kind::Read,
            RequestKind::PromptsGet => Kind::Prompt,
        };
        let counts = redact_answer(kind, &mut value);
        if counts.total() == 0 {
            return Decision::Pass;
        }
        // Counts only: the log must not carry what was just taken out of the answer.
        log(
            Level::Info,
            &format!(
                "redacted {} email(s), {} phone number(s), {} card number(s) in {}'s answer for {}",
                counts.emails, counts.phones, counts.cards, context.server, context.target
            ),
        );
        Decision::Mutate(value.to_string())
    }
}

export!(PiiRedactor);
