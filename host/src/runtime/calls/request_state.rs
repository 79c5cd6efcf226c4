//! Request state (SEP-2322, "multi round-trip requests"): a 2026-07-28 server that needs the
//! person's input answers `tools/call` with an input-required result instead of sending
//! `elicitation/create`. The client answers its input requests through the same [`Answers`]
//! as any other question and sends the call again with the answers and the server's
//! `requestState`, as a new request (rmcp gives each one a new JSON-RPC id), until the server
//! finishes or [`MAX_INPUT_ROUNDS`] is reached.

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InputRequest, InputRequiredResult,
};
use rmcp::service::ServiceError;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use super::client_span::ClientSpan;
use super::send::MaybeGone;
use crate::config::Roots;
use crate::runtime::connection::Connection;
use crate::runtime::failed_request::service_error;
use crate::runtime::questions::related::Caller;
use crate::runtime::questions::server_requests::Answers;
use crate::runtime::tool_call::{CallProgress, call_once};

/// Most input-required answers one call may get before toolport gives up: a form or two is
/// normal, ten means a server that keeps asking (the bound rmcp's own helper uses).
pub const MAX_INPUT_ROUNDS: usize = 10;
/// Pause before retrying a round that asked nothing (only `requestState`): such a server is
/// polling, and an immediate retry would spin.
const STATE_ONLY_PAUSE: Duration = Duration::from_millis(100);

/// Why a call with input rounds did not finish.
#[derive(Debug)]
pub enum RoundsError {
    /// The request itself failed.
    Service(ServiceError),
    /// The server was still asking after [`MAX_INPUT_ROUNDS`] answers.
    TooManyRounds,
    /// Answering an input request failed (a refused sampling request, an unknown kind).
    Input(String),
    /// The server answered with something `tools/call` cannot (a task, an empty round).
    Unexpected(&'static str),
}

impl std::fmt::Display for RoundsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Service(e) => write!(f, "{}", service_error(e)),
            Self::TooManyRounds => write!(
                f,
                "the server still asked for input after {MAX_INPUT_ROUNDS} answers (SEP-2322 input-required rounds)"
            ),
            Self::Input(message) => write!(f, "cannot answer the server's input request: {message}"),
            Self::Unexpected(what) => write!(f, "the server answered tools/call with {what}"),
        }
    }
}

impl MaybeGone for RoundsError {
    fn service(&self) -> Option<&ServiceError> {
        match self {
            Self::Service(e) => Some(e),
            _ => None,
        }
    }
}

/// `tools/call`, answering input-required results until the server finishes; every round's
/// progress goes to `progress` and is cancelled when dropped (`tool_call`). The server's
/// questions, in rounds or as requests during a round, are `caller`'s.
pub async fn call_tool(
    conn: &Connection,
    answers: &Answers,
    server: &str,
    roots: &Roots,
    mut params: CallToolRequestParams,
    progress: Option<UnboundedSender<CallProgress>>,
    caller: Option<Caller>,
) -> Result<CallToolResult, RoundsError> {
    for round in 0..=MAX_INPUT_ROUNDS {
        let mut sent = params.clone();
        let span = ClientSpan::start(server, &mut sent);
        let answer = span
            .within(call_once(&conn.peer, &conn.progress, &conn.calls, sent, progress.clone(), caller))
            .await;
        span.ended(&answer);
        if let Ok(CallToolResponse::Complete(result)) = &answer
            && result.is_error == Some(true)
        {
            span.failed("tool_error");
        }
        let asked = match answer.map_err(RoundsError::Service)? {
            CallToolResponse::Complete(result) => return Ok(result),
            CallToolResponse::InputRequired(asked) => asked,
            CallToolResponse::Task(_) => {
                return Err(RoundsError::Unexpected("a task, which toolport does not poll"));
            }
            _ => return Err(RoundsError::Unexpected("a result of an unknown kind")),
        };
        if round == MAX_INPUT_ROUNDS {
            break;
        }
        tracing::debug!(server = %server, round = round + 1, "MCP server asks for input before answering");
        let InputRequiredResult { input_requests, request_state, .. } = asked;
        let requests = input_requests.unwrap_or_default();
        if requests.is_empty() {
            if request_state.is_none() {
                return Err(RoundsError::Unexpected("an input-required result that asks nothing"));
            }
            tokio::time::sleep(STATE_ONLY_PAUSE).await;
        }
        let responses = answer_all(answers, server, roots, requests, caller).await?;
        params.input_responses = (!responses.is_empty()).then_some(responses);
        params.request_state = request_state;
    }
    Err(RoundsError::TooManyRounds)
}

/// Answers each input request in turn (one person answers one question at a time), as
/// `caller`'s: the call asking is the one `caller` made, known for sure.
async fn answer_all(
    answers: &Answers,
    server: &str,
    roots: &Roots,
    requests: BTreeMap<String, InputRequest>,
    caller: Option<Caller>,
) -> Result<BTreeMap<String, Value>, RoundsError> {
    let mut responses = BTreeMap::new();
    for (key, request) in requests {
        let response = match request {
            InputRequest::Elicitation(request) => {
                encode(answers.elicit(server, caller, request.params).await)?
            }
            InputRequest::CreateMessage(request) => {
                match answers.sample(server, caller, request.params).await {
                    Ok(result) => encode(result)?,
                    Err(refused) => return Err(RoundsError::Input(refused.message.into_owned())),
                }
            }
            InputRequest::ListRoots(_) => encode(answers.roots(roots, caller))?,
            _ => {
                return Err(RoundsError::Input(format!(
                    "input request {key} is of a kind toolport does not know"
                )));
            }
        };
        responses.insert(key, response);
    }
    Ok(responses)
}

fn encode(value: impl serde::Serialize) -> Result<Value, RoundsError> {
    serde_json::to_value(value).map_err(|e| RoundsError::Input(format!("cannot encode the answer: {e}")))
}
