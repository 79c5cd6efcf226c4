//! A running session: its paths, its pauses and its runtime, and the one entry point that runs
//! a line. The `/mcp` actions are handled in `handlers.rs`; this file keeps what is not the
//! `/mcp` language (starting, `/tools`, `/call`, `/resources`, `/read`, `/prompts`, `/prompt`,
//! completion's names, shutdown).

use std::collections::BTreeSet;

use anyhow::Result;

use super::command::{self, Command};
use super::complete::Known;
use crate::config::{GlobalStore, PluginKind, load_resolved};
use crate::paths::Paths;
use crate::runtime::{Runtime, RuntimeOptions, render_call};

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
    pub(super) paths: Paths,
    /// The session-only layer of state: it ends with the session and is never written.
    pub(super) paused: BTreeSet<String>,
    pub(super) runtime: Runtime,
}

impl Session {
    /// Resolves the config for `paths` (nothing paused yet) and starts the runtime.
    pub async fn start(paths: Paths, options: RuntimeOptions) -> Result<Self> {
        let paused = BTreeSet::new();
        let resolved = load_resolved(&paths, &paused)?;
        let options = options.with_paths(&paths, paths.workspace_root.clone()).with_listings(&paths);
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
                .filter(|p| p.kind == PluginKind::Transport)
                .map(|p| p.name.clone())
                .collect();
        }
        for row in self.runtime.status() {
            if !known.servers.contains(&row.name) {
                known.servers.push(row.name);
            }
        }
        known.tools = self.runtime.tool_names();
        let catalog = self.runtime.catalog();
        known.prompts = catalog.prompts.iter().map(|p| p.item.name.clone()).collect();
        known.resources = catalog.resources.iter().map(|r| (r.server.clone(), r.item.uri.clone())).collect();
        known
    }

    /// Runs one line of the session language. The reply is a text view that quotes servers and
    /// plugins (results, tool JSON, errors), so its controls are escaped here, once for every
    /// action ([`crate::text::escape_text`]).
    pub async fn execute(&mut self, line: &str) -> Reply {
        let mut reply = self.answer(line).await;
        reply.text = crate::text::escape_text(&reply.text).into_owned();
        reply
    }

    async fn answer(&mut self, line: &str) -> Reply {
        match command::parse(line) {
            Ok(Command::Empty) => Reply::default(),
            Ok(Command::Quit) => Reply { text: String::new(), quit: true },
            Ok(Command::Help) => Reply::text(command::help_text()),
            Ok(Command::Tools { shape }) => Reply::text(self.tools(shape.as_deref()).await),
            Ok(Command::ToolTokens { shape }) => {
                Reply::text(self.runtime.token_costs_text(shape.as_deref()).await)
            }
            Ok(Command::Call { tool, arguments }) => Reply::text(self.call(&tool, &arguments).await),
            Ok(Command::Resources) => Reply::text(catalog_text(&self.runtime, false)),
            Ok(Command::Read { server, uri }) => Reply::text(read_text(&self.runtime, &server, &uri).await),
            Ok(Command::Prompts) => Reply::text(catalog_text(&self.runtime, true)),
            Ok(Command::Prompt { name, arguments }) => {
                Reply::text(prompt_text(&self.runtime, &name, &arguments).await)
            }
            Ok(Command::Mcp(cmd)) => Reply::text(self.mcp(cmd).await),
            Err(e) => Reply::text(e.to_string()),
        }
    }

    /// Closes every connection.
    pub async fn shutdown(self) {
        self.runtime.shutdown().await;
    }

    async fn tools(&self, shape: Option<&str>) -> String {
        self.runtime.tools_text(shape).await
    }

    async fn call(&self, tool: &str, arguments: &str) -> String {
        render_call(&self.runtime.call(tool, arguments).await)
    }
}

/// `/resources` (or `/prompts` when `prompts`): the catalog's text view, its warnings (names or
/// URIs two servers share) first, as the CLI prints them before the list.
pub(crate) fn catalog_text(runtime: &Runtime, prompts: bool) -> String {
    let catalog = runtime.catalog();
    let (warnings, view) = if prompts {
        (&catalog.prompt_warnings, catalog.prompts_text())
    } else {
        (&catalog.resource_warnings, catalog.resources_text())
    };
    warnings.iter().map(|w| format!("{w}\n")).chain([view]).collect()
}

/// `/read <server> <uri>`: text contents, a binary one described by type and size.
pub(crate) async fn read_text(runtime: &Runtime, server: &str, uri: &str) -> String {
    match runtime.read(server, uri).await {
        Ok(read) => read.render_text(),
        Err(e) => e.to_string(),
    }
}

/// `/prompt <name> [json]`: the prompt's messages, or why there are none.
pub(crate) async fn prompt_text(runtime: &Runtime, name: &str, arguments: &str) -> String {
    match runtime.prompt(name, arguments).await {
        Ok(outcome) => outcome.render_text(),
        Err(e) => e.to_string(),
    }
}
