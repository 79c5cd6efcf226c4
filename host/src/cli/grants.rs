//! `toolport mcp|plugin grant|revoke|pin`: the flags both take, the library's locked edits of
//! one sandboxed entry, and one line per change (`granted notes: dir /home/me/notes (rw)`); and
//! how `mcp get` shows a sandbox (a wasm server's, a `stdio` server's OS sandbox).

use anyhow::{Context as _, Result};

use super::exit::edit_error;
use serde_json::{Value, json};
use toolport::Paths;
use toolport::edit::{self, GrantChange, GrantItem, GrantOutcome, GrantRequest, SandboxEntry};
use toolport::store::{DirGrant, Grants, NativeSandbox, WasmDef};

/// What `grant` adds or `revoke` takes back; at least one is required (clap exits 2 with the
/// usage otherwise).
#[derive(Debug, clap::Args)]
#[group(required = true, multiple = true)]
pub struct GrantFlags {
    /// A folder, PATH[:ro|:rw]: relative to the current folder, `~/…` kept as typed; read-only
    /// unless `:rw` (servers only). Revoke ignores the mode (repeatable).
    #[arg(long = "dir", value_name = "PATH[:ro|:rw]")]
    dirs: Vec<String>,
    /// A host pattern, scheme://host:port (`*` for any port or a leading label) (repeatable).
    #[arg(long = "host", value_name = "PATTERN")]
    hosts: Vec<String>,
    /// An environment variable name the guest may read (its value is never stored) (repeatable).
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
}

impl GrantFlags {
    fn request(self) -> GrantRequest {
        GrantRequest { dirs: self.dirs, hosts: self.hosts, env: self.env }
    }
}

/// Whether `grant` or `revoke` runs.
#[derive(Debug, Clone, Copy)]
pub enum Change {
    Grant,
    Revoke,
}

/// Grants or revokes, printing one line per item in the order asked.
pub fn change(paths: &Paths, entry: SandboxEntry<'_>, flags: GrantFlags, change: Change) -> Result<()> {
    // The folder relative `--dir` paths are read against, as a shell user means them.
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let store = paths.store_file();
    let request = flags.request();
    let changes = match change {
        Change::Grant => edit::grant_sandbox(&store, entry, &request, &cwd),
        Change::Revoke => edit::revoke_sandbox(&store, entry, &request, &cwd),
    }
    .map_err(edit_error)?;
    for c in &changes {
        println!("{}", line(name(entry), c));
    }
    Ok(())
}

/// Pins the entry's component: `pinned notes: sha256 <hex>`, with what it replaced.
pub fn pin(paths: &Paths, entry: SandboxEntry<'_>) -> Result<()> {
    let pinned = edit::pin_component(&paths.store_file(), entry).map_err(edit_error)?;
    let was = match pinned.previous.as_deref() {
        None => String::new(),
        Some(old) if old == pinned.sha256 => " (unchanged)".to_string(),
        Some(old) => format!(" (was {old})"),
    };
    println!("pinned {}: sha256 {}{was}", name(entry), pinned.sha256);
    Ok(())
}

fn name<'a>(entry: SandboxEntry<'a>) -> &'a str {
    match entry {
        SandboxEntry::Server(name) | SandboxEntry::Plugin(name) => name.trim(),
    }
}

/// `granted notes: dir /srv/n (rw)`, `already granted notes: env TOKEN`,
/// `granted notes: dir /srv/n (ro, was rw)`, `revoked notes: host http://127.0.0.1:*`.
fn line(name: &str, c: &GrantChange) -> String {
    match (&c.outcome, &c.item) {
        (GrantOutcome::Granted, item) => format!("granted {name}: {item}"),
        (GrantOutcome::AlreadyGranted, item) => format!("already granted {name}: {item}"),
        (GrantOutcome::Revoked, item) => format!("revoked {name}: {item}"),
        (GrantOutcome::ModeChanged, GrantItem::Dir { path, guest, writable }) => {
            let guest = guest.as_deref().map(|g| format!(" -> {g}")).unwrap_or_default();
            let (now, was) = if *writable { ("rw", "ro") } else { ("ro", "rw") };
            format!("granted {name}: dir {path}{guest} ({now}, was {was})")
        }
        (GrantOutcome::ModeChanged, item) => format!("granted {name}: {item}"),
    }
}

/// A granted folder for the views: `/srv/data (ro)`, or `~/notes -> /notes (rw)` when the
/// guest sees it at another path than the one written (a `guest`, or a `~` or relative path
/// the guest sees resolved).
pub fn dir_text(d: &DirGrant) -> String {
    let guest = d.guest_path();
    if guest == d.written {
        format!("{} ({})", d.written, d.mode())
    } else {
        format!("{} -> {guest} ({})", d.written, d.mode())
    }
}

/// A granted folder in `--json`: `host` as written, `path` the folder it means, `guest`, `mode`.
pub fn dir_json(d: &DirGrant) -> Value {
    json!({ "host": d.written, "path": d.host.display().to_string(), "guest": d.guest_path(), "mode": d.mode() })
}

/// Grants in `--json`; env grants are names (values are never read for a view).
pub fn grants_json(g: &Grants) -> Value {
    json!({ "dirs": g.dirs.iter().map(dir_json).collect::<Vec<_>>(), "hosts": g.hosts, "env": g.env })
}

/// A sandboxed server's component, grants, limits and pin, one `(key, value)` per line of `mcp get`.
pub fn sandbox_lines(w: &WasmDef) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    if let Some(written) = &w.component {
        let resolved = w.component_path.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let shown = if resolved.is_empty() || resolved == *written {
            written.clone()
        } else {
            format!("{written} ({resolved})")
        };
        lines.push(("component", shown));
    }
    if let Some(builtin) = &w.builtin {
        lines.push(("builtin", builtin.clone()));
    }
    lines.extend(grant_lines(&w.grants));
    let l = &w.limits;
    lines.push((
        "limits",
        format!("memoryMb={} callMs={} cpuPercent={}", l.memory_mb, l.call_ms, l.cpu_percent),
    ));
    lines.push(("sha256", w.sha256.clone().unwrap_or_else(|| "not pinned".to_string())));
    lines
}

/// One line per grant (env names only), or `grants: none`.
fn grant_lines(g: &Grants) -> Vec<(&'static str, String)> {
    let mut lines: Vec<(&'static str, String)> = g.dirs.iter().map(|d| ("grant dir", dir_text(d))).collect();
    lines.extend(g.hosts.iter().map(|h| ("grant host", h.clone())));
    lines.extend(g.env.iter().map(|n| ("grant env", n.clone())));
    if lines.is_empty() {
        lines.push(("grants", "none".to_string()));
    }
    lines
}

/// A `stdio` server's OS sandbox for `mcp get`: `sandbox: on` (`on (required: false)`, or
/// `off` and nothing more), then its grants and limits as a wasm server's are shown.
pub fn native_sandbox_lines(sandbox: Option<&NativeSandbox>) -> Vec<(&'static str, String)> {
    let Some(s) = sandbox else { return vec![("sandbox", "off".to_string())] };
    let on = if s.required { "on" } else { "on (required: false)" };
    let mut lines = vec![("sandbox", on.to_string())];
    lines.extend(grant_lines(&s.grants));
    let l = &s.limits;
    lines.push((
        "limits",
        format!("memoryMb={} processes={} openFiles={}", l.memory_mb, l.processes, l.open_files),
    ));
    lines
}

/// The same in `mcp get --json`'s `sandbox` (absent when the server is not sandboxed).
pub fn native_sandbox_json(s: &NativeSandbox) -> Value {
    json!({
        "required": s.required,
        "grants": grants_json(&s.grants),
        "limits": {
            "memoryMb": s.limits.memory_mb,
            "processes": s.limits.processes,
            "openFiles": s.limits.open_files,
        },
    })
}

/// The same in `mcp get --json`'s `sandbox`: every field present (`null` when unset).
pub fn sandbox_json(w: &WasmDef) -> Value {
    json!({
        "component": w.component,
        "componentPath": w.component_path.as_ref().map(|p| p.display().to_string()),
        "builtin": w.builtin,
        "grants": grants_json(&w.grants),
        "limits": {
            "memoryMb": w.limits.memory_mb,
            "callMs": w.limits.call_ms,
            "cpuPercent": w.limits.cpu_percent,
        },
        "sha256": w.sha256,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_change() {
        let dir = |writable| GrantItem::Dir { path: "/srv/n".into(), guest: None, writable };
        let c = |outcome, item| GrantChange { item, outcome };
        assert_eq!(line("notes", &c(GrantOutcome::Granted, dir(true))), "granted notes: dir /srv/n (rw)");
        assert_eq!(
            line("notes", &c(GrantOutcome::ModeChanged, dir(false))),
            "granted notes: dir /srv/n (ro, was rw)"
        );
        assert_eq!(
            line("notes", &c(GrantOutcome::AlreadyGranted, GrantItem::Env("TOKEN".into()))),
            "already granted notes: env TOKEN"
        );
        assert_eq!(
            line("notes", &c(GrantOutcome::Revoked, GrantItem::Host("http://127.0.0.1:*".into()))),
            "revoked notes: host http://127.0.0.1:*"
        );
    }
}
