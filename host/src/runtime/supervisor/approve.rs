//! What a person asks of the pins (`mcp approve`, `mcp diff`): a held tool pinned as listed
//! now and put back on the surface, or what changed since it was pinned and why it is held.
//! Over `pins.rs` (the lock edited under its file lock) and `rebuild.rs`.

use std::fmt::Write as _;

use anyhow::Context as _;

use super::lock_file::Approved;
use super::state::Supervisor;
use crate::config::TrustMode;
use crate::runtime::registry::trust_gate::{Held, ServerTrust};
use crate::runtime::state::Slot;
use crate::text::escape_line;
use crate::trust::audit::{self, Action, Decision};
use crate::trust::{self, HoldReason, InstructionsVerdict, Pin};

impl Supervisor {
    /// `mcp approve`: pins `server`'s held tools named in `tools` (none named: every held one)
    /// as listed now, accepting their current `high` findings, and its changed instructions
    /// when no tool is named; then rebuilds, so they are back on the surface.
    pub async fn approve(&self, server: &str, tools: &[String]) -> anyhow::Result<Approved> {
        let _ops = self.ops.lock().await;
        let (resolved, held, instructions) = {
            let state = self.lock();
            if state.resolved.settings.trust == TrustMode::Off {
                anyhow::bail!("trust is \"off\" in this workspace: nothing is pinned or held");
            }
            let slot = find(&state.slots, server)?;
            let verdict = trust_of(slot)?;
            let held = chosen(server, &verdict.held, tools)?;
            let instructions = match (&verdict.instructions, &verdict.instructions_text) {
                (InstructionsVerdict::Changed, Some(text)) if tools.is_empty() => {
                    Some(Pin::of_instructions(text))
                }
                _ => None,
            };
            (state.resolved.clone(), held, instructions)
        };
        let approved = Approved {
            tools: held.iter().map(|h| (h.tool.clone(), h.reason.phrase())).collect(),
            instructions: instructions.is_some(),
        };
        self.edit_pins(&resolved, |lock| {
            let pins = lock.servers.entry(server.to_string()).or_default();
            if let Some(pin) = instructions {
                pins.instructions = Some(pin);
            }
            for h in &held {
                pins.tools.insert(h.tool.clone(), h.current.clone());
            }
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (tool, reason) in &approved.tools {
            audit::record(
                &self.options.observer,
                Decision { action: Action::Approved, server, tool: Some(tool), rule: None, reason },
            );
        }
        if approved.instructions {
            let reason = "instructions changed since pinned";
            let observer = &self.options.observer;
            audit::record(
                observer,
                Decision { action: Action::Approved, server, tool: None, rule: None, reason },
            );
        }
        self.rebuild().await;
        Ok(approved)
    }

    /// `mcp diff`: for `server`, each held tool and why, a changed one word by word against
    /// its pin, and its instructions if they changed; or that nothing did.
    pub fn pin_diff(&self, server: &str) -> anyhow::Result<String> {
        let (verdict, lock) = {
            let state = self.lock();
            let verdict = trust_of(find(&state.slots, server)?)?.clone();
            (verdict, self.pins.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone())
        };
        let shown = escape_line(server);
        let mut out = String::new();
        for held in &verdict.held {
            let _ = writeln!(out, "{}: {}", escape_line(&held.tool), held.reason.phrase());
            match &held.reason {
                HoldReason::Changed | HoldReason::OldPin | HoldReason::LookAlike { .. } => {
                    // A look-alike against the tool it looks like: what it claims differently.
                    let against = match &held.reason {
                        HoldReason::LookAlike { pinned, .. } => pinned,
                        _ => &held.tool,
                    };
                    let pinned = lock.tool(server, against).map(|p| p.definition.clone()).unwrap_or_default();
                    for (field, diff) in trust::diff_fields(&pinned, &held.current.definition) {
                        let _ = writeln!(out, "  {field}: {}", diff.replace('\n', "\n    "));
                    }
                }
                HoldReason::Finding(rules) => {
                    for rule in rules {
                        let message = trust::rules().ok().and_then(|all| all.iter().find(|r| &r.id == rule));
                        if let Some(r) = message {
                            let _ = writeln!(out, "  {rule} ({}): {}", r.severity.as_str(), r.message);
                        }
                    }
                }
                HoldReason::NotPinned => {}
            }
        }
        if verdict.instructions == InstructionsVerdict::Changed {
            let _ = writeln!(out, "instructions: changed since pinned");
            let pinned =
                lock.server(server).and_then(|p| p.instructions.as_ref()).and_then(|p| p.definition.as_str());
            let now = verdict.instructions_text.as_deref().unwrap_or("");
            let _ = writeln!(out, "  {}", trust::diff_text(pinned.unwrap_or(""), now).replace('\n', "\n  "));
        }
        if out.is_empty() {
            let _ = writeln!(out, "{shown}: nothing changed since pinned");
        }
        Ok(out)
    }
}

fn find<'a>(slots: &'a [Slot], server: &str) -> anyhow::Result<&'a Slot> {
    slots.iter().find(|s| s.name() == server).with_context(|| format!("Unknown MCP server: {server}"))
}

/// The slot's last trust verdict, or why there is none (not connected, or rejected before it).
fn trust_of(slot: &Slot) -> anyhow::Result<&ServerTrust> {
    slot.trust.as_ref().ok_or_else(|| {
        let row = slot.status();
        let why = row.error.unwrap_or_else(|| format!("it is {}", row.state.as_str()));
        anyhow::anyhow!("MCP server {} is not connected: {why}", slot.name())
    })
}

/// The held tools `tools` names (none named: all of them); a name that is not held is an
/// error listing those that are.
fn chosen(server: &str, held: &[Held], tools: &[String]) -> anyhow::Result<Vec<Held>> {
    if tools.is_empty() {
        return Ok(held.to_vec());
    }
    let mut out = Vec::new();
    for name in tools {
        match held.iter().find(|h| &h.tool == name) {
            Some(h) => out.push(h.clone()),
            None => {
                let names: Vec<&str> = held.iter().map(|h| h.tool.as_str()).collect();
                let now = if names.is_empty() {
                    "nothing is held".to_string()
                } else {
                    format!("held: {}", names.join(", "))
                };
                anyhow::bail!("MCP tool {name} of server {server} is not held ({now})");
            }
        }
    }
    Ok(out)
}
