//! `mcp get`: one server's definition as stored, its secrets masked, with its sign-in, its
//! sandbox (a wasm server's, or a `stdio` server's OS sandbox: `sandbox: on|off`), the guards
//! its requests pass (the workspace's, then its own) and whether it is valid; `--json` adds the
//! revision it negotiates.

use std::collections::BTreeSet;

use anyhow::{Context as _, Result};
use serde_json::{Map, Value};

use crate::cli::ExitError;
use crate::cli::grants;
use toolport::audit::{decision_line, recent_decisions};
use toolport::display::SECRET_MASK as MASK;
use toolport::plugins::PluginHost;
use toolport::store::{
    self, GlobalStore, GuardScope, GuardUse, PluginKind, Roots, ServerDef, ToolFilter, TransportKind,
    WorkspaceSettings,
};
use toolport::{Paths, Runtime, RuntimeOptions};

/// How many of a server's trust decisions in this workspace `mcp get` shows.
const DECISIONS_SHOWN: usize = 20;

/// `mcp get`: the definition as stored. `--json` also connects the server when this workspace
/// enables it (that server alone: the others are paused for the look) to show the negotiated
/// `protocolVersion`; the text view stays offline, as the contract has it.
pub(super) async fn get_view(paths: &Paths, name: &str, json: bool) -> Result<String> {
    let store = GlobalStore::load(&paths.store_file())?;
    let def = store.server(name).ok_or_else(|| ExitError::failure(format!("Unknown MCP server: {name}")))?;
    let settings = WorkspaceSettings::load(&paths.workspace_root)?;
    let enabled = settings.enabled.iter().any(|n| n == name);
    let validity = store::validate(def, &store.plugins);
    let masked = masked(def);
    let guards = applying_guards(&store, &settings, def)?;
    if json {
        let mut out = Map::new();
        out.insert("name".into(), def.name.clone().into());
        out.insert("definition".into(), Value::Object(masked.to_json()));
        out.insert("workspaceEnabled".into(), enabled.into());
        out.insert("valid".into(), validity.is_ok().into());
        if def.url.is_some() {
            out.insert("oauth".into(), crate::cli::login::oauth_state(paths, def)?.into());
        }
        if let Some(wasm) = &def.wasm {
            out.insert("sandbox".into(), grants::sandbox_json(wasm));
        }
        if let Some(sandbox) = &def.sandbox {
            out.insert("sandbox".into(), grants::native_sandbox_json(sandbox));
        }
        if let Err(msg) = &validity {
            out.insert("error".into(), msg.clone().into());
        }
        out.insert("guards".into(), guards.iter().map(guard_json).collect());
        let decisions = recent_decisions(&paths.audit_trail(), &paths.workspace_root, name, DECISIONS_SHOWN);
        out.insert("trustDecisions".into(), serde_json::to_value(decisions)?);
        if enabled
            && validity.is_ok()
            && let Some(version) = negotiated_version(paths, &store, name).await?
        {
            out.insert("protocolVersion".into(), version.into());
        }
        return Ok(format!("{}\n", serde_json::to_string_pretty(&out)?));
    }
    let mut out = format!("{}\n", def.name);
    let mut line = |k: &str, v: &str| out.push_str(&format!("  {k}: {v}\n"));
    line("type", masked.transport.as_deref().unwrap_or("(unknown)"));
    if let Some(u) = &masked.url {
        line("url", u);
    }
    if let Some(c) = &masked.command {
        line("command", c);
    }
    if !masked.args.is_empty() {
        let joined =
            shlex::try_join(masked.args.iter().map(String::as_str)).unwrap_or_else(|_| masked.args.join(" "));
        line("args", &joined);
    }
    for (k, _) in &masked.env {
        line("env", &format!("{k}={MASK}"));
    }
    for (k, _) in &masked.headers {
        line("header", &format!("{k}: {MASK}"));
    }
    if let Some(c) = &masked.cwd {
        line("cwd", c);
    }
    match masked.inherit_env {
        Some(false) => line("inheritEnv", "no (only PATH, HOME, LANG, TERM and env)"),
        Some(true) => line("inheritEnv", "yes"),
        None => {}
    }
    if !masked.tools.is_empty() {
        line("tools", &tool_filter_text(&masked.tools));
    }
    for applying in &guards {
        line("guard", &guard_text(applying.guard));
        if let Some(warning) = &applying.warning {
            line("  warning", warning);
        }
    }
    for (key, value) in masked.wasm.as_ref().map(grants::sandbox_lines).unwrap_or_default() {
        line(key, &value);
    }
    if masked.transport.as_deref() == Some(TransportKind::Stdio.as_str()) {
        for (key, value) in grants::native_sandbox_lines(masked.sandbox.as_ref()) {
            line(key, &value);
        }
    }
    line("roots", &roots_text(&masked.roots));
    if let Some(version) = &masked.protocol_version {
        line("protocolVersion", &format!("{version} (no other revision is tried)"));
    }
    let t = masked.timeouts;
    line(
        "timeouts",
        &format!(
            "connectMs={} listMs={} callMs={}",
            t.connect.as_millis(),
            t.list.as_millis(),
            t.call.as_millis()
        ),
    );
    if let Some(o) = &masked.oauth {
        let mut parts = vec![format!("grant={}", o.grant.as_str())];
        if let Some(id) = &o.client_id {
            parts.push(format!("clientId={id}"));
        }
        if o.client_secret.is_some() {
            parts.push(format!("clientSecret={MASK}"));
        }
        if let Some(scopes) = &o.scopes {
            parts.push(format!("scopes={}", scopes.join(",")));
        }
        if let Some(port) = o.callback_port {
            parts.push(format!("callbackPort={port}"));
        }
        // The pins of the jwt_bearer grant: where the workload's token may go.
        for (key, value) in [("issuer", &o.issuer), ("tokenEndpoint", &o.token_endpoint)] {
            if let Some(value) = value {
                parts.push(format!("{key}={value}"));
            }
        }
        line("oauth config", &parts.join(" "));
    }
    if masked.url.is_some() {
        line("oauth", &crate::cli::login::oauth_state(paths, def)?);
    }
    line("workspace", if enabled { "enabled" } else { "disabled" });
    match validity {
        Ok(_) => line("valid", "yes"),
        Err(msg) => line("valid", &format!("no ({msg})")),
    }
    let decisions = recent_decisions(&paths.audit_trail(), &paths.workspace_root, name, DECISIONS_SHOWN);
    if !decisions.is_empty() {
        out.push_str("  trust decisions (newest last):\n");
        for entry in &decisions {
            out.push_str(&format!("    {}\n", decision_line(entry)));
        }
    }
    Ok(out)
}

/// One guard that applies to the server's requests, and what is wrong with its plugin.
struct Applying<'a> {
    guard: &'a GuardUse,
    /// `unknown plugin (…), so every call it applies to is refused (failOpen is false)`, when
    /// the plugin it names is not a guard plugin.
    warning: Option<String>,
}

/// The guards `def`'s requests pass, in the order they run: the workspace's, then its own.
/// Each plugin is looked up as the runtime would (the host is made only when there is one).
fn applying_guards<'a>(
    store: &GlobalStore,
    settings: &'a WorkspaceSettings,
    def: &'a ServerDef,
) -> Result<Vec<Applying<'a>>> {
    let chain: Vec<&GuardUse> = store::guard_chain(&settings.guards, &def.guards).collect();
    if chain.is_empty() {
        return Ok(Vec::new());
    }
    let host = PluginHost::new(None, &store.plugins).context("cannot start the plugin host")?;
    Ok(chain
        .into_iter()
        .map(|guard| Applying {
            guard,
            warning: host
                .misfit(&guard.plugin, PluginKind::Guard)
                .map(|problem| format!("{problem}, so {}", guard.without_its_plugin())),
        })
        .collect())
}

/// Where a guard entry was written, as `mcp get` names it.
fn guard_from(guard: &GuardUse) -> &'static str {
    match guard.scope {
        GuardScope::Workspace => "workspace",
        GuardScope::Server(_) => "server",
    }
}

/// `pii tools ["*"] phase both mode enforce failOpen false from workspace`: the globs as JSON,
/// like the tool filter's.
fn guard_text(guard: &GuardUse) -> String {
    format!(
        "{} tools {} phase {} mode {} failOpen {} from {}",
        guard.plugin,
        Value::from(guard.tools.clone()),
        guard.phase.as_str(),
        guard.mode.as_str(),
        guard.fail_open,
        guard_from(guard)
    )
}

/// `{"plugin", "tools", "phase", "mode", "failOpen", "from"}`, and `"warning"` when its plugin
/// is not a guard plugin.
fn guard_json(applying: &Applying<'_>) -> Value {
    let guard = applying.guard;
    let mut m = Map::new();
    m.insert("plugin".into(), guard.plugin.clone().into());
    m.insert("tools".into(), guard.tools.clone().into());
    m.insert("phase".into(), guard.phase.as_str().into());
    m.insert("mode".into(), guard.mode.as_str().into());
    m.insert("failOpen".into(), guard.fail_open.into());
    m.insert("from".into(), guard_from(guard).into());
    if let Some(warning) = &applying.warning {
        m.insert("warning".into(), warning.clone().into());
    }
    Value::Object(m)
}

/// `include ["read_*","search"] exclude ["*_delete"]`: each list as JSON, so a glob with a
/// comma or a space reads back exactly; an empty list is left out.
fn tool_filter_text(filter: &ToolFilter) -> String {
    [("include", filter.include()), ("exclude", filter.exclude())]
        .into_iter()
        .filter(|(_, globs)| !globs.is_empty())
        .map(|(key, globs)| format!("{key} {}", Value::from(globs.to_vec())))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `roots` setting as `mcp get` shows it: the keyword and what it means, or the paths as
/// written (a JSON array, like the filter's globs).
fn roots_text(roots: &Roots) -> String {
    match roots {
        Roots::Workspace => "workspace (the workspace root)".to_string(),
        Roots::None => "none (no roots offered: the server keeps its own arguments)".to_string(),
        Roots::Client => "client (under serve, the client's roots; else the workspace root)".to_string(),
        Roots::Paths(paths) => Value::from(paths.clone()).to_string(),
    }
}

/// Connects `name` alone (every other server paused) and reads the revision it negotiated;
/// `None` when it did not connect (`mcp list` says why).
async fn negotiated_version(paths: &Paths, store: &GlobalStore, name: &str) -> Result<Option<String>> {
    let others: BTreeSet<String> =
        store.servers.iter().map(|def| def.name.clone()).filter(|other| other != name).collect();
    let resolved = toolport::load_resolved(paths, &others)?;
    let options =
        RuntimeOptions::for_paths(paths, paths.workspace_root.clone()).with_observer(crate::cli::observer());
    let runtime = Runtime::start(resolved, options).await?;
    let version =
        runtime.status().into_iter().find(|row| row.name == name).and_then(|row| row.protocol_version);
    runtime.shutdown().await;
    Ok(version)
}

/// The definition with every env and header value, and the OAuth secrets, replaced by `***`.
fn masked(def: &ServerDef) -> ServerDef {
    let mask =
        |pairs: &[(String, String)]| pairs.iter().map(|(k, _)| (k.clone(), MASK.to_string())).collect();
    let secret = |v: &Option<String>| v.as_ref().map(|_| MASK.to_string());
    let oauth = def.oauth.as_ref().map(|o| store::OAuthDef {
        client_secret: secret(&o.client_secret),
        private_key: secret(&o.private_key),
        assertion: secret(&o.assertion),
        idp: o.idp.as_ref().map(|i| store::IdpDef {
            client_secret: secret(&i.client_secret),
            id_token: secret(&i.id_token),
            ..i.clone()
        }),
        ..o.clone()
    });
    ServerDef { env: mask(&def.env), headers: mask(&def.headers), oauth, ..def.clone() }
}
