//! SEP-2322 on the serving side. A 2026-07-28 client has no session to be asked on: when a
//! downstream server asks something during its call, `serve` answers the client's `tools/call`
//! with an input-required result (the question, and a `requestState` that names the waiting
//! call), and the client's retry with its answer resumes that same call. The downstream call
//! keeps running in its own task between the two requests; the `requestState` is only a
//! random handle to it (128 bits: nothing in it to forge or guess), bound to the caller whose
//! call it is (the token's issuer and subject: another caller's retry with it is told no call
//! waits under it, and the call goes on waiting for its own caller), and a call nobody resumes
//! is cancelled after [`PARK_LIMIT`]. The call lives in this process: behind a load balancer the retry must come
//! back to the same replica. So the handle starts with this process's own random name, and a
//! retry that lands on another replica is told so ([`Unresumed::Elsewhere`]) rather than
//! taken for an expired call: the fix is affinity (nginx `hash $http_authorization` or
//! `ip_hash`), or calling the tool again. At most [`Rounds::limit`] calls wait at once (like sessions, each holds a
//! downstream call and its state): one more is cancelled with an error that says so.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{InputRequest, InputRequiredResult, InputResponses};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::caller::Owner;
use crate::runtime::{CallError, CallOutcome};

/// How long a call waits for its client to come back with an answer.
const PARK_LIMIT: Duration = Duration::from_secs(600);
/// The key of the one question in an input-required result.
const KEY: &str = "input";

/// A question of a downstream server for the calling client, and where its answer goes (the
/// client's result as JSON: an `ElicitResult`, a `CreateMessageResult`).
pub struct Ask {
    /// The question as MCP puts it.
    pub request: InputRequest,
    /// The client's answer.
    pub answer: oneshot::Sender<Value>,
}

/// What a call ends with.
type Outcome = Result<CallOutcome, CallError>;

/// One call running downstream, for as long as it takes. It is polled in its request's task
/// until its server asks something (most calls never do: no task and no wake-up of their own),
/// and becomes a task of its own when it is parked, as it then outlives its request. Dropping
/// or aborting it drops the call, which cancels it at the server.
pub enum Call {
    /// Still its request's.
    Here(Pin<Box<dyn Future<Output = Outcome> + Send>>),
    /// A task of its own: it waited for its client between two requests.
    Task(JoinHandle<Outcome>),
}

impl Call {
    /// `call`, run in the request's task for now.
    pub fn here(call: impl Future<Output = Outcome> + Send + 'static) -> Self {
        Call::Here(Box::pin(call))
    }

    /// The call as a task of its own: spawned now if it was still its request's, where it left
    /// off.
    fn into_task(self) -> JoinHandle<Outcome> {
        match self {
            Call::Here(call) => tokio::spawn(call),
            Call::Task(task) => task,
        }
    }

    /// Ends the call.
    fn abort(self) {
        if let Call::Task(task) = self {
            task.abort();
        }
    }
}

impl Future for Call {
    type Output = Outcome;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        match self.get_mut() {
            Call::Here(call) => call.as_mut().poll(cx),
            Call::Task(task) => Pin::new(task).poll(cx).map(|joined| {
                joined.unwrap_or_else(|e| {
                    let message = format!("the call stopped: {e}");
                    Err(CallError::Protocol { tool: String::new(), server: String::new(), message })
                })
            }),
        }
    }
}

/// A call waiting for its client between two requests.
struct Parked {
    /// Whose call it is: only this caller resumes it.
    owner: Option<Owner>,
    call: JoinHandle<Outcome>,
    asks: mpsc::UnboundedReceiver<Ask>,
    answer: oneshot::Sender<Value>,
}

/// How far one request got with its call.
pub enum Step {
    /// The call ended (or could not be run).
    Done(Result<CallOutcome, CallError>),
    /// The server asked something: the client answers and calls again.
    Input(InputRequiredResult),
    /// The client cancelled its request; the call is cancelled downstream.
    Cancelled,
}

/// Parked calls allowed until serve sets its own cap (`--max-sessions`, whose default this is:
/// the gateway's `http.rs` checks that they agree).
pub const DEFAULT_LIMIT: usize = 512;

/// Why a `requestState` resumed nothing.
#[derive(Debug, PartialEq, Eq)]
pub enum Unresumed {
    /// This process issued it, and no call waits under it now: it was resumed, it expired, or
    /// its call ended.
    Ended,
    /// Another process issued it: another replica behind the same load balancer (or this one
    /// before a restart). Its call, if it still waits, waits there.
    Elsewhere,
}

impl Unresumed {
    /// What the client is told.
    pub fn message(&self) -> &'static str {
        match self {
            Unresumed::Ended => {
                "no call waits under this requestState (it ended or expired): call the tool again"
            }
            Unresumed::Elsewhere => {
                "this requestState was issued by another toolport replica (or by this one before a \
                 restart), where its call waits: route a client's retries to the replica that asked \
                 (load-balancer affinity), or call the tool again"
            }
        }
    }
}

/// The calls waiting for their clients.
pub struct Rounds {
    parked: Mutex<HashMap<String, Parked>>,
    limit: AtomicUsize,
    /// This process's name, the first part of every `requestState` it issues.
    replica: String,
}

impl Default for Rounds {
    fn default() -> Self {
        let replica = new_token(8).unwrap_or_else(|| format!("{:016x}", std::process::id()));
        Self { parked: Mutex::default(), limit: AtomicUsize::new(DEFAULT_LIMIT), replica }
    }
}

impl Rounds {
    /// How many calls may wait for their clients at once (`serve --max-sessions`).
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// Sets [`Rounds::limit`].
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit.max(1), Ordering::Relaxed);
    }

    /// Waits for `call` (`owner`'s) to end, for its server to ask something, or for the client
    /// to cancel.
    pub async fn drive(
        self: &Arc<Self>,
        mut call: Call,
        mut asks: mpsc::UnboundedReceiver<Ask>,
        cancelled: &CancellationToken,
        owner: Option<Owner>,
    ) -> Step {
        tokio::select! {
            outcome = &mut call => Step::Done(outcome),
            Some(ask) = asks.recv() => {
                if self.lock().len() >= self.limit() {
                    call.abort();
                    let message = format!(
                        "too many calls wait for their clients' answers ({}): answer one, or call again later",
                        self.limit()
                    );
                    return Step::Done(Err(CallError::Protocol { tool: String::new(), server: String::new(), message }));
                }
                let Some(token) = new_token(16).map(|t| format!("{}.{t}", self.replica)) else {
                    call.abort();
                    let message = "no randomness for a requestState".to_string();
                    return Step::Done(Err(CallError::Protocol { tool: String::new(), server: String::new(), message }));
                };
                let requests = [(KEY.to_string(), ask.request)].into_iter().collect();
                let call = call.into_task();
                self.park(token.clone(), Parked { owner, call, asks, answer: ask.answer });
                Step::Input(InputRequiredResult::new(Some(requests), Some(token)))
            }
            () = cancelled.cancelled() => {
                call.abort();
                Step::Cancelled
            }
        }
    }

    /// The call `token` names, its server given the client's answer (`owner`'s: another
    /// caller's is told no call waits, and the call stays parked); why not when no call waits
    /// under that name here.
    pub fn resume(
        &self,
        token: &str,
        owner: &Option<Owner>,
        responses: Option<&InputResponses>,
    ) -> Result<(Call, mpsc::UnboundedReceiver<Ask>), Unresumed> {
        let parked = {
            let mut parked = self.lock();
            match parked.get(token) {
                Some(waiting) if waiting.owner == *owner => parked.remove(token),
                Some(_) => return Err(Unresumed::Ended),
                None => None,
            }
        };
        let Some(parked) = parked else {
            return match token.split_once('.') {
                Some((replica, _)) if replica != self.replica => Err(Unresumed::Elsewhere),
                _ => Err(Unresumed::Ended),
            };
        };
        // A client that answers nothing has declined.
        let answer =
            responses.and_then(|r| r.get(KEY)).cloned().unwrap_or_else(|| json!({"action": "decline"}));
        let _ = parked.answer.send(answer);
        Ok((Call::Task(parked.call), parked.asks))
    }

    fn park(self: &Arc<Self>, token: String, parked: Parked) {
        self.lock().insert(token.clone(), parked);
        let rounds = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(PARK_LIMIT).await;
            let expired = rounds.upgrade().and_then(|r| r.lock().remove(&token));
            if let Some(parked) = expired {
                tracing::info!("a call waited {} s for its client's answer: cancelled", PARK_LIMIT.as_secs());
                parked.call.abort();
            }
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.parked.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// `bytes` random bytes as hex: 16 make a handle no client can guess.
fn new_token(bytes: usize) -> Option<String> {
    let mut bytes = vec![0u8; bytes];
    getrandom::fill(&mut bytes).ok()?;
    Some(hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, ElicitRequest, ElicitRequestParams};

    use super::*;

    fn question() -> InputRequest {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form", "message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        InputRequest::Elicitation(ElicitRequest::new(params))
    }

    #[tokio::test]
    async fn a_question_parks_the_call_and_the_answer_resumes_it() {
        let rounds = Arc::new(Rounds::default());
        let (asks_to, asks) = mpsc::unbounded_channel();
        let call = Call::here(async move {
            let (answer, answered) = oneshot::channel();
            let _ = asks_to.send(Ask { request: question(), answer });
            let said = answered.await.unwrap_or_default();
            let said = ContentBlock::text(said.to_string());
            Ok(CallOutcome { content: vec![said], structured: None, is_error: false, meta: None })
        });
        let never = CancellationToken::new();
        let owner =
            |subject: &str| Some(Owner { issuer: "https://issuer.test".into(), subject: subject.into() });
        let alice = owner("alice");
        let Step::Input(asked) = rounds.drive(call, asks, &never, alice.clone()).await else {
            panic!("no question")
        };
        let token = asked.request_state.clone().unwrap_or_default();
        assert_eq!(token.len(), 16 + 1 + 32, "{token}");
        assert_eq!(rounds.resume("not-ours", &alice, None).err(), Some(Unresumed::Ended));
        let elsewhere = Rounds::default().resume(&token, &alice, None).err();
        assert_eq!(elsewhere, Some(Unresumed::Elsewhere), "another replica's requestState");
        let responses: InputResponses =
            [(KEY.to_string(), json!({"action": "accept"}))].into_iter().collect();
        for someone_else in [owner("bob"), None] {
            let taken = rounds.resume(&token, &someone_else, Some(&responses)).err();
            assert_eq!(taken, Some(Unresumed::Ended), "{someone_else:?} resumed alice's call");
        }
        let resumed = rounds.resume(&token, &alice, Some(&responses));
        let (call, asks) = resumed.unwrap_or_else(|_| panic!("not parked for alice"));
        let Step::Done(Ok(outcome)) = rounds.drive(call, asks, &never, alice.clone()).await else {
            panic!("not done")
        };
        assert_eq!(outcome.texts().collect::<Vec<_>>(), [json!({"action": "accept"}).to_string()]);
        assert_eq!(rounds.resume(&token, &alice, None).err(), Some(Unresumed::Ended), "good for one retry");
    }

    /// A call that asks while as many wait as the limit allows is cancelled, saying why.
    #[tokio::test]
    async fn no_more_calls_wait_than_the_limit() {
        let rounds = Arc::new(Rounds::default());
        rounds.set_limit(1);
        let never = CancellationToken::new();
        let asking = || {
            let (asks_to, asks) = mpsc::unbounded_channel();
            let call = Call::here(async move {
                let (answer, answered) = oneshot::channel();
                let _ = asks_to.send(Ask { request: question(), answer });
                let _ = answered.await;
                Ok(CallOutcome { content: vec![], structured: None, is_error: false, meta: None })
            });
            (call, asks)
        };
        let (call, asks) = asking();
        assert!(matches!(rounds.drive(call, asks, &never, None).await, Step::Input(_)));
        let (call, asks) = asking();
        let Step::Done(Err(e)) = rounds.drive(call, asks, &never, None).await else {
            panic!("the second call waits too")
        };
        assert!(e.to_string().contains("too many calls wait for their clients' answers (1)"), "{e}");
    }
}
