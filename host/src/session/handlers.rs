//! One handler per `/mcp` action of the table in `actions.rs`, and the one `match` that picks
//! it (as mini-redis's `Command::apply`). Every handler answers with text: a refusal (unknown
//! server, not enabled, …) is the contract's message, not an error of the session.

use super::actions::McpCommand;
use super::command;
use super::live::Session;
use crate::auth::{Completion, CredentialsFile, no_login, not_remote};
use crate::config::{
    ADD_USAGE, EditError, WorkspaceSettings, disable_server, enable_server, load_resolved, parse_add_args,
    put_server, remove_server,
};
use crate::status::{Trailer, render};
use crate::transport::login;

impl Session {
    /// Runs one `/mcp` action.
    pub(super) async fn mcp(&mut self, cmd: McpCommand) -> String {
        let result = match cmd {
            McpCommand::List => Ok(self.view()),
            McpCommand::Help => Ok(command::mcp_help().collect::<Vec<_>>().join("\n")),
            McpCommand::Add(args) => self.add(&args).await,
            McpCommand::Remove(name) => self.remove(&name).await,
            McpCommand::Enable(name) => self.enable(&name).await,
            McpCommand::Disable(name) => self.disable(&name).await,
            McpCommand::Pause(name) => self.pause(&name).await,
            McpCommand::Resume(name) => self.resume(&name).await,
            McpCommand::Retry(name) => self.retry(&name).await,
            McpCommand::Login(name) => self.login(&name).await,
            McpCommand::Logout(name) => self.logout(&name).await,
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
        let replaced = put_server(&store, &request.name, &request.to_json(), request.force, request.sandbox)?;
        let verb = if replaced { "replaced" } else { "added" };
        let mut out = format!("mcp {verb}: {} -> {}\n", request.name, store.display());
        // The runtime learns of the new (disabled) server so the view stays true; it connects
        // only if the workspace already listed the name (it was `missing`, or `--force`
        // replaced an enabled one), and only then is the view worth showing.
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

    /// The sign-in of `toolport mcp login` (the browser, or the printed address), then a
    /// reconnect of `name` with its new tokens when this workspace runs it.
    async fn login(&mut self, name: &str) -> Result<String, EditError> {
        let def = self.defined(name)?;
        if let Some(why) = no_login(&def) {
            return Ok(why);
        }
        let def = def.expanded(|k| std::env::var(k).ok())?;
        let file = CredentialsFile::new(self.paths.credentials());
        match login(self.runtime.observer(), &def, &file, Completion::Browser).await {
            Ok(_) => Ok(format!("mcp login: signed in to {name}\n{}", self.reconnect(name).await)),
            Err(e) => Ok(format!("cannot sign in to {name}: {e:#}")),
        }
    }

    /// Forgets `name`'s tokens and reconnects it (it then asks for a sign-in again).
    async fn logout(&mut self, name: &str) -> Result<String, EditError> {
        let def = self.defined(name)?;
        if let Some(why) = not_remote(&def) {
            return Ok(why);
        }
        let url = def.url.as_deref().unwrap_or_default();
        let forgot = CredentialsFile::new(self.paths.credentials()).forget(url)?;
        let said = if forgot { "signed out (its tokens are forgotten)" } else { "was not signed in" };
        Ok(format!("mcp logout: {name} {said}\n{}", self.reconnect(name).await))
    }

    /// `name`'s stored definition.
    fn defined(&self, name: &str) -> Result<crate::config::ServerDef, EditError> {
        let store = crate::config::GlobalStore::load(&self.paths.store_file())?;
        store.server(name).cloned().ok_or_else(|| EditError::Unknown(name.to_string()))
    }

    /// Reconnects `name` if it runs here; the view either way.
    async fn reconnect(&mut self, name: &str) -> String {
        let runs_here =
            self.enabled().is_ok_and(|e| e.iter().any(|n| n == name)) && !self.paused.contains(name);
        if runs_here && let Err(why) = self.runtime.retry(name).await {
            return format!("{why:#}");
        }
        self.view()
    }

    /// The workspace's enabled names as the file says now (another process may have edited it).
    fn enabled(&self) -> Result<Vec<String>, EditError> {
        Ok(WorkspaceSettings::load(&self.paths.workspace_root)?.enabled)
    }
}
