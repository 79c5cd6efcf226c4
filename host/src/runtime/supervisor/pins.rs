//! The supervisor's side of the tool pins (`.toolport/tools.lock`, beside the workspace file):
//! the lock read before each rebuild, first sights written after it, each slot's held tools
//! kept, and the lock edited under its file lock (what `approve.rs` pins through). The
//! verdicts themselves are the pipeline's (`registry/trust_gate.rs`) over `trust::pins`.
//!
//! A workspace without a workspace file (an ACP client's own servers, an embedding host) keeps
//! its pins in memory for the runtime's life: nothing is written, and a change while it runs
//! still holds the tool.

use std::path::Path;

use super::lock_file::{lock_path, read_lock};
use super::state::Supervisor;
use crate::config::{EditError, LockAt, Resolved, TrustMode, edit_text};
use crate::observe::Observer;
use crate::runtime::registry::trust_gate::ServerTrust;
use crate::runtime::state::Slot;
use crate::trust::audit::{self, Action, Decision};
use crate::trust::{InstructionsVerdict, Lock, Pin};

impl Supervisor {
    /// The lock as it is now for `resolved`'s workspace: empty under trust `off`; read from
    /// the file, else (a read failing while running, or no workspace file) the last one known;
    /// with the first sights the file could not take laid over it.
    pub(super) fn current_pins(&self, resolved: &Resolved) -> Lock {
        if resolved.settings.trust == TrustMode::Off {
            return Lock::default();
        }
        let mut known = self.pins.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(path) = lock_path(resolved) {
            match read_lock(&path) {
                Ok(lock) => *known = lock,
                Err(e) => tracing::warn!("the tool pins stay as last read: {e}"),
            }
        }
        let unsaved = self.unsaved.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        record_sights(&mut known, &first_sights_of(&unsaved));
        known.clone()
    }

    /// The servers whose pins hold a tool of their own named `tool`: in `.toolport/tools.lock`
    /// (else, without a workspace file or when it cannot be read, the pins kept in memory),
    /// and the first sights the file could not take. Where a tool the surface does not hold
    /// now was seen before, whatever the trust mode. Takes the state lock only to find the file.
    pub(in crate::runtime) fn pinned_owners(&self, tool: &str) -> Vec<String> {
        let owners = |lock: &Lock| -> Vec<String> {
            let pinned = lock.servers.iter().filter(|(_, pins)| pins.tools.contains_key(tool));
            pinned.map(|(server, _)| server.clone()).collect()
        };
        let path = lock_path(&self.lock().resolved);
        let mut found = match path.map(|path| read_lock(&path)) {
            Some(Ok(lock)) => owners(&lock),
            _ => owners(&self.pins.lock().unwrap_or_else(|poisoned| poisoned.into_inner())),
        };
        found.extend(owners(&self.unsaved.lock().unwrap_or_else(|poisoned| poisoned.into_inner())));
        found
    }

    /// After a rebuild: each slot's trust installed (a newly held tool recorded in the audit
    /// trail), and the first sights written into the lock. Callers hold `ops`.
    pub(super) fn settle_trust(&self, verdicts: Vec<(usize, u64, ServerTrust)>) {
        let (resolved, first_sights) = {
            let mut state = self.lock();
            let mut by_slot: Vec<Option<ServerTrust>> = (0..state.slots.len()).map(|_| None).collect();
            for (index, generation, verdict) in verdicts {
                if state.slots.get(index).is_some_and(|s| s.holds(generation))
                    && let Some(place) = by_slot.get_mut(index)
                {
                    *place = Some(verdict);
                }
            }
            let mut first_sights: Sights = Vec::new();
            for (slot, verdict) in state.slots.iter_mut().zip(by_slot) {
                if let Some(verdict) = &verdict {
                    record_new_holds(&self.options.observer, slot, verdict);
                    let instructions = match &verdict.instructions {
                        InstructionsVerdict::New(pin) => Some(pin.clone()),
                        _ => None,
                    };
                    if !verdict.record.is_empty() || instructions.is_some() {
                        first_sights.push((slot.name().to_string(), verdict.record.clone(), instructions));
                    }
                }
                slot.trust = verdict;
            }
            (state.resolved.clone(), first_sights)
        };
        if first_sights.is_empty() {
            return;
        }
        let written = self.edit_pins(&resolved, |lock| record_sights(lock, &first_sights));
        let (pinned, kept) = match written {
            Ok(pinned) => (pinned, ""),
            Err(e) => {
                // Kept in memory: a later change of these tools in this process is still held.
                tracing::warn!("cannot record the tool pins, kept in memory while this runs: {e}");
                let pinned = {
                    let mut unsaved = self.unsaved.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    record_sights(&mut unsaved, &first_sights)
                };
                let mut known = self.pins.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                record_sights(&mut known, &first_sights);
                (pinned, ", kept in memory: the lock cannot be written")
            }
        };
        for (server, tool, upgraded) in &pinned {
            let reason = if *upgraded { "re-pinned with _meta and icons" } else { "first sight" };
            audit::record(
                &self.options.observer,
                Decision {
                    action: Action::Pinned,
                    server,
                    tool: Some(tool),
                    rule: None,
                    reason: &format!("{reason}{kept}"),
                },
            );
        }
    }

    /// Applies `edit` to the lock under its file lock (re-read first) and writes it if it
    /// changed; without a workspace file, or without its `.toolport/` folder, to the pins kept
    /// in memory only (a lock is never what creates the folder).
    pub(super) fn edit_pins<T>(
        &self,
        resolved: &Resolved,
        edit: impl FnOnce(&mut Lock) -> T,
    ) -> Result<T, EditError> {
        let path = lock_path(resolved).filter(|p| p.parent().is_some_and(Path::is_dir));
        let mut known = self.pins.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(path) = path else {
            return Ok(edit(&mut known));
        };
        let (out, lock) = edit_text(&path, LockAt::BesideInWorkspace, |path, text| {
            let mut lock = Lock::parse(path, text.unwrap_or(""))?;
            let before = lock.clone();
            let out = edit(&mut lock);
            let bytes = (lock != before).then(|| lock.render().into_bytes());
            Ok((bytes, (out, lock)))
        })?;
        *known = lock;
        Ok(out)
    }
}

/// Per server: its tools' first sights (or a `FORM_1` pin's replacement, `Pin::upgrades`)
/// and its instructions' first sight.
type Sights = Vec<(String, Vec<(String, Pin)>, Option<Pin>)>;

/// Writes `sights` into `lock`, only where no one pinned meanwhile (another toolport, a
/// person's approval); each tool pinned as (server, tool, whether it replaced a `FORM_1` pin).
fn record_sights(lock: &mut Lock, sights: &Sights) -> Vec<(String, String, bool)> {
    let mut pinned = Vec::new();
    for (server, tools, instructions) in sights {
        let pins = lock.servers.entry(server.clone()).or_default();
        if let Some(pin) = instructions
            && pins.instructions.is_none()
        {
            pins.instructions = Some(pin.clone());
        }
        for (tool, pin) in tools {
            let upgraded = match pins.tools.get(tool) {
                None => false,
                Some(old) if pin.upgrades(old) => true,
                Some(_) => continue,
            };
            pins.tools.insert(tool.clone(), pin.clone());
            pinned.push((server.clone(), tool.clone(), upgraded));
        }
    }
    pinned
}

/// `lock` as sights to lay over another.
fn first_sights_of(lock: &Lock) -> Sights {
    lock.servers
        .iter()
        .map(|(server, pins)| {
            let tools = pins.tools.iter().map(|(t, p)| (t.clone(), p.clone())).collect();
            (server.clone(), tools, pins.instructions.clone())
        })
        .collect()
}

/// Records in the audit trail each tool `verdict` holds that `slot` did not hold already (a
/// rebuild that changes nothing records nothing).
fn record_new_holds(observer: &Observer, slot: &Slot, verdict: &ServerTrust) {
    let before: Vec<&str> = slot.trust.iter().flat_map(|t| t.held.iter()).map(|h| h.tool.as_str()).collect();
    for held in verdict.held.iter().filter(|h| !before.contains(&h.tool.as_str())) {
        audit::record(
            observer,
            Decision {
                action: Action::Held,
                server: slot.name(),
                tool: Some(&held.tool),
                rule: Some(held.reason.rule()),
                reason: &held.reason.phrase(),
            },
        );
    }
}
