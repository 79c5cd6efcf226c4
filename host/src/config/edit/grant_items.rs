//! What a grant edit is asked for and what it reports, item by item: shared by the grant and
//! revoke edits, `plugin add` (which grants as it adds) and the commands that print the changes.

use std::fmt;

/// What to grant or revoke, as typed: folders as `PATH[:ro|:rw]` (relative ones against the
/// caller's folder), host patterns, environment variable names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantRequest {
    /// `--dir`.
    pub dirs: Vec<String>,
    /// `--host`.
    pub hosts: Vec<String>,
    /// `--env`.
    pub env: Vec<String>,
}

impl GrantRequest {
    /// Nothing asked for.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.hosts.is_empty() && self.env.is_empty()
    }
}

/// One granted thing, as the file holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantItem {
    /// A folder: its path as written, where the guest sees it if elsewhere, and its mode.
    Dir {
        /// `host` as the file has it (`~/notes`, `/srv/data`).
        path: String,
        /// `guest`, when the entry sets one.
        guest: Option<String>,
        /// `mode: "rw"`.
        writable: bool,
    },
    /// A `scheme://host:port` pattern.
    Host(String),
    /// An environment variable name (its value is never read here).
    Env(String),
}

impl fmt::Display for GrantItem {
    /// `dir /srv/data (rw)`, `dir ~/n -> /notes (ro)`, `host http://127.0.0.1:*`, `env TOKEN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dir { path, guest, writable } => {
                write!(f, "dir {path}")?;
                if let Some(guest) = guest {
                    write!(f, " -> {guest}")?;
                }
                write!(f, " ({})", if *writable { "rw" } else { "ro" })
            }
            Self::Host(pattern) => write!(f, "host {pattern}"),
            Self::Env(name) => write!(f, "env {name}"),
        }
    }
}

/// What happened to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantOutcome {
    /// Added.
    Granted,
    /// It was there already (with this mode): nothing changed.
    AlreadyGranted,
    /// A folder already granted with the other mode now has the one asked for.
    ModeChanged,
    /// Removed.
    Revoked,
}

/// One item's outcome, in the order the request asked for them (folders, hosts, env).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantChange {
    /// The item as the file holds it after the edit (a revoked one: as it was).
    pub item: GrantItem,
    /// What happened to it.
    pub outcome: GrantOutcome,
}
