//! What the supervisor does with a connection's [`Event`]: a server that died goes to `error`
//! (its tools remembered, so a call can say why), a `list_changed` lists only that server's
//! changed part again.

use std::sync::Arc;

use super::state::{State, Supervisor};
use crate::runtime::catalog::catalog_list;
use crate::runtime::connection::Connection;
use crate::runtime::event::Event;
use crate::runtime::state::Link;

impl Supervisor {
    /// Applies one connection event: a dead server to `error`, a changed list listed again.
    pub(super) async fn handle(&self, event: Event) {
        let _ops = self.ops.lock().await;
        match event {
            Event::Died { server, generation, reason } => {
                {
                    let mut state = self.lock();
                    let State { slots, registry, gone, .. } = &mut *state;
                    let Some(slot) = slots.iter_mut().find(|s| s.name() == server) else { return };
                    if !slot.holds(generation) {
                        return;
                    }
                    gone.record(registry, &server, &reason);
                    slot.link = Link::Failed(reason);
                    slot.checked = None;
                }
                self.rebuild().await;
            }
            Event::ListChanged { server, generation } => {
                let (conn, def) = {
                    let state = self.lock();
                    let Some(slot) = state.slots.iter().find(|s| s.name() == server) else { return };
                    match slot.conn() {
                        Some(c) if c.generation == generation => (c.clone(), slot.resolved.def.clone()),
                        _ => return,
                    }
                };
                let listed = conn.list(def.timeouts.list).await;
                if let (Ok(tools), Some(store)) = (&listed, &self.listings) {
                    store.save(&def, &super::connect::known_listing(&server, &conn, tools));
                }
                {
                    let mut state = self.lock();
                    let Some(slot) = state.slots.iter_mut().find(|s| s.name() == server) else { return };
                    if !slot.holds(generation) {
                        return;
                    }
                    match listed {
                        Ok(tools) => slot.link = Link::Live { conn, tools },
                        Err(reason) => {
                            tracing::warn!(server = %server, "re-listing after list_changed failed: {reason}");
                            slot.link = Link::Failed(reason.to_string());
                            slot.checked = None;
                        }
                    }
                }
                self.rebuild().await;
            }
            Event::ResourcesChanged { server, generation } => {
                let Some((conn, timeout)) = self.live_conn(&server, generation) else { return };
                let (resources, templates) = catalog_list::list_resources(&server, &conn, timeout).await;
                let mut state = self.lock();
                if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == server)
                    && slot.holds(generation)
                {
                    slot.catalog.resources = resources;
                    slot.catalog.templates = templates;
                }
                drop(state);
                self.publish();
            }
            Event::PromptsChanged { server, generation } => {
                let Some((conn, timeout)) = self.live_conn(&server, generation) else { return };
                let prompts = catalog_list::list_prompts(&server, &conn, timeout).await;
                let mut state = self.lock();
                if let Some(slot) = state.slots.iter_mut().find(|s| s.name() == server)
                    && slot.holds(generation)
                {
                    slot.catalog.prompts = prompts;
                }
                drop(state);
                self.publish();
            }
        }
    }

    /// `server`'s connection if `generation` is still its live one, with its list timeout:
    /// a resources or prompts `list_changed` re-lists only that server, and only that part
    /// (its tools, and so the registry, are untouched). A failed re-list keeps the server
    /// connected with that list empty, as at connect.
    fn live_conn(&self, server: &str, generation: u64) -> Option<(Arc<Connection>, std::time::Duration)> {
        let state = self.lock();
        let slot = state.slots.iter().find(|s| s.name() == server)?;
        let conn = slot.conn().filter(|c| c.generation == generation)?;
        Some((conn.clone(), slot.resolved.def.timeouts.list))
    }
}
