//! The rebuild: every live server (and every one still connecting, by its last-known
//! listing) through the pipeline in definition order, the result installed as the surface with
//! each slot's trust, and the [`Revision`](super::state::Revision) bumped for what changed. Below everything that
//! changes the servers (`connect.rs`, `reconcile.rs`, `approve.rs`, `on_event.rs`), which
//! rebuild after each change; over `pins.rs`, whose lock each rebuild reads and writes.

use super::state::Supervisor;
use crate::runtime::registry::pipeline::{self, LiveServer};
use crate::runtime::state::{Link, live_catalog};

impl Supervisor {
    /// Runs the pipeline over every live server and installs the result. Callers hold `ops`.
    pub(super) async fn rebuild(&self) {
        let (resolved, live) = {
            let state = self.lock();
            let live = state
                .slots
                .iter()
                .enumerate()
                .filter_map(|(index, slot)| match &slot.link {
                    Link::Live { conn, tools } => Some(LiveServer {
                        index,
                        def: slot.resolved.def.clone(),
                        conn: Some(conn.clone()),
                        instructions: conn.peer.peer_info().and_then(|info| info.instructions.clone()),
                        tools: tools.clone(),
                    }),
                    // Still connecting: its last-known listing stands in, through every step.
                    Link::Idle if slot.resolved.active() => slot.known.as_ref().map(|known| LiveServer {
                        index,
                        def: slot.resolved.def.clone(),
                        conn: None,
                        instructions: known.instructions.clone(),
                        tools: known.tools.clone(),
                    }),
                    _ => None,
                })
                .collect();
            (state.resolved.clone(), live)
        };
        let settings = &resolved.settings;
        let lock = self.current_pins(&resolved);
        // An ACP client's own servers (no workspace file) are not the store's to edit.
        let commands = resolved.workspace_file.is_some();
        let outcome = pipeline::run(
            &self.plugins,
            (settings, commands),
            &self.options.builtin_tools,
            &self.output_checks,
            &lock,
            live,
        )
        .await;
        let mut state = self.lock();
        for (index, generation, checked) in outcome.checked {
            if let Some(slot) = state.slots.get_mut(index)
                && slot.holds(generation)
            {
                slot.checked = Some(checked);
            }
        }
        state.from_history.record(&outcome.registry);
        state.registry = outcome.registry;
        drop(state);
        self.settle_trust(outcome.trust);
        self.publish();
        // Wakes whoever waits for a server or for a listing (`wait_for_server`, `listable`).
        self.settled.send_modify(|_| {});
    }

    /// Compares the surface with what the last revision was taken of and bumps the parts
    /// that differ. Called after every step that can change it.
    pub(super) fn publish(&self) {
        let (tools, surface) = {
            let state = self.lock();
            (state.registry.records().to_vec(), state.resolved.settings.surface)
        };
        let catalog = live_catalog(&self.lock().slots);
        let mut published = self.published.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = *self.revision.borrow();
        let (old_tools, old_catalog, old_surface) = &*published;
        // The workspace's `surface` switching between full and lazy changes what `serve` lists.
        if *old_tools != tools || *old_surface != surface {
            next.tools += 1;
        }
        if old_catalog.resources != catalog.resources || old_catalog.templates != catalog.templates {
            next.resources += 1;
        }
        if old_catalog.prompts != catalog.prompts {
            next.prompts += 1;
        }
        *published = (tools, catalog, surface);
        if next != *self.revision.borrow() {
            self.revision.send_replace(next);
        }
    }
}
