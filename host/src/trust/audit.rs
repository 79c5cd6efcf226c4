//! The record of trust decisions: every hold, approval, finding, confirmation, redaction and
//! block. Each is a `tracing` event at `info` under the target `toolport::audit` (server, tool,
//! rule), and, when the host's `Observer` names a trail ([`AuditTrail`]), one JSON line appended
//! to it (by the observer's writer thread), so `mcp get` can show a server's recent decisions
//! after the process that made them ended.
//!
//! Values never enter the record: no argument, result, secret or definition text, only our own
//! words. The trail is bounded: past [`ROTATE_AT`] bytes the file moves to `<name>.1` (the one
//! before is dropped), so it never grows without end. Lines are short and appended with
//! `O_APPEND`, so processes writing at once do not interleave within a line.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::observe::AuditTrail;
use crate::observe::Observer;

/// A trail past this size is rotated before the next line is appended.
pub const ROTATE_AT: u64 = 1024 * 1024;

/// What was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// A definition seen for the first time was recorded in the lock.
    Pinned,
    /// A tool was kept off the surface.
    Held,
    /// A person approved a held tool (re-pinned, its findings accepted).
    Approved,
    /// A check found something in a definition.
    Finding,
    /// A person allowed a call that needed confirming.
    Confirmed,
    /// A call that needed confirming was declined (by a person or because no one could ask).
    Declined,
    /// A secret-shaped value was replaced by `***` in a result.
    Redacted,
    /// A call was not sent because an argument carried a secret.
    Blocked,
    /// A guard plugin refused a request or its answer (or failed, and does not fail open).
    Denied,
    /// A guard plugin rewrote a request or its answer.
    Rewritten,
    /// A guard plugin under `mode: audit` would have refused or rewritten: recorded only.
    Flagged,
    /// A guard plugin failed (trapped, timed out, missing, or answered what does not fit) and
    /// the request went on: it fails open, or is under `mode: audit`.
    Failed,
}

impl Action {
    /// The word in the trail, the log and `mcp get`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pinned => "pinned",
            Self::Held => "held",
            Self::Approved => "approved",
            Self::Finding => "finding",
            Self::Confirmed => "confirmed",
            Self::Declined => "declined",
            Self::Redacted => "redacted",
            Self::Blocked => "blocked",
            Self::Denied => "denied",
            Self::Rewritten => "rewritten",
            Self::Flagged => "flagged",
            Self::Failed => "failed",
        }
    }
}

/// One decision, as the code that made it describes it.
#[derive(Debug, Clone, Copy)]
pub struct Decision<'a> {
    /// What was decided.
    pub action: Action,
    /// The server's configured name.
    pub server: &'a str,
    /// The tool's name on its server, when the decision is about one tool.
    pub tool: Option<&'a str>,
    /// The rule behind it (`TP003`, `pin-changed`, `confirm`, a secret pattern's id).
    pub rule: Option<&'a str>,
    /// A few words of ours: never a value that passed through.
    pub reason: &'a str,
}

/// One line of the trail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrailEntry {
    /// When, RFC 3339 in UTC to the second.
    pub time: String,
    /// The workspace the decision was made in.
    pub workspace: String,
    /// What was decided.
    pub action: Action,
    /// The server's configured name.
    pub server: String,
    /// The tool, if the decision is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Our words.
    pub reason: String,
}

/// Records `decision`: an `info` event, and a line of `observer`'s trail if it has one. A
/// trail that cannot be written is a `warn` event, never a failure of the call or start that
/// decided.
pub fn record(observer: &Observer, decision: Decision<'_>) {
    let Decision { action, server, tool, rule, reason } = decision;
    tracing::info!(
        target: "toolport::audit",
        action = action.as_str(),
        server,
        tool = tool.unwrap_or(""),
        rule = rule.unwrap_or(""),
        "{reason}"
    );
    observer.append_to_trail(ROTATE_AT, |trail| TrailEntry {
        time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        workspace: trail.workspace.display().to_string(),
        action,
        server: server.to_string(),
        tool: tool.map(str::to_string),
        rule: rule.map(str::to_string),
        reason: reason.to_string(),
    });
}

/// Appends `entry` to `file` at once (rotated past [`ROTATE_AT`] into `<file>.1`), without
/// the writer thread.
#[cfg(test)]
fn append(file: &Path, entry: &TrailEntry) -> anyhow::Result<()> {
    let mut line = serde_json::to_vec(entry)?;
    line.push(b'\n');
    crate::observe::audit_log::append_lines(file, &line, ROTATE_AT, 1)
}

fn rotated(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// The newest `limit` decisions about `server` in `workspace`, oldest first, from the trail
/// and the file it rotated into. Lines that do not parse (a torn write after a crash, a newer
/// version's fields) are skipped.
pub fn recent(file: &Path, workspace: &Path, server: &str, limit: usize) -> Vec<TrailEntry> {
    let workspace = workspace.display().to_string();
    let mut entries: Vec<TrailEntry> = [rotated(file), file.to_path_buf()]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines().filter_map(|l| serde_json::from_str::<TrailEntry>(l).ok()).collect::<Vec<_>>()
        })
        .filter(|e| e.server == server && e.workspace == workspace)
        .collect();
    let skip = entries.len().saturating_sub(limit);
    entries.drain(..skip);
    entries
}

/// One entry as `mcp get` shows it: `2026-12-04T19:58:01Z held read_notes (pin-changed):
/// changed since pinned`. The tool and reason are escaped: a tool name is the server's text.
pub fn entry_line(entry: &TrailEntry) -> String {
    let mut line = format!("{} {}", entry.time, entry.action.as_str());
    if let Some(tool) = &entry.tool {
        line.push(' ');
        line.push_str(&crate::text::escape_line(tool));
    }
    if let Some(rule) = &entry.rule {
        line.push_str(&format!(" ({})", crate::text::escape_line(rule)));
    }
    if !entry.reason.is_empty() {
        line.push_str(": ");
        line.push_str(&crate::text::escape_line(&entry.reason));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision<'a>(server: &'a str, tool: &'a str) -> Decision<'a> {
        Decision {
            action: Action::Held,
            server,
            tool: Some(tool),
            rule: Some("pin-changed"),
            reason: "changed since pinned",
        }
    }

    #[test]
    fn the_trail_keeps_decisions_per_server_and_workspace_and_rotates() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("audit/decisions.jsonl");
        let here = dir.path().join("ws");
        let entry = |server: &str, tool: &str, workspace: &Path| TrailEntry {
            time: "2026-12-04T19:58:01Z".into(),
            workspace: workspace.display().to_string(),
            action: Action::Held,
            server: server.into(),
            tool: Some(tool.into()),
            rule: Some("pin-changed".into()),
            reason: "changed since pinned".into(),
        };
        append(&file, &entry("notes", "read_notes", &here))?;
        append(&file, &entry("other", "x", &here))?;
        append(&file, &entry("notes", "elsewhere", &dir.path().join("other-ws")))?;
        append(&file, &entry("notes", "sync", &here))?;
        let seen = recent(&file, &here, "notes", 10);
        let tools: Vec<_> = seen.iter().filter_map(|e| e.tool.as_deref()).collect();
        assert_eq!(tools, ["read_notes", "sync"]);
        assert_eq!(recent(&file, &here, "notes", 1).len(), 1);
        assert_eq!(
            entry_line(&seen[0]),
            "2026-12-04T19:58:01Z held read_notes (pin-changed): changed since pinned"
        );

        // Past the bound the file moves aside and both halves are still read.
        std::fs::write(&file, vec![b'\n'; ROTATE_AT as usize])?;
        append(&file, &entry("notes", "after", &here))?;
        assert!(rotated(&file).exists());
        assert!(std::fs::metadata(&file)?.len() < 1024);
        let tools: Vec<_> = recent(&file, &here, "notes", 10).into_iter().filter_map(|e| e.tool).collect();
        assert_eq!(tools, ["after"]);
        Ok(())
    }

    #[test]
    fn recording_without_a_trail_only_logs() {
        // No trail in a default observer: record must not fail or write anywhere.
        record(&Observer::default(), decision("notes", "read_notes"));
    }

    #[cfg(unix)]
    #[test]
    fn the_trail_is_private() -> anyhow::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("decisions.jsonl");
        let entry = TrailEntry {
            time: "t".into(),
            workspace: "w".into(),
            action: Action::Blocked,
            server: "s".into(),
            tool: None,
            rule: None,
            reason: String::new(),
        };
        append(&file, &entry)?;
        assert_eq!(std::fs::metadata(&file)?.permissions().mode() & 0o777, 0o600);
        Ok(())
    }
}
