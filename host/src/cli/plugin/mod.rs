//! `toolport plugin list|inspect|run|add|remove|grant|revoke|pin`: the built-in and configured
//! plugins, what a component file targets, a component run once (`run`), entries added
//! and removed (`edit`), and a configured plugin's grants and pin. The work is done by the
//! library's plugin host and its config edits; this file formats it.

mod edit;
mod new;
mod run;
mod run_guard;
mod trial_report;
mod wit;

use std::borrow::Cow;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::cli::ExitError;
use crate::cli::grants::{self, Change, GrantFlags};

use toolport::Paths;
use toolport::edit::SandboxEntry;
use toolport::plugins::{self, Inspection, Origin, PluginHost, PluginSummary, WIT_PACKAGE, WIT_VERSION};
use toolport::store::{GlobalStore, Grants};

/// `toolport plugin <subcommand>`.
#[derive(Debug, clap::Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Built-in plugins, then the store's `plugins` entries: kind, source, grants, limits, pin.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// The world a component targets, its contract version, WASI imports and exports.
    Inspect {
        /// The component file.
        file: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Run a name policy or tool shape once on tools from a file or a configured server, or a
    /// guard on one request (and its result).
    Run(run::RunArgs),
    /// Add a component file to the store's plugins (its world checked against the kind).
    Add(edit::AddArgs),
    /// Remove a configured plugin (refused while a server or this workspace names it).
    Remove(edit::RemoveArgs),
    /// Give a configured plugin a read-only folder, a host or an environment variable.
    #[command(after_help = "Example: toolport plugin grant tcp --host 'tcp://127.0.0.1:*' --dir ./data")]
    #[command(
        override_usage = "toolport plugin grant <PLUGIN> [--dir PATH[:ro|:rw]]… [--host PATTERN]… [--env NAME]…"
    )]
    Grant {
        /// The plugin name (its key in the store's `plugins`).
        #[arg(value_name = "PLUGIN")]
        name: String,
        #[command(flatten)]
        what: GrantFlags,
    },
    /// Take grants back from a configured plugin.
    #[command(
        override_usage = "toolport plugin revoke <PLUGIN> [--dir PATH]… [--host PATTERN]… [--env NAME]…"
    )]
    Revoke {
        /// The plugin name.
        #[arg(value_name = "PLUGIN")]
        name: String,
        #[command(flatten)]
        what: GrantFlags,
    },
    /// Make a new plugin crate (or sandboxed server) that builds with one `cargo build`.
    #[command(after_help = "Example: toolport plugin new my-policy --kind name-policy --path ./my-policy")]
    New(new::NewArgs),
    /// Write the plugin contract as one binary WIT package (for componentize-py, jco, …).
    Wit(wit::WitArgs),
    /// Pin a configured plugin's file to its SHA-256: a changed file is then refused.
    Pin {
        /// The plugin name.
        #[arg(value_name = "PLUGIN")]
        name: String,
    },
}

/// Runs a `plugin` subcommand.
pub async fn run(paths: &Paths, args: PluginArgs) -> Result<ExitCode> {
    match args.command {
        PluginCommand::List { json } => list(paths, json),
        PluginCommand::Inspect { file, json } => inspect(paths, &file, json),
        PluginCommand::Run(args) => run::run(paths, args).await,
        PluginCommand::Add(args) => edit::add(paths, args),
        PluginCommand::Remove(args) => edit::remove(paths, args),
        PluginCommand::Grant { name, what } => {
            grants::change(paths, SandboxEntry::Plugin(&name), what, Change::Grant)
                .map(|()| ExitCode::SUCCESS)
        }
        PluginCommand::Revoke { name, what } => {
            grants::change(paths, SandboxEntry::Plugin(&name), what, Change::Revoke)
                .map(|()| ExitCode::SUCCESS)
        }
        PluginCommand::New(args) => new::run(args),
        PluginCommand::Wit(args) => wit::run(args),
        PluginCommand::Pin { name } => {
            grants::pin(paths, SandboxEntry::Plugin(&name)).map(|()| ExitCode::SUCCESS)
        }
    }
}

fn list(paths: &Paths, as_json: bool) -> Result<ExitCode> {
    let store = GlobalStore::load(&paths.store_file())?;
    let host = PluginHost::new(None, &store.plugins)?;
    let plugins = host.list();
    // A configured plugin's pin is in its store entry (the host's summary does not carry it).
    let pin = |p: &PluginSummary| match p.origin {
        Origin::Builtin => None,
        Origin::File(_) => store.plugins.iter().find(|d| d.name == p.name).and_then(|d| d.sha256.clone()),
    };
    if as_json {
        let rows: Vec<Value> = plugins.iter().map(|p| summary_json(p, pin(p), &uses(p))).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 7]> = plugins
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                p.kind.as_str().to_string(),
                p.origin.to_string(),
                uses_text(&uses(p)),
                grants_text(&p.grants),
                format!("{} MiB, {} ms, {}% CPU", p.limits.memory_mb, p.limits.call_ms, p.limits.cpu_percent),
                pin(p).map_or_else(|| "none".to_string(), |d| format!("sha256 {d}")),
            ]
        })
        .collect();
    print_table(["NAME", "KIND", "SOURCE", "USES", "GRANTS", "LIMITS", "PIN"], &rows);
    Ok(ExitCode::SUCCESS)
}

/// What of the sandbox a plugin's component would use (`env`, `dirs`, `sockets`, `http`), read
/// from its imports; `Err` says why the file could not be read.
fn uses(p: &PluginSummary) -> Result<Vec<&'static str>, String> {
    let bytes: Cow<'_, [u8]> = match &p.origin {
        Origin::Builtin => Cow::Borrowed(plugins::builtin_bytes(&p.name).ok_or("not built in")?),
        Origin::File(path) => Cow::Owned(std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?),
    };
    plugins::sandbox_uses(&bytes).map_err(|e| format!("not a component: {e}"))
}

fn uses_text(uses: &Result<Vec<&'static str>, String>) -> String {
    match uses {
        Ok(list) if list.is_empty() => "none".to_string(),
        Ok(list) => list.join(" "),
        Err(why) => format!("? ({why})"),
    }
}

fn summary_json(
    p: &PluginSummary,
    sha256: Option<String>,
    uses: &Result<Vec<&'static str>, String>,
) -> Value {
    let (builtin, path) = match &p.origin {
        Origin::Builtin => (true, Value::Null),
        Origin::File(path) => (false, json!(path.display().to_string())),
    };
    json!({
        "name": p.name,
        "kind": p.kind.as_str(),
        "builtin": builtin,
        "path": path,
        "uses": match uses { Ok(list) => json!(list), Err(why) => json!({ "error": why }) },
        "grants": grants::grants_json(&p.grants),
        "limits": {
            "memoryMb": p.limits.memory_mb,
            "callMs": p.limits.call_ms,
            "cpuPercent": p.limits.cpu_percent,
        },
        "sha256": sha256,
    })
}

/// Grants on one line, folders with where the guest sees them and their mode (a plugin's are
/// read-only). Env grants are names only: values are never shown.
fn grants_text(g: &Grants) -> String {
    let mut parts = Vec::new();
    if !g.hosts.is_empty() {
        parts.push(format!("hosts: {}", g.hosts.join(" ")));
    }
    if !g.env.is_empty() {
        parts.push(format!("env: {}", g.env.join(" ")));
    }
    if !g.dirs.is_empty() {
        let dirs: Vec<String> = g.dirs.iter().map(grants::dir_text).collect();
        parts.push(format!("dirs: {}", dirs.join(" ")));
    }
    if parts.is_empty() { "none".to_string() } else { parts.join("; ") }
}

fn print_table<const N: usize>(header: [&str; N], rows: &[[String; N]]) {
    let mut widths = header.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

fn inspect(paths: &Paths, file: &std::path::Path, as_json: bool) -> Result<ExitCode> {
    let bytes =
        std::fs::read(file).map_err(|e| ExitError::usage(format!("cannot read {}: {e}", file.display())))?;
    let found =
        plugins::inspect(&bytes, Some(&paths.cache_dir())).with_context(|| format!("{}", file.display()))?;
    // What `plugin pin` or `mcp pin` would write for this file, to compare before trusting it.
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let uses = plugins::sandbox_uses(&bytes).with_context(|| format!("{}", file.display()))?;
    // The store's entries for this very file: what it would use next to what it is granted.
    let store = GlobalStore::load(&paths.store_file())?;
    let configured: Vec<_> =
        store.plugins.iter().filter(|d| toolport::edit::same_path(&d.path, file)).collect();
    if as_json {
        let mut value = serde_json::to_value(&found)?;
        if let Some(map) = value.as_object_mut() {
            map.insert("file".into(), json!(file.display().to_string()));
            map.insert("sha256".into(), json!(sha256));
            map.insert("uses".into(), json!(uses));
            let entries: Vec<Value> = configured
                .iter()
                .map(|d| json!({ "name": d.name, "kind": d.kind.as_str(), "grants": grants::grants_json(&d.grants) }))
                .collect();
            map.insert("configuredAs".into(), json!(entries));
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", inspection_text(file, &sha256, &found));
    println!("uses: {}", uses_text(&Ok(uses)));
    for d in configured {
        println!("configured as {} ({}): grants {}", d.name, d.kind.as_str(), grants_text(&d.grants));
    }
    Ok(ExitCode::SUCCESS)
}

fn inspection_text(file: &std::path::Path, sha256: &str, i: &Inspection) -> String {
    let list = |items: &[String]| if items.is_empty() { "none".to_string() } else { items.join("\n  ") };
    let version = match &i.version {
        Some(v) if i.compatible => format!("{WIT_PACKAGE}@{v} (served by this toolport)"),
        Some(v) => {
            format!("{WIT_PACKAGE}@{v} (NOT served: this toolport serves {WIT_PACKAGE}@{WIT_VERSION})")
        }
        None => format!("none (not a {WIT_PACKAGE} component)"),
    };
    format!(
        "file: {}\nsha256: {sha256}\nworld: {}\nversion: {version}\nWASI imports:\n  {}\nother imports:\n  {}\nexports:\n  {}\n",
        file.display(),
        i.world.as_deref().unwrap_or("none"),
        list(&i.wasi_imports),
        list(&i.other_imports),
        list(&i.exports),
    )
}
