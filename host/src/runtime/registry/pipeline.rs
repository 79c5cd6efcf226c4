//! The deterministic half of start (see ARCHITECTURE.md, "Bird's eye view"): for the connected
//! servers, in definition order whatever finished first, the server's tool filter → name policy
//! → host collision rules → trust (pins, findings at `high`) → tool shape → registry. Each step works on the same [`ToolRecord`]s;
//! a server that fails a step is dropped from the later ones with its reason.

use std::sync::Arc;

use rmcp::model::Tool;

use super::convert::Plugins;
use super::names::{Claims, ServerFixes, name_fault, show_name};
use super::record::{ToolRecord, tool_info};
use super::surface::Registry;
use super::trust_gate::{self, ServerTrust, Unit};
use crate::config::{ServerDef, WorkspaceSettings};
use crate::plugin::Verdict;
use crate::runtime::connection::Connection;
use crate::runtime::results::structured_output::OutputChecks;
use crate::text::clip_foreign;
use crate::trust::Lock;

/// A server's input to the pipeline: a connected one, or one still connecting whose
/// last-known listing stands in for it (`listing_store.rs`) until it is up.
pub struct LiveServer {
    /// Index of its slot.
    pub index: usize,
    /// Its definition (as configured).
    pub def: ServerDef,
    /// Its session: the registry routes its tools' calls here. `None` for a last-known
    /// listing: its tools are listed, and a call of one waits for the server.
    pub conn: Option<Arc<Connection>>,
    /// Its instructions (the trust step reads them).
    pub instructions: Option<String>,
    /// Its tools as last listed (the input to its tool filter, then the name policy).
    pub tools: Vec<Tool>,
}

/// What the pipeline decided.
pub struct Outcome {
    /// Per live server: slot index, connection generation, tool count or the reason it failed
    /// (none for a last-known listing: its server's row stays `connecting`).
    pub checked: Vec<(usize, u64, Result<usize, String>)>,
    /// The registry to install in place of the old one, whole.
    pub registry: Registry,
    /// Per live server that passed the collision rules: slot index, connection generation,
    /// what the trust step held and would record. A last-known listing's tools are held as a
    /// live listing's would be, but it records no first sight: only what a server lists live
    /// is pinned.
    pub trust: Vec<(usize, u64, ServerTrust)>,
}

/// One live server on its way through the steps: its records so far, or why it dropped out.
struct Candidate {
    server: LiveServer,
    records: Result<Vec<ToolRecord>, String>,
}

/// Runs the pipeline. `builtin_tools` (the embedding agent's own tools) are reserved on top of
/// the workspace's reserved names. `output_checks` holds the compiled `outputSchema`s across
/// runs, so only a new listing compiles its schemas again. `lock` is the workspace's
/// `tools.lock` as read now (empty under trust `off`). `commands`: whether the servers and
/// settings are toolport's files, so a name report may print `toolport …` commands as fixes.
pub async fn run(
    plugins: &Plugins,
    (settings, commands): (&WorkspaceSettings, bool),
    builtin_tools: &[String],
    output_checks: &OutputChecks,
    lock: &Lock,
    live: Vec<LiveServer>,
) -> Outcome {
    // 0. The server's own filter (`tools.include` / `tools.exclude`), on its own names: a
    // filtered tool reaches no plugin, no collision rule and no surface, so it cannot be called.
    let mut candidates: Vec<Candidate> = live
        .into_iter()
        .map(|server| {
            let records = filtered(&server.def, &server.tools)
                .map(|t| ToolRecord::listed(&server.def.name, t.clone()))
                .collect();
            Candidate { server, records: Ok(records) }
        })
        .collect();

    // 1. Name policy, server by server in definition order.
    if let Some(policy) = &settings.name_policy {
        for c in &mut candidates {
            if let Ok(records) = std::mem::replace(&mut c.records, Ok(Vec::new())) {
                c.records = apply_policy(plugins, policy, &c.server.def, records).await;
            }
        }
    }

    // 2. Host collision rules on the final names, over the servers the policy let through.
    let mut reserved = settings.reserved_tool_names.clone();
    reserved.extend(builtin_tools.iter().cloned());
    let mut claims = Claims::new(&reserved);
    for c in &mut candidates {
        let def = &c.server.def;
        let fixes = ServerFixes {
            name: &def.name,
            excluded: def.tools.exclude(),
            namespace: settings.name_policy.is_none(),
            commands,
        };
        if let Ok(records) = &c.records
            && let Err(e) =
                claims.admit(&fixes, records.iter().map(|r| (r.name.as_str(), r.original.as_str())))
        {
            c.records = Err(e);
        }
    }

    // 3. Trust: a tool whose definition changed since pinned (or is not pinned under
    // `strict`), or with a `high` finding not accepted, is held off the surface here. Its
    // name stays claimed, so approving it later never renames another server's tool.
    let mut trust = Vec::new();
    let mut registry = Registry::default();
    {
        let mut owners = Vec::new();
        let mut units = Vec::new();
        for c in &mut candidates {
            if let Ok(records) = &mut c.records {
                let generation = c.server.conn.as_ref().map(|conn| conn.generation);
                owners.push((c.server.index, generation, c.server.def.name.clone()));
                let instructions = c.server.instructions.clone();
                units.push(Unit { server: &c.server.def.name, instructions, records });
            }
        }
        let verdicts = trust_gate::review(settings.trust, lock, &settings.reserved_tool_names, &mut units);
        for ((index, generation, server), verdict) in owners.into_iter().zip(verdicts) {
            for held in &verdict.held {
                registry.hold(&held.name, &server, &held.tool, &held.reason.phrase());
            }
            if let Some(generation) = generation {
                trust.push((index, generation, verdict));
            }
        }
    }

    // 4. Tool shape, then 5. the registry.
    let mut checked = Vec::with_capacity(candidates.len());
    for Candidate { server, records } in candidates {
        let generation = server.conn.as_ref().map(|conn| conn.generation);
        let shaped = match records {
            Ok(records) => shape(plugins, &settings.tool_shape, &server.def, records).await,
            Err(e) => Err(e),
        };
        match shaped {
            Ok(mut records) => {
                // Only tools that reach the surface have their output schema compiled.
                for record in &mut records {
                    record.output = output_checks.for_tool(&record.server, &record.tool);
                }
                if let Some(generation) = generation {
                    checked.push((server.index, generation, Ok(records.len())));
                }
                registry.add_server(server.def, server.conn, records);
            }
            Err(e) => match generation {
                Some(generation) => checked.push((server.index, generation, Err(e))),
                // A last-known listing the rules refuse lists nothing; the live one will say why.
                None => tracing::debug!(server = %server.def.name, "last-known listing left out: {e}"),
            },
        }
    }
    let on_surface: Vec<(String, String)> =
        registry.records().iter().map(|r| (r.server.clone(), r.original.clone())).collect();
    output_checks.retain(&on_surface);
    Outcome { checked, registry, trust }
}

/// The tools of `def`'s server that its filter keeps, in listing order.
fn filtered<'a>(def: &'a ServerDef, tools: &'a [Tool]) -> impl Iterator<Item = &'a Tool> {
    if !def.tools.is_empty() && tracing::enabled!(tracing::Level::DEBUG) {
        let dropped: Vec<&str> =
            tools.iter().map(|t| t.name.as_ref()).filter(|n| !def.tools.allows(n)).collect();
        tracing::debug!(server = %def.name, ?dropped, "tools left out by the server's tool filter");
    }
    tools.iter().filter(|t| def.tools.allows(&t.name))
}

/// The policy's verdicts applied to one server's records: renamed, hidden, or the server
/// rejected with the policy's reason.
async fn apply_policy(
    plugins: &Plugins,
    policy: &str,
    def: &ServerDef,
    records: Vec<ToolRecord>,
) -> Result<Vec<ToolRecord>, String> {
    let infos: Vec<_> = records.iter().map(|r| tool_info(&r.tool)).collect();
    let verdicts = plugins.review(policy, def, &infos).await.map_err(|e| e.to_string())?;
    let mut named = Vec::with_capacity(records.len());
    for (mut record, verdict) in records.into_iter().zip(verdicts) {
        match verdict {
            Verdict::Keep => {}
            Verdict::Rename(new_name) => {
                if let Some(rule) = name_fault(&new_name) {
                    return Err(bad_rename(policy, &def.name, &record.original, &new_name, &rule));
                }
                record.name = new_name;
            }
            Verdict::Hide => continue,
            Verdict::Reject(reason) => {
                // The reason is the plugin's text: clipped here, so a 10 MB reason is never
                // held in the row or printed whole by `mcp list --json`.
                let reason = clip_foreign(&reason);
                return Err(format!("name policy {policy} rejected tool {}: {reason}", record.original));
            }
        }
        named.push(record);
    }
    Ok(named)
}

/// Why a rename to an invalid name fails the server, blaming whoever made the name bad: the
/// server when its own name already breaks a rule (the policy only carried it along), else the
/// policy, so the message points at the plugin to fix rather than the shape that would choke
/// on the name later.
fn bad_rename(policy: &str, server: &str, original: &str, new_name: &str, rule: &str) -> String {
    match name_fault(original) {
        Some(own) => {
            format!("MCP server {server} returned an invalid tool name: {} ({own})", show_name(original))
        }
        None => format!(
            "name policy {policy} renamed tool {original} to an invalid name: {} ({rule})",
            show_name(new_name)
        ),
    }
}

/// Fills in each record's shaped JSON (under its final name).
async fn shape(
    plugins: &Plugins,
    shape: &str,
    def: &ServerDef,
    mut records: Vec<ToolRecord>,
) -> Result<Vec<ToolRecord>, String> {
    let infos: Vec<_> = records.iter().map(ToolRecord::info).collect();
    let converted = plugins.convert(shape, def, &infos).await.map_err(|e| e.to_string())?;
    for (record, shaped) in records.iter_mut().zip(converted) {
        record.shaped = shaped;
    }
    Ok(records)
}
