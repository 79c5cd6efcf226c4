//! The ids of the questions `serve` puts to a 2025-11-25 session (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`, `ping`), made unguessable. rmcp numbers a server's
//! requests per session from 0, so the answer to a confirmation toolport asks before a
//! destructive call could be sent by anyone who could post on the session: `{"id": 0,
//! "result": {"action": "accept"}}`. Here, between rmcp's service and its session worker, each
//! request going out gets a random id (128 bits) in place of rmcp's number, and a response
//! coming in is let through only when it names one of them, restored to rmcp's number; any
//! other response is dropped (logged), so the question stays open for the client that was
//! asked. A `notifications/cancelled` of a request going out names it by the same random id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::transport::Transport;

/// The random bytes of an id: 128 bits, as a UUID's.
const ID_BYTES: usize = 16;

/// A session's transport with its questions' ids replaced (module doc).
pub struct QuestionIds<T> {
    inner: T,
    asked: Arc<Mutex<Asked>>,
}

/// The questions of one session waiting for an answer: the id sent for each, and back.
#[derive(Default)]
struct Asked {
    /// The id the client was given → rmcp's.
    sent: HashMap<RequestId, RequestId>,
    /// rmcp's id → the one the client was given.
    ours: HashMap<RequestId, RequestId>,
}

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum QuestionIdsError<E> {
    /// The session's own transport failed.
    #[error(transparent)]
    Inner(E),
    /// The system gave no randomness for an id (not expected).
    #[error("no randomness for a question's id")]
    NoRandomness,
}

impl<T> QuestionIds<T> {
    /// `inner` with its questions' ids replaced.
    pub fn new(inner: T) -> Self {
        Self { inner, asked: Arc::default() }
    }
}

fn lock(asked: &Mutex<Asked>) -> MutexGuard<'_, Asked> {
    asked.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A new random id: 32 hex digits.
fn random_id() -> Option<RequestId> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes).ok()?;
    Some(RequestId::String(hex::encode(bytes).into()))
}

impl Asked {
    /// `message` as the client is sent it: a request under a new random id (remembered), a
    /// cancellation of one under the id the client knows.
    fn outgoing(&mut self, mut message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        match &mut message {
            JsonRpcMessage::Request(request) => {
                let random = random_id()?;
                let theirs = std::mem::replace(&mut request.id, random.clone());
                self.sent.insert(random.clone(), theirs.clone());
                self.ours.insert(theirs, random);
            }
            JsonRpcMessage::Notification(notification) => {
                if let ServerNotification::CancelledNotification(cancelled) = &mut notification.notification
                    && let Some(id) = cancelled.params.request_id.as_mut()
                    && let Some(random) = self.ours.remove(id)
                {
                    self.sent.remove(&random);
                    *id = random;
                }
            }
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
        }
        Some(message)
    }

    /// `message` as rmcp is handed it: an answer to one of this session's questions under
    /// rmcp's id; `None` for an answer to no question asked (dropped).
    fn incoming(&mut self, mut message: ClientJsonRpcMessage) -> Option<ClientJsonRpcMessage> {
        let id = match &mut message {
            JsonRpcMessage::Response(response) => &mut response.id,
            JsonRpcMessage::Error(error) => match error.id.as_mut() {
                Some(id) => id,
                // An error about a message the client could not read names no question.
                None => return Some(message),
            },
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => return Some(message),
        };
        let theirs = self.sent.remove(id)?;
        self.ours.remove(&theirs);
        *id = theirs;
        Some(message)
    }
}

impl<T> Transport<RoleServer> for QuestionIds<T>
where
    T: Transport<RoleServer>,
{
    type Error = QuestionIdsError<T::Error>;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let item = lock(&self.asked).outgoing(item);
        let sent = item.map(|item| self.inner.send(item));
        async move {
            match sent {
                Some(sent) => sent.await.map_err(QuestionIdsError::Inner),
                None => Err(QuestionIdsError::NoRandomness),
            }
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let message = self.inner.receive().await?;
            let passed = lock(&self.asked).incoming(message);
            match passed {
                Some(message) => return Some(message),
                None => tracing::info!("dropped a response to no question this session was asked"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await.map_err(QuestionIdsError::Inner)
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CancelledNotification, CancelledNotificationParam, ClientResult, ServerRequest};
    use serde_json::json;

    use super::*;

    fn ping(id: i64) -> ServerJsonRpcMessage {
        let request: ServerRequest =
            serde_json::from_value(json!({"method": "ping"})).unwrap_or_else(|e| panic!("{e}"));
        JsonRpcMessage::request(request, RequestId::Number(id))
    }

    fn answer(id: RequestId) -> ClientJsonRpcMessage {
        JsonRpcMessage::response(ClientResult::empty(()), id)
    }

    fn id_of_request(message: &ServerJsonRpcMessage) -> RequestId {
        match message {
            JsonRpcMessage::Request(request) => request.id.clone(),
            _ => panic!("not a request"),
        }
    }

    fn id_of_answer(message: &ClientJsonRpcMessage) -> RequestId {
        match message {
            JsonRpcMessage::Response(response) => response.id.clone(),
            _ => panic!("not a response"),
        }
    }

    #[test]
    fn a_question_goes_out_under_a_random_id_and_only_its_answer_comes_back() {
        let mut asked = Asked::default();
        let sent = asked.outgoing(ping(0)).unwrap_or_else(|| panic!("no randomness"));
        let random = id_of_request(&sent);
        let RequestId::String(text) = &random else { panic!("a number: {random:?}") };
        assert_eq!(text.len(), 32, "{text}");
        assert_ne!(id_of_request(&asked.outgoing(ping(1)).unwrap_or_else(|| panic!())), random);
        assert!(asked.incoming(answer(RequestId::Number(0))).is_none(), "rmcp's own number was taken");
        assert!(asked.incoming(answer(RequestId::String("guess".into()))).is_none());
        let back = asked.incoming(answer(random.clone())).unwrap_or_else(|| panic!("the answer was dropped"));
        assert_eq!(id_of_answer(&back), RequestId::Number(0));
        assert!(asked.incoming(answer(random)).is_none(), "a question is answered once");
    }

    #[test]
    fn a_cancellation_names_the_question_as_the_client_knows_it() {
        let mut asked = Asked::default();
        let random = id_of_request(&asked.outgoing(ping(7)).unwrap_or_else(|| panic!()));
        let cancelled = ServerNotification::CancelledNotification(CancelledNotification::new(
            CancelledNotificationParam::new(Some(RequestId::Number(7)), None),
        ));
        let sent = asked.outgoing(JsonRpcMessage::notification(cancelled));
        let Some(JsonRpcMessage::Notification(sent)) = sent else { panic!("not a notification") };
        let ServerNotification::CancelledNotification(sent) = sent.notification else {
            panic!("not cancelled")
        };
        assert_eq!(sent.params.request_id, Some(random.clone()));
        assert!(asked.incoming(answer(random)).is_none(), "a cancelled question takes no answer");
    }
}
