//! Connecting servers for the supervisor: all at once (a start, a retry, a reconcile) or
//! each recorded as it arrives (a start in the background); each attempt connects, lists the
//! tools and then the catalog, and its outcome goes into the server's slot.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use futures::future::join_all;
use futures::stream::FuturesUnordered;
use futures::{FutureExt as _, StreamExt as _};
use rmcp::model::Tool;
use tokio::sync::mpsc;

use super::state::Supervisor;
use crate::config::ResolvedServer;
use crate::plugin::PluginHost;
use crate::runtime::catalog::catalog_list;
use crate::runtime::catalog::merged::ServerCatalog;
use crate::runtime::connection::Connection;
use crate::runtime::event::Event;
use crate::runtime::listing_store::KnownListing;
use crate::runtime::progress::Progress;
use crate::runtime::questions::server_requests::Answers;
use crate::runtime::state::Link;
use crate::transport::ConnectError;

impl Supervisor {
    /// Connects the named active servers concurrently, each under its own timeouts, and
    /// records each outcome in its slot. Callers hold `ops`.
    pub(super) async fn connect(&self, names: &[String]) {
        let targets = self.targets(names);
        if targets.is_empty() {
            return;
        }
        let progress = Progress::new(self.options.progress.clone());
        let attempts = targets.iter().map(|(name, server)| self.attempt(&progress, name, server));
        let outcomes = join_all(attempts).await;
        progress.finish();
        for ((name, _), (outcome, catalog)) in targets.iter().zip(outcomes) {
            self.install(name, outcome, catalog);
        }
    }

    /// [`Supervisor::connect`], recording each outcome and rebuilding as soon as it arrives
    /// rather than after the slowest. Callers hold `ops`.
    ///
    /// Every outcome that arrived while the last rebuild ran joins the next one: a rebuild
    /// runs the pipeline over every live server, so one per server would cost servers × tools
    /// (100 servers arriving together: 100 rebuilds of up to 100 servers each). Batched, the
    /// slower the rebuilds the more each one takes in, and the surface ends the same.
    pub(super) async fn connect_each(&self, names: &[String]) {
        let targets = self.targets(names);
        let progress = Progress::new(self.options.progress.clone());
        let shown = &progress;
        let mut attempts: FuturesUnordered<_> = targets
            .iter()
            .map(|(name, server)| async move { (name, self.attempt(shown, name, server).await) })
            .collect();
        while let Some(first) = attempts.next().await {
            for (name, (outcome, catalog)) in arrived(first, &mut attempts) {
                self.install(name, outcome, catalog);
            }
            self.rebuild().await;
            // Wakes whoever waits for a tool's owner (`decided`), though nothing settled yet.
            self.settled.send_modify(|_| {});
        }
        drop(attempts);
        progress.finish();
    }

    /// The named servers that are active, with their resolutions.
    fn targets(&self, names: &[String]) -> Vec<(String, ResolvedServer)> {
        let state = self.lock();
        state
            .slots
            .iter()
            .filter(|s| s.resolved.active() && names.iter().any(|n| n == s.name()))
            .map(|s| (s.name().to_string(), s.resolved.clone()))
            .collect()
    }

    /// One server's connect, list and catalog listing, reported to `progress`.
    async fn attempt(&self, progress: &Progress, name: &str, server: &ResolvedServer) -> Attempt {
        progress.server(name);
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let events = self.events.clone();
        let answers = self.answers.clone();
        let outcome = open(server, self.plugins.host(), generation, events, answers).await;
        if let (Ok((conn, tools)), Some(store)) = (&outcome, &self.listings) {
            store.save(&server.def, &known_listing(&server.def.name, conn, tools));
        }
        progress.done(name, &outcome.as_ref().map(|(_, tools)| tools.len()).map_err(ToString::to_string));
        // Resources and prompts after the tools, so the reported outcome is the tools'; a
        // failure here is only a warning (`catalog_list`).
        let catalog = match &outcome {
            Ok((conn, _)) => catalog_list::list_catalog(name, conn, server.def.timeouts.list).await,
            Err(_) => ServerCatalog::default(),
        };
        (outcome, catalog)
    }

    /// Records one connect's outcome in `name`'s slot (if it is still defined).
    fn install(
        &self,
        name: &str,
        outcome: Result<(Arc<Connection>, Vec<Tool>), ConnectError>,
        catalog: ServerCatalog,
    ) {
        let mut state = self.lock();
        if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == name) {
            slot.checked = None;
            slot.known = None;
            slot.catalog = catalog;
            slot.link = match outcome {
                Ok((conn, tools)) => Link::Live { conn, tools },
                Err(error) => {
                    if error.is_authorization_required() {
                        tracing::debug!(server = %name, "waits for a sign-in");
                    }
                    Link::Failed(error.to_string())
                }
            };
        }
    }
}

/// What `server` listed live, as its last-known listing keeps it.
pub(super) fn known_listing(server: &str, conn: &Connection, tools: &[Tool]) -> KnownListing {
    KnownListing {
        server: server.to_string(),
        instructions: conn.peer.peer_info().and_then(|info| info.instructions.clone()),
        tools: tools.to_vec(),
    }
}

/// `first` and every other item of `pending` that is ready now, without waiting for the rest.
fn arrived<F: Future>(first: F::Output, pending: &mut FuturesUnordered<F>) -> Vec<F::Output> {
    let mut out = vec![first];
    while let Some(Some(next)) = pending.next().now_or_never() {
        out.push(next);
    }
    out
}

/// Expands `${VAR}` from the host environment at connect time, then connects and lists.
async fn open(
    server: &ResolvedServer,
    plugins: &PluginHost,
    generation: u64,
    events: mpsc::UnboundedSender<Event>,
    answers: Arc<Answers>,
) -> Result<(Arc<Connection>, Vec<Tool>), ConnectError> {
    let kind = server.transport.as_ref().map_err(|e| ConnectError::Failed(e.clone()))?;
    let def = server.def.expanded(|name| std::env::var(name).ok()).map_err(|e| ConnectError::Failed(e.0))?;
    Connection::open(&def, kind, plugins, generation, events, answers).await
}

/// What one connect attempt ends with: the session and its tools (or why not), and its catalog.
type Attempt = (Result<(Arc<Connection>, Vec<Tool>), ConnectError>, ServerCatalog);

#[cfg(test)]
mod tests {
    use futures::future::{BoxFuture, FutureExt as _, pending, ready};

    use super::*;

    #[tokio::test]
    async fn what_is_ready_joins_the_first_and_what_is_not_stays() {
        let mut attempts: FuturesUnordered<BoxFuture<'static, u32>> = FuturesUnordered::new();
        attempts.push(ready(2).boxed());
        attempts.push(pending().boxed());
        attempts.push(ready(3).boxed());
        let mut got = arrived(1, &mut attempts);
        got.sort_unstable();
        assert_eq!(got, [1, 2, 3]);
        assert_eq!(attempts.len(), 1, "the pending one is still there");
        assert_eq!(attempts.next().now_or_never(), None, "and was not waited for");
    }
}
