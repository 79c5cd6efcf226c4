//! The interactive session: one live runtime, the `/mcp` command language on top of it, and
//! the session-only layer of state (pauses).
//!
//! Which layer each command touches (mcp-integration §7): `add`/`remove` the global store,
//! `enable`/`disable` the workspace file, `pause`/`resume`/`retry` only this session's memory
//! and connections. After a change the runtime is reconciled with the freshly resolved config,
//! which connects or closes only the servers whose activity changed; `retry` reconnects only
//! the server it names. [`Session::execute`] is the whole language and does no terminal I/O,
//! so tests and the line editor drive the same code.

pub mod command;
pub mod complete;
mod editor;

use std::collections::BTreeSet;

use anyhow::Result;

use crate::config::{
    ADD_USAGE, EditError, GlobalStore, WorkspaceSettings, add_server, disable_server, enable_server,
    load_resolved, parse_add_args, remove_server,
};
use crate::paths::Paths;
use crate::runtime::{Runtime, RuntimeOptions, render_call};
use crate::status::{Trailer, render};
use command::{Command, McpCommand};
use complete::Known;

pub use editor::run_interactive;

/// What one line produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    /// Text for the user, newline-terminated (empty for a blank line).
    pub text: String,
    /// The user asked to leave.
    pub quit: bool,
}

impl Reply {
    fn text(text: impl Into<String>) -> Self {
        let mut text = text.into();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        Self { text, quit: false }
    }
}

/// A running session: its paths, its pauses and its runtime.
pub struct Session {
    paths: Paths,
    paused: BTreeSet<String>,
    runtime: Runtime,
}

impl Session {
    /// Resolves the config for `paths` (nothing paused yet) and starts the runtime.
    pub async fn start(paths: Paths, options: RuntimeOptions) -> Result<Self> {
        let paused = BTreeSet::new();
        let resolved = load_resolved(&paths, &paused)?;
        let options = RuntimeOptions { cache_dir: Some(paths.cache_dir()), ..options };
        let runtime = Runtime::start(resolved, options).await?;
        Ok(Self { paths, paused, runtime })
    }

    /// The startup warnings, one `Warning: MCP unavailable: <name> (<error>)` per line.
    pub fn warnings(&self) -> Vec<String> {
        self.runtime.warnings()
    }

    /// Names for tab completion, as they are now.
    pub fn known(&self) -> Known {
        let mut known = Known::default();
        if let Ok(store) = GlobalStore::load(&self.paths.store_file()) {
            known.servers = store.servers.iter().map(|s| s.name.clone()).collect();
            known.transport_plugins = store
                .plugins
                .iter()
                .filter(|p| p.kind == crate::config::PluginKind::Transport)
                .map(|p| p.name.clone())
                .collect();
        }
        for row in self.runtime.status() {
            if !known.servers.contains(&row.name) {
                known.servers.push(row.name);
            }
        }
        known.tools = self.runtime.tool_names();
        known
    }

    /// Runs one line of the session language.
    pub async fn execute(&mut self, line: &str) -> Reply {
        match command::parse(line) {
            Ok(Command::Empty) => Reply::default(),
            Ok(Command::Quit) => Reply { text: String::new(), quit: true },
            Ok(Command::Help) => Reply::text(command::help_text()),
            Ok(Command::Tools { shape }) => Reply::text(self.tools(shape.as_deref()).await),
            Ok(Command::Call { tool, arguments }) => Reply::text(self.call(&tool, &arguments).await),
            Ok(Command::Mcp(cmd)) => Reply::text(self.mcp(cmd).await),
            Err(e) => Reply::text(e.to_string()),
        }
    }

    /// Closes every connection.
    pub async fn shutdown(self) {
        self.runtime.shutdown().await;
    }

    async fn mcp(&mut self, cmd: McpCommand) -> String {
        let result = match cmd {
            McpCommand::List => Ok(self.view()),
            McpCommand::Help => Ok(command::MCP_HELP.join("\n")),
            McpCommand::Add(args) => self.add(&args).await,
            McpCommand::Remove(name) => self.remove(&name).await,
            McpCommand::Enable(name) => self.enable(&name).await,
            McpCommand::Disable(name) => self.disable(&name).await,
            McpCommand::Pause(name) => self.pause(&name).await,
            McpCommand::Resume(name) => self.resume(&name).await,
            McpCommand::Retry(name) => self.retry(&name).await,
        };
        result.unwrap_or_else(|e| e.to_string())
    }

    /// The status view with the trailer naming both config files.
    fn view(&self) -> String {
        let store = self.paths.store_file();
        let workspace_config = self.paths.workspace_file();
        let rows = self.runtime.status();
        render(&rows, Some(Trailer { store: &store, workspace_config: &workspace_config }))
    }

    /// Re-resolves the config with this session's pauses and lets the runtime connect or close
    /// the servers whose activity changed; then the view.
    async fn reconcile(&mut self) -> Result<String, EditError> {
        let resolved = load_resolved(&self.paths, &self.paused)?;
        self.runtime.reconcile(resolved).await?;
        Ok(self.view())
    }

    async fn add(&mut self, args: &[String]) -> Result<String, EditError> {
        let request = match parse_add_args(args) {
            Ok(r) => r,
            Err(why) => return Ok(format!("{why}\n{ADD_USAGE}")),
        };
        let store = self.paths.store_file();
        add_server(&store, &request.name, &request.to_json())?;
        let mut out = format!("mcp added: {} -> {}\n", request.name, store.display());
        // The runtime learns of the new (disabled) server so the view stays true; it connects
        // only if the workspace already listed the name (it was `missing`), and only then is
        // the view worth showing.
        let view = self.reconcile().await?;
        if self.enabled()?.contains(&request.name) {
            out.push_str(&view);
        }
        Ok(out)
    }

    async fn remove(&mut self, name: &str) -> Result<String, EditError> {
        remove_server(&self.paths, name)?;
        self.paused.remove(name);
        let view = self.reconcile().await?;
        Ok(format!("mcp removed: {name}\n{view}"))
    }

    async fn enable(&mut self, name: &str) -> Result<String, EditError> {
        enable_server(&self.paths, name)?;
        self.reconcile().await
    }

    async fn disable(&mut self, name: &str) -> Result<String, EditError> {
        disable_server(&self.paths, name)?;
        self.paused.remove(name);
        self.reconcile().await
    }

    async fn pause(&mut self, name: &str) -> Result<String, EditError> {
        if !self.enabled()?.iter().any(|n| n == name) {
            return Err(EditError::NotEnabled(name.to_string()));
        }
        if !self.paused.insert(name.to_string()) {
            return Ok(format!("mcp already paused: {name}"));
        }
        self.reconcile().await
    }

    async fn resume(&mut self, name: &str) -> Result<String, EditError> {
        if !self.paused.remove(name) {
            return Ok(format!("MCP server is not paused in this session: {name}"));
        }
        self.reconcile().await
    }

    /// Reconnects only `name`; the other servers keep their connections. The runtime refuses
    /// a server it does not run (unknown, disabled, paused) with the contract's message.
    async fn retry(&mut self, name: &str) -> Result<String, EditError> {
        match self.runtime.retry(name).await {
            Ok(()) => Ok(self.view()),
            Err(why) => Ok(format!("{why:#}")),
        }
    }

    fn enabled(&self) -> Result<Vec<String>, EditError> {
        Ok(WorkspaceSettings::load(&self.paths.workspace_root)?.enabled)
    }

    async fn tools(&self, shape: Option<&str>) -> String {
        match self.runtime.tools_in(shape).await {
            Ok(tools) => serde_json::to_string_pretty(&tools).unwrap_or_default(),
            Err(e) => format!("{e:#}"),
        }
    }

    async fn call(&self, tool: &str, arguments: &str) -> String {
        render_call(&self.runtime.call(tool, arguments).await)
    }
}
