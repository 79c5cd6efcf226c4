//! What a person or a config change asks of the supervisor: one server connected again
//! (`retry`), or a new resolution applied with as few reconnects as it needs (`reconcile`).

use std::sync::Arc;

use anyhow::Context as _;
use futures::future::join_all;

use super::state::Supervisor;
use crate::config::{Resolved, ResolvedServer};
use crate::runtime::connection::Connection;
use crate::runtime::state::{Link, Slot};

impl Supervisor {
    /// Reconnects only `name` (closing its old session first), then re-checks every server in
    /// definition order. The others keep their sessions.
    pub async fn retry(&self, name: &str) -> anyhow::Result<()> {
        let _ops = self.ops.lock().await;
        let old = {
            let mut state = self.lock();
            let slot = state
                .slots
                .iter_mut()
                .find(|s| s.name() == name)
                .with_context(|| format!("Unknown MCP server: {name}"))?;
            if !slot.resolved.enabled {
                anyhow::bail!("MCP server is not enabled in this workspace: {name}");
            }
            if slot.resolved.paused {
                anyhow::bail!("MCP server is paused in this session: {name}");
            }
            let old = slot.conn().cloned();
            slot.link = Link::Idle;
            slot.checked = None;
            old
        };
        if let Some(conn) = old {
            conn.close().await;
        }
        self.connect(&[name.to_string()]).await;
        // Until the server is back, a call of one of its tools still hears why it went away
        // (not `Unknown MCP tool`); once it is, that record is stale.
        {
            let mut state = self.lock();
            let back = state.slots.iter().any(|s| s.name() == name && s.conn().is_some());
            if back {
                state.gone.forget(name);
            }
        }
        self.rebuild().await;
        Ok(())
    }

    /// Applies a new resolution: closes servers no longer active, connects only the newly
    /// active or changed ones, leaves the rest untouched, and rebuilds in the new order.
    pub async fn reconcile(&self, resolved: Resolved) {
        let _ops = self.ops.lock().await;
        let (to_close, to_connect) = {
            let mut state = self.lock();
            let mut old: Vec<Slot> = std::mem::take(&mut state.slots);
            let mut to_connect = Vec::new();
            let mut slots = Vec::with_capacity(resolved.servers.len());
            for server in &resolved.servers {
                let kept =
                    old.iter().position(|s| unchanged(&s.resolved, server)).map(|i| old.swap_remove(i));
                match kept {
                    Some(mut slot) => {
                        slot.resolved = server.clone();
                        slots.push(slot);
                    }
                    None => {
                        if server.active() {
                            to_connect.push(server.def.name.clone());
                        }
                        state.gone.forget(&server.def.name);
                        slots.push(Slot::new(server.clone()));
                    }
                }
            }
            let to_close: Vec<Arc<Connection>> = old.iter().filter_map(|s| s.conn().cloned()).collect();
            for slot in &old {
                state.gone.forget(slot.name());
            }
            state.slots = slots;
            state.set_resolved(resolved);
            (to_close, to_connect)
        };
        join_all(to_close.iter().map(|c| c.close())).await;
        self.connect(&to_connect).await;
        self.rebuild().await;
    }
}

/// A server keeps its session across a reconcile only when it was and stays active with the
/// very same definition.
fn unchanged(old: &ResolvedServer, new: &ResolvedServer) -> bool {
    old.def == new.def && old.transport == new.transport && old.active() && new.active()
}
