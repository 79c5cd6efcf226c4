//! Method dispatch: what each ACP method (and each `_toolport/…` extension) does, given the
//! request already read by `request.rs`. Every request runs in its own task, so a session that
//! is connecting or calling a slow tool never holds up another session, `session/cancel`, or a
//! second request of the same client.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    AgentCapabilities, Error, ErrorCode, Implementation, InitializeResponse, LoadSessionResponse,
    McpCapabilities, NewSessionResponse, PromptResponse, RequestId, StopReason,
};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use super::elicit::DeclineWithNote;
use super::limits::AcpLimits;
use super::params::SessionParams;
use super::permission::Requests;
use super::request::{Notice, Request};
use super::rpc::{Outbox, internal_error, invalid_params};
use super::session::AcpSession;
use super::updates::{commands_update, message_chunk};
use crate::runtime::RuntimeOptions;

/// The `session/update` notification method.
/// Evicted session ids remembered to explain a later request for one; older ones get the
/// plain `Unknown session`. Bounds what a client that opens and abandons sessions can grow.
const REMEMBERED_EVICTIONS: usize = 256;

/// The agent's shared state: where the local stores live, the open sessions, the outbox.
pub struct Agent {
    home: PathBuf,
    options: RuntimeOptions,
    limits: AcpLimits,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
    /// The most recently evicted session ids, newest last.
    evicted: Mutex<VecDeque<String>>,
    outbox: Outbox,
    next_session: AtomicU64,
    /// Our requests to the client (`session/request_permission`) waiting for responses.
    requests: Arc<Requests>,
}

/// What a request took with it from the moment it arrived.
pub struct Admission {
    cancel: Option<watch::Receiver<u64>>,
}

/// What a request handler produced: the result, and a notification to send right after the
/// response (a client cannot route `session/update` for a session it has not been told of).
struct Handled {
    result: Value,
    then: Option<Value>,
}

impl Handled {
    fn result(value: impl Serialize) -> Result<Self, Error> {
        let result = serde_json::to_value(value).map_err(|e| internal_error(e.to_string()))?;
        Ok(Self { result, then: None })
    }
}

impl Agent {
    /// A new agent writing to `outbox`.
    pub fn new(home: PathBuf, options: RuntimeOptions, limits: AcpLimits, outbox: Outbox) -> Self {
        Self {
            home,
            options,
            limits,
            sessions: Mutex::new(HashMap::new()),
            evicted: Mutex::new(VecDeque::new()),
            outbox,
            next_session: AtomicU64::new(1),
            requests: Arc::default(),
        }
    }

    /// The client's response to a request of ours.
    pub fn answered(&self, id: RequestId, answer: Result<Value, String>) {
        self.requests.answered(id, answer);
    }

    /// Closes every session that no request has used for `idle` and that no request holds
    /// now; a later request for it gets `Unknown session` (and `session/load` reopens it).
    pub async fn evict_idle(&self, idle: Duration) {
        let evicted: Vec<(String, Arc<AcpSession>)> = match self.sessions.lock() {
            Ok(mut map) => {
                let ids: Vec<String> = map
                    .iter()
                    // The table's own reference is the only one: no request is using it.
                    .filter(|(_, s)| Arc::strong_count(s) == 1 && s.idle_for() >= idle)
                    .map(|(id, _)| id.clone())
                    .collect();
                ids.into_iter().filter_map(|id| map.remove(&id).map(|s| (id, s))).collect()
            }
            Err(_) => Vec::new(),
        };
        for (id, session) in evicted {
            tracing::info!("closing ACP session {id}: idle for more than {} s", idle.as_secs());
            if let Ok(mut ids) = self.evicted.lock() {
                if ids.len() >= REMEMBERED_EVICTIONS {
                    ids.pop_front();
                }
                ids.push_back(id);
            }
            session.shutdown().await;
        }
    }

    /// Runs in arrival order, before the request's own task: a prompt starts listening for
    /// `session/cancel` here (see [`AcpSession::cancel_watch`]).
    pub fn admit(&self, request: &Request) -> Admission {
        let cancel = request
            .cancellable_session()
            .and_then(|id| self.session(id).ok())
            .map(|session| session.cancel_watch());
        Admission { cancel }
    }

    /// Serves one request: its result, and a notification to send right after the response.
    pub async fn request(
        &self,
        request: Request,
        admission: Admission,
    ) -> (Result<Value, Error>, Option<Value>) {
        let handled = match request {
            Request::Initialize => Handled::result(initialize()),
            // No authentication methods are advertised, so there is nothing to check.
            Request::Authenticate => Ok(Handled { result: Value::Object(Default::default()), then: None }),
            Request::NewSession(params) => self.new_session(params).await,
            Request::LoadSession { id, params } => self.load_session(&id, params).await,
            Request::Prompt { session, text } => self.prompt(&session, &text, admission).await,
            Request::ToolsList { session, shape } => self.tools_list(&session, shape.as_deref()).await,
            Request::ToolsCall { session, name, arguments } => {
                self.tools_call(&session, &name, &arguments, admission).await
            }
        };
        match handled {
            Ok(h) => (Ok(h.result), h.then),
            Err(e) => (Err(e), None),
        }
    }

    /// Acts on one notification.
    pub fn notice(&self, notice: Notice) {
        match notice {
            Notice::Cancel { session } => match self.session(&session) {
                Ok(session) => session.cancel(),
                Err(_) => tracing::debug!("session/cancel for an unknown session: {session}"),
            },
        }
    }

    /// Closes every session's connections (end of input).
    pub async fn shutdown(&self) {
        let sessions: Vec<Arc<AcpSession>> = match self.sessions.lock() {
            Ok(mut map) => map.drain().map(|(_, s)| s).collect(),
            Err(_) => Vec::new(),
        };
        for session in sessions {
            session.shutdown().await;
        }
    }

    async fn new_session(&self, params: SessionParams) -> Result<Handled, Error> {
        let id =
            format!("toolport-{}-{}", std::process::id(), self.next_session.fetch_add(1, Ordering::Relaxed));
        self.open(&id, params).await?;
        Ok(Handled {
            result: serde_json::to_value(NewSessionResponse::new(id.clone()))
                .map_err(|e| internal_error(e.to_string()))?,
            then: Some(commands_update(&id)),
        })
    }

    /// There is no history to replay (toolport keeps no transcript): loading re-creates the
    /// session under the client's id with the servers it sends now.
    async fn load_session(&self, id: &str, params: SessionParams) -> Result<Handled, Error> {
        self.open(id, params).await?;
        Ok(Handled {
            result: serde_json::to_value(LoadSessionResponse::new())
                .map_err(|e| internal_error(e.to_string()))?,
            then: Some(commands_update(id)),
        })
    }

    async fn open(&self, id: &str, params: SessionParams) -> Result<(), Error> {
        // Each session's elicitations are declined with a note in that session; toolport's own
        // questions before a call are the client's permission requests.
        let elicitor = DeclineWithNote {
            session_id: id.to_string(),
            outbox: self.outbox.clone(),
            requests: Arc::clone(&self.requests),
        };
        let options = self.options.clone().with_elicitor(std::sync::Arc::new(elicitor));
        let session = AcpSession::open(&self.home, params, options)
            .await
            .map_err(|e| internal_error(format!("{e:#}")))?;
        let previous = self
            .sessions
            .lock()
            .map_err(|_| internal_error("session table poisoned"))?
            .insert(id.to_string(), Arc::new(session));
        if let Some(old) = previous {
            old.shutdown().await;
        }
        Ok(())
    }

    async fn prompt(&self, id: &str, text: &str, admission: Admission) -> Result<Handled, Error> {
        let session = self.session(id)?;
        let cancelled = admission.cancel.unwrap_or_else(|| session.cancel_watch());
        let stop = match session.answer(text, cancelled).await {
            Some(reply) => {
                self.outbox.send(message_chunk(id, reply));
                StopReason::EndTurn
            }
            None => StopReason::Cancelled,
        };
        Handled::result(PromptResponse::new(stop))
    }

    async fn tools_list(&self, id: &str, shape: Option<&str>) -> Result<Handled, Error> {
        let session = self.session(id)?;
        let tools = session.tools(shape).await.map_err(|e| internal_error(format!("{e:#}")))?;
        Handled::result(serde_json::json!({ "tools": tools }))
    }

    async fn tools_call(
        &self,
        id: &str,
        name: &str,
        arguments: &str,
        admission: Admission,
    ) -> Result<Handled, Error> {
        let session = self.session(id)?;
        let cancelled = admission.cancel.unwrap_or_else(|| session.cancel_watch());
        match session.call(name, arguments, cancelled).await {
            Some(Ok(outcome)) => Handled::result(outcome.to_json()),
            Some(Err(e)) => Err(invalid_params(e.to_string())),
            None => {
                Err(Error::new(i32::from(ErrorCode::RequestCancelled), "Request cancelled by session/cancel"))
            }
        }
    }

    fn session(&self, id: &str) -> Result<InUse, Error> {
        let session = self
            .sessions
            .lock()
            .map_err(|_| internal_error("session table poisoned"))?
            .get(id)
            .cloned()
            .ok_or_else(|| self.unknown(id))?;
        session.touch();
        Ok(InUse(session))
    }
}

impl Agent {
    /// The error for a session id not in the table, saying so when it was closed as idle.
    fn unknown(&self, id: &str) -> Error {
        let evicted = self.evicted.lock().map(|ids| ids.iter().any(|e| e == id)).unwrap_or(false);
        match self.limits.idle_timeout {
            Some(t) if evicted => invalid_params(format!(
                "Session {id} was closed after {} s idle; session/load reopens it",
                t.as_secs()
            )),
            _ => invalid_params(format!("Unknown session: {id}")),
        }
    }
}

/// A session a request is using: it counts as used again when the request lets go, so a long
/// call does not leave it looking idle since the call began.
struct InUse(Arc<AcpSession>);

impl std::ops::Deref for InUse {
    type Target = AcpSession;
    fn deref(&self) -> &AcpSession {
        &self.0
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.touch();
    }
}

fn initialize() -> InitializeResponse {
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .mcp_capabilities(McpCapabilities::new().http(true).sse(true)),
        )
        .agent_info(Implementation::new("toolport", env!("CARGO_PKG_VERSION")).title("toolport"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn initialize_advertises_load_session_and_mcp_transports() {
        let v = serde_json::to_value(initialize()).unwrap();
        assert_eq!(v["protocolVersion"], 1);
        assert_eq!(v["agentCapabilities"]["loadSession"], true);
        assert_eq!(v["agentCapabilities"]["mcpCapabilities"], json!({"http": true, "sse": true}));
        assert_eq!(v["agentInfo"]["name"], "toolport");
    }
}
