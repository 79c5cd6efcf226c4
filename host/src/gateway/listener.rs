//! Accepting `serve --http` connections. axum's own `serve` sets no timer, so hyper never
//! times out a request's headers: 19,990 connections that each sent half a header held
//! 20,000 descriptors, and the next client, token and all, could not connect. Here every
//! connection has [`ConnectionLimits::header_timeout`] to send each request's headers (an idle
//! keep-alive connection too), and connections are capped in all and per peer address, so
//! one address cannot take every place; the rest are refused at once with a 503.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// How long open connections get to finish once serve stops (streams end with the runtime's
/// cancellation anyway; this only bounds a slow writer).
const SHUTDOWN_WAIT: Duration = Duration::from_millis(500);
/// The pause after a failed `accept` (out of descriptors, most likely), so the loop does not
/// spin while connections close.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);
/// What a refused connection is told, if its socket takes it at once.
const REFUSED: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: 50\r\n\
connection: close\r\n\r\ntoo many connections to toolport serve; try again\n";

/// Caps on connections.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once, from everyone.
    pub total: usize,
    /// Connections open at once from one peer address.
    pub per_peer: usize,
    /// How long a client has to send a request's headers (and an idle connection to start
    /// its next request).
    pub header_timeout: Duration,
}

/// Serves `router` on `listener` until `stop` is cancelled.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    let open = Open::default();
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::debug!("accept failed: {e}");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let Some(place) = open.take(peer.ip(), &limits) else {
            refuse(&stream, peer.ip());
            continue;
        };
        // The peer's address in each request's extensions, as axum's `ConnectInfo`: the caller
        // a rate limit counts when no token names one (`rate_limit.rs`).
        let routed = TowerToHyperService::new(router.clone());
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            hyper::service::Service::call(&routed, request)
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _place = place;
            if let Err(e) = connection.await {
                tracing::trace!("connection from {peer} ended: {e}");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_WAIT, graceful.shutdown()).await.is_err() {
        tracing::debug!("connections still open after {} ms: dropped", SHUTDOWN_WAIT.as_millis());
    }
    Ok(())
}

/// Tells a refused connection why, if its socket takes the bytes without waiting, and closes it.
fn refuse(stream: &TcpStream, peer: IpAddr) {
    tracing::debug!("refused a connection from {peer}: connection limit");
    let _ = stream.try_write(REFUSED);
}

/// The connections open now, in all and per peer.
#[derive(Default, Clone)]
struct Open(Arc<Mutex<Counts>>);

#[derive(Default)]
struct Counts {
    total: usize,
    by_peer: HashMap<IpAddr, usize>,
}

impl Open {
    /// A place for one more connection from `peer`, if the limits leave one.
    fn take(&self, peer: IpAddr, limits: &ConnectionLimits) -> Option<Place> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let from_peer = counts.by_peer.get(&peer).copied().unwrap_or(0);
        if counts.total >= limits.total || from_peer >= limits.per_peer {
            return None;
        }
        counts.total += 1;
        counts.by_peer.insert(peer, from_peer + 1);
        Some(Place { open: self.clone(), peer })
    }
}

/// One connection's place, given back when the connection ends.
struct Place {
    open: Open,
    peer: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = self.open.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.by_peer.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                counts.by_peer.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_capped_in_all_and_per_peer_and_given_back() {
        let limits = ConnectionLimits { total: 3, per_peer: 2, header_timeout: Duration::from_secs(1) };
        let open = Open::default();
        let (a, b): (IpAddr, IpAddr) = ([10, 0, 0, 1].into(), [10, 0, 0, 2].into());
        let first = open.take(a, &limits);
        let second = open.take(a, &limits);
        assert!(first.is_some() && second.is_some());
        assert!(open.take(a, &limits).is_none(), "a third from one peer");
        let other = open.take(b, &limits);
        assert!(other.is_some());
        assert!(open.take(b, &limits).is_none(), "a fourth in all");
        drop(first);
        assert!(open.take(a, &limits).is_some(), "a place given back is free again");
    }
}
