//! Asking before a call is sent: when the workspace's `confirm` rule names the tool
//! (`trust::confirm_reason`), the host's elicitor asks the person whose call it is (the
//! terminal, the calling client of `serve`, ACP's permission request), and only a yes sends it.
//! The host asks, never the server: the question goes out before the server hears of the call,
//! so a server cannot approve its own. Every decision is recorded (`trust::audit`), without
//! the arguments.

use serde_json::{Map, Value};

use crate::runtime::questions::confirmation::{ConfirmAnswer, Confirmation};
use crate::runtime::questions::related::Caller;
use crate::runtime::results::outcome::CallError;
use crate::runtime::supervisor::Supervisor;
use crate::trust::CONFIRM_RULE;
use crate::trust::audit::{self, Action, Decision};

/// `Ok` when the person allowed the call of the tool `name` (its final name; `original` on
/// `server`) with `arguments`, which the workspace's `confirm` rule names for `reason` (the
/// executor reads the rule under the same lock as the route). The person asked is `caller`'s.
pub(super) async fn ask_first(
    supervisor: &Supervisor,
    name: &str,
    original: &str,
    server: &str,
    reason: &'static str,
    arguments: &Map<String, Value>,
    caller: Option<Caller>,
) -> Result<(), CallError> {
    let server = server.to_string();
    let request = Confirmation {
        server: server.clone(),
        tool: name.to_string(),
        arguments: arguments.clone(),
        reason,
        caller,
    };
    let answer = supervisor.answers.confirm(request).await;
    let (action, said) = recorded(&answer);
    audit::record(
        &supervisor.options.observer,
        Decision { action, server: &server, tool: Some(original), rule: Some(CONFIRM_RULE), reason: said },
    );
    match answer {
        ConfirmAnswer::Allow => Ok(()),
        ConfirmAnswer::Decline => Err(declined(name, server, reason, "the answer was no")),
        ConfirmAnswer::Cancel => Err(declined(name, server, reason, "the question was dismissed")),
        ConfirmAnswer::Unasked(why) => Err(declined(name, server, reason, &why)),
    }
}

/// The audit trail's action and words for an answer (ours, never a value of the call).
fn recorded(answer: &ConfirmAnswer) -> (Action, &'static str) {
    match answer {
        ConfirmAnswer::Allow => (Action::Confirmed, "allowed before the call"),
        ConfirmAnswer::Decline => (Action::Declined, "declined when asked"),
        ConfirmAnswer::Cancel => (Action::Declined, "question dismissed"),
        ConfirmAnswer::Unasked(_) => (Action::Declined, "nobody could be asked"),
    }
}

/// The caller's error: which tool was not called, and why.
fn declined(name: &str, server: String, reason: &str, how: &str) -> CallError {
    CallError::NotConfirmed {
        tool: name.to_string(),
        server,
        reason: format!("declined: toolport asks before calling {reason}, and {how}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_says_which_tool_and_why() {
        let e = declined("delete_note", "notes".into(), "destructive tools", "the answer was no");
        assert_eq!(
            e.to_string(),
            "MCP tool delete_note on server notes was not called: declined: toolport asks before calling \
             destructive tools, and the answer was no"
        );
    }
}
