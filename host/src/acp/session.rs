//! One ACP session: its own runtime and a way to cancel the prompt that is running. Sessions
//! share nothing, so a slow call in one never waits on another.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::Value;
use tokio::sync::watch;

use super::params::{SessionParams, client_resolved};
use crate::config::load_resolved;
use crate::paths::Paths;
use crate::runtime::{CallError, CallOutcome, Runtime, RuntimeOptions, render_call};
use crate::session::actions::{self, McpCommand};
use crate::session::command::{self, Command};
use crate::session::live;
use crate::status::render;

/// What a prompt that is not a command gets back.
pub const NOT_A_MODEL: &str = "toolport runs MCP tools, not a model, so it does not answer \
    free text. Use /mcp for the servers' status, /tools for the tool surface, or \
    /call <tool> [json] to run a tool.";

/// What an `/mcp` action the action table keeps out of ACP's read-only view answers.
const READ_ONLY: &str = "Over ACP, /mcp only shows the status view: the client chooses this session's \
    servers (or edit the local stores with toolport mcp …)";

/// The slash commands advertised in `available_commands_update`: (name, description, hint).
pub const COMMANDS: &[(&str, &str, Option<&str>)] = &[
    ("mcp", "Show this session's MCP servers and their status", None),
    (
        "tools",
        "Show the tool surface in this session's shape, or its cost in tokens",
        Some("[tokens] [shape]"),
    ),
    ("call", "Call one tool with JSON object arguments", Some("<tool> [json]")),
];

/// A live ACP session.
pub struct AcpSession {
    runtime: Runtime,
    /// Bumped by `session/cancel`; a running prompt watches it.
    cancel: watch::Sender<u64>,
    /// When a request last started or finished using this session (idle eviction).
    last_used: Mutex<Instant>,
}

impl AcpSession {
    /// Starts a runtime for what the client asked: its own servers when it sent some (every
    /// one enabled, nothing paused), else the local stores with `cwd` as the workspace root.
    pub async fn open(home: &Path, params: SessionParams, options: RuntimeOptions) -> Result<Self> {
        let paths = Paths::new(home, &params.cwd);
        let resolved = if params.servers.is_empty() {
            load_resolved(&paths, &BTreeSet::new())?
        } else {
            client_resolved(params.servers)
        };
        let options = options.with_paths(&paths, params.cwd.clone());
        let runtime = Runtime::start(resolved, options).await?;
        Ok(Self { runtime, cancel: watch::channel(0).0, last_used: Mutex::new(Instant::now()) })
    }

    /// Marks the session as used now.
    pub fn touch(&self) {
        if let Ok(mut at) = self.last_used.lock() {
            *at = Instant::now();
        }
    }

    /// How long since a request last used the session.
    pub fn idle_for(&self) -> Duration {
        self.last_used.lock().map(|at| at.elapsed()).unwrap_or_default()
    }

    /// A receiver that sees every [`AcpSession::cancel`] from now on. Taken when a prompt
    /// arrives, not when its task starts, so a cancel right behind the prompt is never missed.
    pub fn cancel_watch(&self) -> watch::Receiver<u64> {
        let mut rx = self.cancel.subscribe();
        rx.borrow_and_update();
        rx
    }

    /// Answers a prompt's text. Resolves to `None` if a cancel reached `cancelled` while it
    /// ran; the running call is dropped then.
    pub async fn answer(&self, text: &str, cancelled: watch::Receiver<u64>) -> Option<String> {
        until_cancelled(self.reply(text), cancelled).await
    }

    /// Stops the prompt that is running, if any.
    pub fn cancel(&self) {
        self.cancel.send_modify(|generation| *generation += 1);
    }

    /// `_toolport/tools/list`: the tool surface in the session's shape (the workspace's, or
    /// OpenAI for client-supplied servers), or converted to `shape`.
    pub async fn tools(&self, shape: Option<&str>) -> Result<Vec<Value>> {
        self.runtime.tools_in(shape).await
    }

    /// `_toolport/tools/call`: one call through the executor; `None` if cancelled meanwhile.
    pub async fn call(
        &self,
        name: &str,
        arguments: &str,
        cancelled: watch::Receiver<u64>,
    ) -> Option<Result<CallOutcome, CallError>> {
        until_cancelled(self.runtime.call(name, arguments), cancelled).await
    }

    /// Closes every connection of this session.
    pub async fn shutdown(&self) {
        self.runtime.shutdown().await;
    }

    async fn reply(&self, text: &str) -> String {
        match command::parse(text) {
            Ok(Command::Mcp(cmd)) => self.mcp(&cmd),
            Ok(Command::Tools { shape }) => self.runtime.tools_text(shape.as_deref()).await,
            Ok(Command::ToolTokens { shape }) => self.runtime.token_costs_text(shape.as_deref()).await,
            Ok(Command::Call { tool, arguments }) => render_call(&self.runtime.call(&tool, &arguments).await),
            // Reading changes nothing, so ACP's read-only view allows these as it allows /tools.
            Ok(Command::Resources) => live::catalog_text(&self.runtime, false),
            Ok(Command::Prompts) => live::catalog_text(&self.runtime, true),
            Ok(Command::Read { server, uri }) => live::read_text(&self.runtime, &server, &uri).await,
            Ok(Command::Prompt { name, arguments }) => {
                live::prompt_text(&self.runtime, &name, &arguments).await
            }
            Ok(Command::Help) => COMMANDS
                .iter()
                .map(|(name, description, hint)| match hint {
                    Some(h) => format!("/{name} {h}  {description}"),
                    None => format!("/{name}  {description}"),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Ok(Command::Empty | Command::Quit) | Err(_) => NOT_A_MODEL.to_string(),
        }
    }

    /// ACP's read-only view of `/mcp`: the action table says which actions it allows; the
    /// rest are refused, because the client owns this session's servers.
    fn mcp(&self, cmd: &McpCommand) -> String {
        match cmd {
            cmd if !cmd.action().is_some_and(|a| a.acp) => READ_ONLY.to_string(),
            McpCommand::Help => actions::help_lines(|a| a.acp).collect::<Vec<_>>().join("\n"),
            // `list`: the status view without the trailer, since nothing here edits the files it
            // names. A new read-only action that shows something else gets its own arm above.
            _ => render(&self.runtime.status(), None),
        }
    }
}

/// Runs `work` unless a cancel reaches `cancelled` first; dropping `work` abandons the call.
async fn until_cancelled<T>(work: impl Future<Output = T>, mut cancelled: watch::Receiver<u64>) -> Option<T> {
    tokio::select! {
        out = work => Some(out),
        _ = cancelled.changed() => None,
    }
}
