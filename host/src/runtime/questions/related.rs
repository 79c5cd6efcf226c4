//! Which call a server's question belongs to. One server connection carries the calls of every
//! client of a `serve`, so a server's `elicitation/create`, `sampling/createMessage`,
//! `roots/list` or log message must reach the client whose call caused it, and no other: a
//! password asked during one client's call shown to another, and its answer sent back, is the
//! leak this module exists to stop.
//!
//! A host numbers each call it makes (`CallContext::caller`); the call registers its request
//! id and that number here while it runs ([`InFlight::enter`]). A server's request is then
//! matched:
//! - over streamable HTTP, by the response stream it arrived on (rmcp marks each with
//!   `InboundStreamOrigin`, SEP-2260): the call whose POST it came back on;
//! - over a transport that cannot tell (stdio, plugins), or on HTTP's standalone stream (where
//!   servers that do not relate their requests send them), only when exactly one call is in
//!   flight on that connection;
//! - in an input-required round (2026-07-28), by the call that is asking, which passes its
//!   own number.
//!
//! Anything else is unknown, and the host declines it rather than guess. `roots/list` is matched
//! by its stream only ([`InFlight::of_request_marked`]): its answer outlives the call.

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{Extensions, RequestId};
use rmcp::service::InboundStreamOrigin;

pub use crate::observe::Caller;

/// What a server's message relates to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Related {
    /// A call of this caller.
    Caller(Caller),
    /// No call is in flight on the connection: the server speaks on its own.
    NoCall,
    /// A call, but which one cannot be told (several in flight, or one the host did not name).
    Unknown,
}

impl Related {
    /// The caller, when known.
    pub fn caller(self) -> Option<Caller> {
        match self {
            Self::Caller(caller) => Some(caller),
            _ => None,
        }
    }
}

/// The calls in flight on one connection: request id → caller. Shared by the connection's
/// handler, which receives the server's requests, and the calls made on it.
#[derive(Debug, Clone, Default)]
pub(crate) struct InFlight(Arc<Mutex<Calls>>);

/// Each call in flight: its request id and its caller.
type Calls = Vec<(RequestId, Option<Caller>)>;

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the request `id`, sent for `caller` (`None`: a call the host did not number),
    /// until the guard drops.
    pub fn enter(&self, id: RequestId, caller: Option<Caller>) -> Entered {
        self.lock().push((id.clone(), caller));
        Entered { calls: self.clone(), id }
    }

    /// What a server's request relates to, from the marks its transport put in `extensions`.
    pub fn of_request(&self, extensions: &Extensions) -> Related {
        let calls = self.lock();
        match extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => match calls.iter().find(|(c, _)| c == id) {
                Some((_, Some(caller))) => Related::Caller(*caller),
                Some((_, None)) => Related::Unknown,
                // The POST of a request that is not a tool call (a read, a listing).
                None => Related::Unknown,
            },
            Some(InboundStreamOrigin::Unassociated) | None => only(&calls),
        }
    }

    /// The caller of a server's request only when its stream names the call, never by there
    /// being one call in flight. For `roots/list`: a server keeps the roots it was told past the
    /// call that asked (server-everything asks on `list_changed` and answers from its copy), so
    /// a guess would hand one client's roots to the next client's calls.
    pub fn of_request_marked(&self, extensions: &Extensions) -> Option<Caller> {
        match extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(_)) => self.of_request(extensions).caller(),
            _ => None,
        }
    }

    /// What a server's notification relates to: no transport marks those, so only a lone call
    /// in flight is known.
    pub fn of_notification(&self) -> Related {
        only(&self.lock())
    }
}

/// The one call in flight, or none, or unknown among several.
fn only(calls: &[(RequestId, Option<Caller>)]) -> Related {
    match calls {
        [] => Related::NoCall,
        [(_, Some(caller))] => Related::Caller(*caller),
        _ => Related::Unknown,
    }
}

/// A call's entry in [`InFlight`], removed with the call.
pub(crate) struct Entered {
    calls: InFlight,
    id: RequestId,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        if let Some(at) = calls.iter().position(|(id, _)| *id == self.id) {
            calls.swap_remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marked(origin: InboundStreamOrigin) -> Extensions {
        let mut extensions = Extensions::new();
        extensions.insert(origin);
        extensions
    }

    #[test]
    fn a_request_is_matched_by_its_stream_or_by_being_the_only_call() {
        let calls = InFlight::default();
        assert_eq!(calls.of_request(&Extensions::new()), Related::NoCall);
        let one = calls.enter(RequestId::Number(10), Some(Caller(1)));
        assert_eq!(calls.of_request(&Extensions::new()), Related::Caller(Caller(1)));
        assert_eq!(calls.of_notification(), Related::Caller(Caller(1)));
        let two = calls.enter(RequestId::Number(11), Some(Caller(2)));
        // Two calls and a transport that cannot tell: nobody is guessed.
        assert_eq!(calls.of_request(&Extensions::new()), Related::Unknown);
        assert_eq!(calls.of_notification(), Related::Unknown);
        // The stream it came on tells.
        let on_two = marked(InboundStreamOrigin::OutboundRequest(RequestId::Number(11)));
        assert_eq!(calls.of_request(&on_two), Related::Caller(Caller(2)));
        assert_eq!(calls.of_request_marked(&on_two), Some(Caller(2)));
        assert_eq!(calls.of_request(&marked(InboundStreamOrigin::Unassociated)), Related::Unknown);
        let elsewhere = marked(InboundStreamOrigin::OutboundRequest(RequestId::Number(99)));
        assert_eq!(calls.of_request(&elsewhere), Related::Unknown);
        drop(two);
        assert_eq!(calls.of_request(&Extensions::new()), Related::Caller(Caller(1)));
        // Roots are never guessed: only the stream names their caller.
        assert_eq!(calls.of_request_marked(&Extensions::new()), None);
        drop(one);
        assert_eq!(calls.of_notification(), Related::NoCall);
    }

    #[test]
    fn a_call_the_host_did_not_name_is_unknown() {
        let calls = InFlight::default();
        let _entered = calls.enter(RequestId::Number(1), None);
        assert_eq!(calls.of_request(&Extensions::new()), Related::Unknown);
    }
}
