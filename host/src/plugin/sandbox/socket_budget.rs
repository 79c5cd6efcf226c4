//! How many sockets a plugin's store may hold, and all plugins together.
//!
//! Every socket a guest opens is a file descriptor of the host's: one transport opened 19,983
//! of them, the process ran out, and a stdio server could no longer be started. So each store
//! may hold [`MAX_SOCKETS`] (TCP and UDP sockets and outgoing HTTP connections together), and
//! all stores together half of the process's descriptor limit, the other half staying the
//! host's (its servers' pipes, its own files and sockets).
//!
//! HTTP connections are counted exactly (a permit lives as long as the connection's I/O).
//! wasmtime closes a TCP or UDP socket without telling the host, so those are recounted in the
//! store's resource table at each new one: a store's own count is then exact, and the
//! process-wide total may run a little high until that store opens another socket or drops,
//! which errs towards refusing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::plugin::error::Fault;

/// Sockets one store may hold at once: a transport needs one or two.
pub(crate) const MAX_SOCKETS: usize = 32;
/// The least the plugins' share of descriptors is, however low the limit.
const MIN_PROCESS_SOCKETS: usize = 64;

/// Sockets (and HTTP connections) held by every plugin store in the process.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// What all plugins together may hold: half the descriptor limit as it is at first use (the
/// CLI raises its soft limit to the hard one at start, `raise_fd_limit`).
fn process_cap() -> usize {
    static CAP: OnceLock<usize> = OnceLock::new();
    *CAP.get_or_init(|| {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let limit = limit.and_then(|n| usize::try_from(n).ok()).unwrap_or(1 << 20);
        (limit / 2).max(MIN_PROCESS_SOCKETS)
    })
}

/// The soft limit on open files the host asks for at start, where the hard limit allows:
/// room for the plugins' share without handing children an absurd limit.
const FD_TARGET: u64 = 65_536;

/// Raises this process's soft limit on open files towards its hard limit (to [`FD_TARGET`]), as
/// servers commonly do: the plugins' share ([`process_cap`]) is half of what this leaves.
/// Failing is harmless (the share is then half of the lower limit).
pub fn raise_fd_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    let target = limit.maximum.map_or(FD_TARGET, |hard| hard.min(FD_TARGET));
    if limit.current.is_some_and(|soft| soft < target) {
        limit.current = Some(target);
        if let Err(e) = setrlimit(Resource::Nofile, limit) {
            tracing::debug!("cannot raise the open-file limit: {e}");
        }
    }
}

/// One store's sockets: shared by the socket functions and the HTTP hook of that store.
#[derive(Debug, Clone, Default)]
pub(crate) struct SocketBudget(Arc<Held>);

#[derive(Debug, Default)]
struct Held {
    /// TCP and UDP sockets as last counted (exact at each new socket).
    sockets: AtomicUsize,
    /// Outgoing HTTP connections now open.
    http: AtomicUsize,
    /// The first refusal, so the failure that follows can say why.
    refused: OnceLock<(&'static str, usize)>,
}

impl SocketBudget {
    /// Admits one TCP or UDP socket more, given how many this store holds now (`live`).
    pub fn admit_socket(&self, live: usize) -> bool {
        let before = self.0.sockets.swap(live, Ordering::AcqRel);
        if live > before {
            HELD.fetch_add(live - before, Ordering::AcqRel);
        } else {
            HELD.fetch_sub(before - live, Ordering::AcqRel);
        }
        if !self.admit() {
            return false;
        }
        self.0.sockets.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// Admits one outgoing HTTP connection, held until the permit drops.
    pub fn admit_http(&self) -> Option<HttpPermit> {
        if !self.admit() {
            return None;
        }
        self.0.http.fetch_add(1, Ordering::AcqRel);
        Some(HttpPermit(Arc::clone(&self.0)))
    }

    /// Takes one from the process-wide count if both caps allow, else records why not.
    fn admit(&self) -> bool {
        let mine = self.0.sockets.load(Ordering::Acquire) + self.0.http.load(Ordering::Acquire);
        if mine >= MAX_SOCKETS {
            return self.refuse("its socket limit", MAX_SOCKETS);
        }
        let cap = process_cap();
        if HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < cap).then_some(n + 1)).is_err() {
            return self.refuse("the host's socket limit for plugins", cap);
        }
        true
    }

    /// Records the first refusal (and warns about it once: a guest opening sockets in a loop
    /// would otherwise write a warning per attempt, 99,968 of them in one call).
    fn refuse(&self, what: &'static str, limit: usize) -> bool {
        if self.0.refused.set((what, limit)).is_ok() {
            tracing::warn!("refused a plugin socket: {what} ({limit})");
        } else {
            tracing::debug!("refused a plugin socket again: {what} ({limit})");
        }
        false
    }

    /// Why a socket was refused, if one was: the host's record, which wins over whatever the
    /// guest made of the refusal.
    pub fn refusal(&self) -> Option<Fault> {
        self.0.refused.get().map(|&(what, limit)| Fault::SocketLimit { what, limit })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // HTTP permits hold this alive, so only the sockets are left to give back.
        HELD.fetch_sub(*self.sockets.get_mut(), Ordering::AcqRel);
    }
}

/// One outgoing HTTP connection's place in the budget.
pub(crate) struct HttpPermit(Arc<Held>);

impl Drop for HttpPermit {
    fn drop(&mut self) {
        self.0.http.fetch_sub(1, Ordering::AcqRel);
        HELD.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_stops_at_its_cap_counting_sockets_and_connections_together() {
        let budget = SocketBudget::default();
        let permits: Vec<HttpPermit> = (0..4).filter_map(|_| budget.admit_http()).collect();
        assert_eq!(permits.len(), 4);
        // The guest holds 27 sockets by the table's count when it asks for the 28th.
        assert!(budget.admit_socket(27));
        assert!(!budget.admit_socket(28), "27 + 1 sockets and 4 connections make 32");
        assert_eq!(
            budget.refusal().map(|f| f.to_string()).as_deref(),
            Some("reached its socket limit (32 open sockets)")
        );
        // Closed sockets are noticed at the next recount.
        assert!(budget.admit_socket(2));
        drop(permits);
        assert_eq!(budget.0.http.load(Ordering::Acquire), 0);
    }
}
