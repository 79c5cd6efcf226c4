//! `toolport plugin list|inspect`: the built-in and configured plugins, and what a component
//! file targets. The work is done by the library's plugin host; this file formats it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Subcommand;
use serde_json::{Value, json};

use super::ExitError;
use toolport::{GlobalStore, Inspection, Origin, Paths, PluginHost, PluginSummary, WIT_PACKAGE, WIT_VERSION};

/// `toolport plugin <subcommand>`.
#[derive(Debug, clap::Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Built-in plugins, then the store's `plugins` entries: kind, source, grants, limits.
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
}

/// Runs a `plugin` subcommand.
pub async fn run(paths: &Paths, args: PluginArgs) -> Result<ExitCode> {
    match args.command {
        PluginCommand::List { json } => list(paths, json),
        PluginCommand::Inspect { file, json } => inspect(&file, json),
    }
}

fn list(paths: &Paths, as_json: bool) -> Result<ExitCode> {
    let store = GlobalStore::load(&paths.store_file())?;
    let host = PluginHost::new(None, &store.plugins)?;
    let plugins = host.list();
    if as_json {
        let rows: Vec<Value> = plugins.iter().map(summary_json).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 5]> = plugins
        .iter()
        .map(|p| {
            [
                p.name.clone(),
                p.kind.as_str().to_string(),
                p.origin.to_string(),
                grants_text(p),
                format!("{} MiB, {} ms", p.limits.memory_mb, p.limits.call_ms),
            ]
        })
        .collect();
    print_table(["NAME", "KIND", "SOURCE", "GRANTS", "LIMITS"], &rows);
    Ok(ExitCode::SUCCESS)
}

fn summary_json(p: &PluginSummary) -> Value {
    let (builtin, path) = match &p.origin {
        Origin::Builtin => (true, Value::Null),
        Origin::File(path) => (false, json!(path.display().to_string())),
    };
    json!({
        "name": p.name,
        "kind": p.kind.as_str(),
        "builtin": builtin,
        "path": path,
        "grants": {
            "hosts": p.grants.hosts,
            "env": p.grants.env,
            "dirs": p.grants.dirs.iter().map(|d| d.host.display().to_string()).collect::<Vec<_>>(),
        },
        "limits": { "memoryMb": p.limits.memory_mb, "callMs": p.limits.call_ms },
    })
}

/// Grants on one line. Env grants are names only: values are never shown.
fn grants_text(p: &PluginSummary) -> String {
    let g = &p.grants;
    let mut parts = Vec::new();
    if !g.hosts.is_empty() {
        parts.push(format!("hosts: {}", g.hosts.join(" ")));
    }
    if !g.env.is_empty() {
        parts.push(format!("env: {}", g.env.join(" ")));
    }
    if !g.dirs.is_empty() {
        let dirs: Vec<String> = g.dirs.iter().map(|d| d.host.display().to_string()).collect();
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

fn inspect(file: &std::path::Path, as_json: bool) -> Result<ExitCode> {
    let bytes =
        std::fs::read(file).map_err(|e| ExitError::usage(format!("cannot read {}: {e}", file.display())))?;
    let found = toolport::inspect(&bytes).with_context(|| format!("{}", file.display()))?;
    if as_json {
        let mut value = serde_json::to_value(&found)?;
        if let Some(map) = value.as_object_mut() {
            map.insert("file".into(), json!(file.display().to_string()));
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", inspection_text(file, &found));
    Ok(ExitCode::SUCCESS)
}

fn inspection_text(file: &std::path::Path, i: &Inspection) -> String {
    let list = |items: &[String]| if items.is_empty() { "none".to_string() } else { items.join("\n  ") };
    let version = match &i.version {
        Some(v) if i.compatible => format!("{WIT_PACKAGE}@{v} (served by this toolport)"),
        Some(v) => {
            format!("{WIT_PACKAGE}@{v} (NOT served: this toolport serves {WIT_PACKAGE}@{WIT_VERSION})")
        }
        None => format!("none (not a {WIT_PACKAGE} component)"),
    };
    format!(
        "file: {}\nworld: {}\nversion: {version}\nWASI imports:\n  {}\nother imports:\n  {}\nexports:\n  {}\n",
        file.display(),
        i.world.as_deref().unwrap_or("none"),
        list(&i.wasi_imports),
        list(&i.other_imports),
        list(&i.exports),
    )
}
