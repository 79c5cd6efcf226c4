//! The deterministic half of start (DESIGN §1): for the connected servers, in definition
//! order whatever finished first, name policy → host collision rules → tool shape → registry.

use std::sync::Arc;

use super::connection::Connection;
use super::convert::{Plugins, ToolInfo, Verdict};
use super::names::{self, ServerNames};
use super::state::{Registry, Route};
use crate::config::{ServerDef, WorkspaceSettings};

/// A connected server's input to the pipeline.
pub struct LiveServer {
    /// Index of its slot.
    pub index: usize,
    /// Its definition (as configured).
    pub def: ServerDef,
    /// Its session.
    pub conn: Arc<Connection>,
    /// Its listed tools.
    pub tools: Vec<ToolInfo>,
}

/// What the pipeline decided.
pub struct Outcome {
    /// Per live server: slot index, connection generation, tool count or the reason it failed.
    pub checked: Vec<(usize, u64, Result<usize, String>)>,
    /// The new registry.
    pub registry: Registry,
}

/// One tool after the name policy: the final name in `info.name`, the server's own in `original`.
struct Named {
    info: ToolInfo,
    original: String,
}

/// Runs the pipeline. `builtin_tools` (the embedding agent's own tools) are reserved on top of
/// the workspace's reserved names.
pub async fn run(
    plugins: &Plugins,
    settings: &WorkspaceSettings,
    builtin_tools: &[String],
    live: Vec<LiveServer>,
) -> Outcome {
    // 1. Name policy, server by server in definition order.
    let mut named: Vec<Result<Vec<Named>, String>> = Vec::with_capacity(live.len());
    for server in &live {
        named.push(match &settings.name_policy {
            Some(policy) => apply_policy(plugins, policy, server).await,
            None => {
                Ok(server.tools.iter().map(|t| Named { info: t.clone(), original: t.name.clone() }).collect())
            }
        });
    }

    // 2. Host collision rules on the final names, over the servers the policy let through.
    let mut reserved = settings.reserved_tool_names.clone();
    reserved.extend(builtin_tools.iter().cloned());
    let candidates: Vec<(usize, ServerNames<'_>)> = live
        .iter()
        .zip(&named)
        .enumerate()
        .filter_map(|(i, (server, tools))| {
            let tools = tools.as_ref().ok()?;
            Some((
                i,
                ServerNames {
                    server: &server.def.name,
                    tools: tools.iter().map(|t| t.info.name.as_str()).collect(),
                },
            ))
        })
        .collect();
    let names_only: Vec<ServerNames<'_>> = candidates.iter().map(|(_, n)| n.clone()).collect();
    let verdicts = names::check_all(&names_only, &reserved);
    let mut checked: Vec<Result<(), String>> =
        named.iter().map(|n| n.as_ref().map(|_| ()).map_err(Clone::clone)).collect();
    for ((i, _), verdict) in candidates.iter().zip(verdicts) {
        if let Some(slot) = checked.get_mut(*i) {
            *slot = verdict;
        }
    }

    // 3. Tool shape, then 4. the registry.
    let mut registry = Registry::default();
    let mut out = Vec::with_capacity(live.len());
    for ((server, tools), verdict) in live.iter().zip(named).zip(checked) {
        let generation = server.conn.generation;
        let tools = match (tools, verdict) {
            (Ok(tools), Ok(())) => tools,
            (_, Err(e)) | (Err(e), _) => {
                out.push((server.index, generation, Err(e)));
                continue;
            }
        };
        let infos: Vec<ToolInfo> = tools.iter().map(|t| t.info.clone()).collect();
        match plugins.convert(&settings.tool_shape, &server.def, &infos).await {
            Ok(converted) => {
                registry.surface.extend(converted);
                for tool in &tools {
                    registry.routes.insert(
                        tool.info.name.clone(),
                        Route {
                            server: server.def.name.clone(),
                            original: tool.original.clone(),
                            conn: server.conn.clone(),
                            call_timeout: server.def.timeouts.call,
                        },
                    );
                }
                registry.entries.push((server.def.clone(), infos));
                out.push((server.index, generation, Ok(tools.len())));
            }
            Err(e) => out.push((server.index, generation, Err(e))),
        }
    }
    Outcome { checked: out, registry }
}

async fn apply_policy(plugins: &Plugins, policy: &str, server: &LiveServer) -> Result<Vec<Named>, String> {
    let verdicts = plugins.review(policy, &server.def, &server.tools).await?;
    let mut named = Vec::with_capacity(server.tools.len());
    for (tool, verdict) in server.tools.iter().zip(verdicts) {
        let final_name = match verdict {
            Verdict::Keep => tool.name.clone(),
            Verdict::Rename(new_name) => new_name,
            Verdict::Hide => continue,
            Verdict::Reject(reason) => {
                return Err(format!("name policy {policy} rejected tool {}: {reason}", tool.name));
            }
        };
        let mut info = tool.clone();
        info.name = final_name;
        named.push(Named { info, original: tool.name.clone() });
    }
    Ok(named)
}
