//! toolport's question before a call the workspace's `confirm` names, put to the ACP client's
//! person as `session/request_permission`: the tool call described (its title, toolport's
//! question, the arguments as `rawInput`) with two options, allow once and reject once. This is
//! the one request the agent sends; [`Requests`] matches the client's response to the call
//! that waits for it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_client_protocol_schema::v1::{RequestId, RequestPermissionOutcome, RequestPermissionResponse};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::rpc::Outbox;
use crate::runtime::{ConfirmAnswer, Confirmation};

/// ACP's method for asking the person.
const REQUEST_PERMISSION: &str = "session/request_permission";
/// The option that allows the call.
const ALLOW_ONCE: &str = "allow_once";
/// The option that refuses it.
const REJECT_ONCE: &str = "reject_once";

/// What a waiting request is answered with: the result, or the error's message.
type Answer = Result<Value, String>;

/// The agent's requests to the client still waiting for a response, by id.
#[derive(Default)]
pub struct Requests {
    next: AtomicU64,
    waiting: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
}

impl Requests {
    /// A new request id.
    fn next_id(&self) -> String {
        format!("toolport-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends `method` with `params` and waits for the client's response. A request whose
    /// waiter is dropped (the prompt was cancelled) is forgotten, and a late response ignored.
    async fn ask(&self, outbox: &Outbox, id: String, method: &str, params: Value) -> Answer {
        let (answer, answered) = oneshot::channel();
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.insert(id.clone(), answer);
        }
        let _forget = Forget { requests: self, id: id.clone() };
        outbox.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        answered.await.map_err(|_| "the client did not answer".to_string())?
    }

    /// The client's response to the request `id`.
    pub fn answered(&self, id: RequestId, answer: Answer) {
        let RequestId::Str(id) = id else {
            tracing::debug!("ignoring a response to {id}: this agent's requests have string ids");
            return;
        };
        let waiter = self.waiting.lock().ok().and_then(|mut waiting| waiting.remove(&id));
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(answer);
            }
            None => tracing::debug!("ignoring a response to {id}: no request of that id waits"),
        }
    }
}

/// Removes a request from [`Requests`] however its wait ends.
struct Forget<'a> {
    requests: &'a Requests,
    id: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.requests.waiting.lock() {
            waiting.remove(&self.id);
        }
    }
}

/// Asks the client of `session_id` to allow `request`: allowed only when the person picks
/// [`ALLOW_ONCE`].
pub async fn ask(
    requests: &Requests,
    outbox: &Outbox,
    session_id: &str,
    request: &Confirmation,
) -> ConfirmAnswer {
    let id = requests.next_id();
    let params = params(session_id, &id, request);
    match requests.ask(outbox, id, REQUEST_PERMISSION, params).await {
        Ok(result) => answer_of(result),
        Err(why) => ConfirmAnswer::Unasked(format!("the ACP client could not be asked ({why})")),
    }
}

/// The request's params: the call as a pending tool call, toolport's question as its content.
fn params(session_id: &str, id: &str, request: &Confirmation) -> Value {
    json!({
        "sessionId": session_id,
        "toolCall": {
            "toolCallId": id,
            "title": format!("Call {}", request.subject()),
            "status": "pending",
            "rawInput": request.arguments,
            "content": [{"type": "content", "content": {"type": "text", "text": request.question()}}],
        },
        "options": [
            {"optionId": ALLOW_ONCE, "name": "Allow once", "kind": "allow_once"},
            {"optionId": REJECT_ONCE, "name": "Reject", "kind": "reject_once"},
        ],
    })
}

/// The person's choice: [`ALLOW_ONCE`] allows; any other option declines; a cancelled prompt
/// or an answer that is no `RequestPermissionResponse` cancels.
fn answer_of(result: Value) -> ConfirmAnswer {
    match serde_json::from_value::<RequestPermissionResponse>(result) {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(chosen) if chosen.option_id.0.as_ref() == ALLOW_ONCE => {
                ConfirmAnswer::Allow
            }
            RequestPermissionOutcome::Selected(_) => ConfirmAnswer::Decline,
            _ => ConfirmAnswer::Cancel,
        },
        Err(e) => {
            tracing::warn!(
                "the ACP client answered the permission request with no RequestPermissionResponse: {e}"
            );
            ConfirmAnswer::Cancel
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allow_once_allows() {
        let picked = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
        assert_eq!(answer_of(picked("allow_once")), ConfirmAnswer::Allow);
        assert_eq!(answer_of(picked("reject_once")), ConfirmAnswer::Decline);
        assert_eq!(answer_of(json!({"outcome": {"outcome": "cancelled"}})), ConfirmAnswer::Cancel);
        assert_eq!(answer_of(json!({"nothing": 1})), ConfirmAnswer::Cancel);
    }

    #[test]
    fn the_request_describes_the_call() {
        let Value::Object(arguments) = json!({"id": "1"}) else { panic!("object") };
        let request = Confirmation {
            server: "notes".into(),
            tool: "delete_note".into(),
            arguments,
            reason: "destructive tools",
            caller: None,
        };
        let sent = params("s1", "toolport-7", &request);
        assert_eq!(sent["toolCall"]["toolCallId"], "toolport-7");
        assert_eq!(sent["toolCall"]["title"], "Call tool delete_note of MCP server notes");
        assert_eq!(sent["toolCall"]["rawInput"], json!({"id": "1"}));
        assert_eq!(sent["options"][0]["kind"], "allow_once");
        assert_eq!(sent["options"][1]["kind"], "reject_once");
    }
}
