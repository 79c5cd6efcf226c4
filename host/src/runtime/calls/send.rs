//! One request to a live server under its call timeout, and what a tool call and a read both
//! make of it going wrong: no answer in time, a connection that is gone (reported to the
//! supervisor when its watcher has not seen it yet), or the server's error. Each caller then
//! says it in its own error's words (`CallError`, `CatalogError`).

use std::time::Duration;

use rmcp::service::ServiceError;

use super::client_span::{self, Link};
use crate::runtime::connection::Connection;
use crate::runtime::event::Event;
use crate::runtime::failed_request::{is_transport_failure, service_error};
use crate::runtime::questions::person_clock::{self, PersonClock};
use crate::runtime::supervisor::Supervisor;

/// Why a request brought back nothing to use.
pub(super) enum ServerError<E> {
    /// No answer within the call timeout.
    Timeout,
    /// The connection is gone, and why (its end as the watcher saw it, else the failed request).
    Gone(String),
    /// The server (or the transport, for this request only) answered with an error.
    Failed(E),
}

/// How long a request may take: the server's call timeout, on the person clock for a tool call
/// (time a person spends answering the server's questions does not count).
pub(super) struct Deadline<'a> {
    pub(super) timeout: Duration,
    pub(super) clock: Option<&'a PersonClock>,
}

/// An error that may say the connection is gone.
pub(super) trait MaybeGone {
    /// The request's own failure, when it was rmcp's.
    fn service(&self) -> Option<&ServiceError>;
}

impl MaybeGone for ServiceError {
    fn service(&self) -> Option<&ServiceError> {
        Some(self)
    }
}

/// Waits for `request` to `server` on `conn` within `deadline` and sorts the outcome. A dropped
/// connection the watcher has not seen yet is reported to the supervisor: the failed request
/// is the evidence (an HTTP server that went away is only seen on the next request).
pub(super) async fn send<T, E: MaybeGone>(
    supervisor: &Supervisor,
    conn: &Connection,
    server: &str,
    deadline: Deadline<'_>,
    request: impl Future<Output = Result<T, E>>,
) -> Result<T, ServerError<E>> {
    let link = || Link { protocol: conn.protocol_version.clone(), transport: conn.network_transport };
    let request = client_span::on(link, request);
    let answered = match deadline.clock {
        Some(clock) => person_clock::within(clock, deadline.timeout, request).await,
        None => tokio::time::timeout(deadline.timeout, request).await.ok(),
    };
    match answered {
        None => Err(ServerError::Timeout),
        Some(Ok(result)) => Ok(result),
        Some(Err(e)) => match e.service().filter(|e| is_transport_failure(e)) {
            Some(failure) => {
                let reason = match conn.death_reason().await {
                    Some(reason) => reason,
                    None => {
                        let reason = service_error(failure);
                        let _ = supervisor.events.send(Event::Died {
                            server: server.to_string(),
                            generation: conn.generation,
                            reason: reason.clone(),
                        });
                        reason
                    }
                };
                Err(ServerError::Gone(reason))
            }
            None => Err(ServerError::Failed(e)),
        },
    }
}
