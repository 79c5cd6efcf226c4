//! The status view: one line per server saying what the runtime really did with it, in the
//! original tool's line format. Shared by `mcp list`, `/mcp` and ACP.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::text::escape_line;

/// How every reserved-name report starts (the reserved-name contract): the runtime writes it,
/// this view lays such a report out on lines of its own.
pub(crate) const RESERVED_CONFLICT: &str = "MCP tool name conflicts with built-in tool: ";
/// How every report of a name two servers list starts; like a reserved-name report, it ends
/// with the fix commands, so it is not clipped to [`ERROR_SUMMARY_COLUMNS`].
pub(crate) const NAME_CONFLICT: &str = "MCP tool name conflict: ";
/// How a connect timeout starts; a package runner's ends with the command that raises it
/// (`runtime`'s connect-timeout hint), so it is not clipped to [`ERROR_SUMMARY_COLUMNS`].
pub(crate) const CONNECT_TIMED_OUT: &str = "connect timed out after ";

/// The five states a server ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Connected, tools listed, checked and converted.
    Connected,
    /// Defined but not enabled by the workspace.
    Disabled,
    /// Enabled, but paused in this session.
    Paused,
    /// Invalid definition, failed connection, or a tool-name conflict.
    Error,
    /// Enabled by the workspace but not defined in the global store.
    Missing,
}

impl ServerState {
    /// The word printed after `state=`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connected => "connected",
            Self::Disabled => "disabled",
            Self::Paused => "paused",
            Self::Error => "error",
            Self::Missing => "missing",
        }
    }
}

/// One server's row in the status view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    /// The server's name as defined (or as referenced, for `missing`).
    pub name: String,
    /// Normalised transport type; `None` prints as `(unknown)`.
    #[serde(rename = "type")]
    pub transport: Option<String>,
    /// What the runtime did with it.
    pub state: ServerState,
    /// Whether the workspace enables it.
    pub workspace_enabled: bool,
    /// Whether this session paused it.
    pub paused: bool,
    /// Tools it contributes to the registry (the same number as `exposed`).
    pub tools: usize,
    /// Tools the server itself listed on its live connection (0 when not connected).
    pub listed: usize,
    /// Tools on the surface after its tool filter, the name policy and the collision rules.
    pub exposed: usize,
    /// Why it is in `error` or `missing`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The MCP revision negotiated with a `connected` server (`--json` only: the text line is
    /// the contract's and does not show it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// What the sandbox refused a connected `wasm` server, as `not granted: …` (the host's
    /// record, shown even while the server carries on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied: Option<String>,
    /// Tools the trust step held off the surface (`.toolport/tools.lock`, findings at `high`),
    /// in listing order: each leaves the surface until `toolport mcp approve`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<HeldTool>,
}

/// One tool held off the surface, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldTool {
    /// The server's own name for it (what `mcp diff` and `mcp approve` take).
    pub tool: String,
    /// `changed since pinned`, `not pinned`, or `finding <rule ids>`.
    pub reason: String,
}

/// ` | held=2 (changed since pinned: a, b; finding TP003: c)`: the held tools grouped by
/// reason, reasons in order of first appearance.
fn held_text(held: &[HeldTool]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for h in held {
        let name = escape_line(&h.tool).into_owned();
        match groups.iter_mut().find(|(reason, _)| *reason == h.reason) {
            Some((_, names)) => names.push(name),
            None => groups.push((&h.reason, vec![name])),
        }
    }
    let parts: Vec<String> = groups
        .iter()
        .map(|(reason, names)| format!("{}: {}", escape_line(reason), names.join(", ")))
        .collect();
    format!(" | held={} ({})", held.len(), parts.join("; "))
}

/// Columns an error summary is clipped to, so one bad server cannot flood the view.
pub const ERROR_SUMMARY_COLUMNS: usize = 120;

/// Columns of a report that ends with its fix commands (a reserved name, a name two servers
/// list, a connect timeout): the host's own text naming every conflicting tool and the fixes,
/// which 120 columns would cut off; still bounded, since a workspace may reserve many names.
const RESERVED_REPORT_COLUMNS: usize = 1_000;

/// CR/LF become spaces, every other control or format character is escaped (the text is a
/// server's or a plugin's, and reaches a terminal), and longer than [`ERROR_SUMMARY_COLUMNS`] is
/// clipped with `...` (a report with its fixes: [`RESERVED_REPORT_COLUMNS`]). The status view,
/// the progress lines and the `Warning:` lines all use it.
pub fn summarize_error(error: &str) -> String {
    let flat: String = error.chars().map(|c| if c == '\r' || c == '\n' { ' ' } else { c }).collect();
    let flat = escape_line(flat.trim());
    let with_fix = [RESERVED_CONFLICT, NAME_CONFLICT, CONNECT_TIMED_OUT].iter().any(|p| flat.starts_with(p));
    let columns = if with_fix { RESERVED_REPORT_COLUMNS } else { ERROR_SUMMARY_COLUMNS };
    if flat.chars().count() <= columns {
        return flat.to_string();
    }
    let mut clipped: String = flat.chars().take(columns - 3).collect();
    clipped.push_str("...");
    clipped
}

/// Where the view's trailer says the two config layers live; `None` omits the trailer
/// (ACP sessions whose servers came from the client).
#[derive(Debug, Clone, Copy)]
pub struct Trailer<'a> {
    /// The global store.
    pub store: &'a Path,
    /// The workspace file.
    pub workspace_config: &'a Path,
}

/// Renders the text view exactly as the original tool shows it (tests assert it).
pub fn render(servers: &[ServerStatus], trailer: Option<Trailer<'_>>) -> String {
    if servers.is_empty() {
        return "mcp: (none)\n".to_string();
    }
    let mut out = String::from("mcp:\n");
    for s in servers {
        let _ = write!(
            out,
            "- {} | type={} | state={} | workspace={} | paused={} | tools={}",
            escape_line(&s.name),
            escape_line(s.transport.as_deref().unwrap_or("(unknown)")),
            s.state.as_str(),
            if s.workspace_enabled { "enabled" } else { "disabled" },
            if s.paused { "yes" } else { "no" },
            s.tools,
        );
        if let Some(err) = &s.error {
            let _ = write!(out, " | error={}", summarize_error(err));
        }
        if let Some(denied) = &s.denied {
            let _ = write!(out, " | denied={}", summarize_error(denied));
        }
        if !s.held.is_empty() {
            out.push_str(&held_text(&s.held));
        }
        out.push('\n');
    }
    if let Some(t) = trailer {
        let _ = writeln!(out, "- store={}", t.store.display());
        let _ = writeln!(out, "- workspaceConfig={}", t.workspace_config.display());
    }
    out
}

/// The `--json` view: `{"servers":[…],"store":…,"workspaceConfig":…}` (documented in
/// `docs/src/configure/mcp.md`).
pub fn render_json(servers: &[ServerStatus], trailer: Option<Trailer<'_>>) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    obj.insert("servers".into(), serde_json::to_value(servers).unwrap_or_default());
    if let Some(t) = trailer {
        obj.insert("store".into(), t.store.display().to_string().into());
        obj.insert("workspaceConfig".into(), t.workspace_config.display().to_string().into());
    }
    serde_json::Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, state: ServerState, error: Option<&str>) -> ServerStatus {
        ServerStatus {
            name: name.into(),
            transport: Some("stdio".into()),
            state,
            workspace_enabled: true,
            paused: false,
            tools: 2,
            listed: 3,
            exposed: 2,
            error: error.map(Into::into),
            protocol_version: None,
            denied: None,
            held: Vec::new(),
        }
    }

    #[test]
    fn held_tools_are_grouped_by_reason() {
        let mut r = row("notes", ServerState::Connected, None);
        let held = |tool: &str, reason: &str| HeldTool { tool: tool.into(), reason: reason.into() };
        r.held = vec![
            held("read_notes", "changed since pinned"),
            held("mail", "finding TP003"),
            held("sync", "changed since pinned"),
        ];
        assert_eq!(
            render(&[r], None),
            "mcp:\n- notes | type=stdio | state=connected | workspace=enabled | paused=no | tools=2 \
             | held=3 (changed since pinned: read_notes, sync; finding TP003: mail)\n"
        );
    }

    #[test]
    fn renders_rows_and_trailer() {
        let out = render(
            &[row("a", ServerState::Connected, None), row("b", ServerState::Error, Some("boom\nbang"))],
            Some(Trailer {
                store: Path::new("/h/mcp.json"),
                workspace_config: Path::new("/w/.toolport/workspace.json"),
            }),
        );
        assert_eq!(
            out,
            "mcp:\n\
             - a | type=stdio | state=connected | workspace=enabled | paused=no | tools=2\n\
             - b | type=stdio | state=error | workspace=enabled | paused=no | tools=2 | error=boom bang\n\
             - store=/h/mcp.json\n\
             - workspaceConfig=/w/.toolport/workspace.json\n"
        );
    }

    #[test]
    fn empty_view_says_none() {
        assert_eq!(render(&[], None), "mcp: (none)\n");
    }

    #[test]
    fn escape_sequences_in_errors_are_escaped_before_clipping() {
        let s = summarize_error("boom\u{1b}]52;c;ZXZpbA==\u{7}\r\n\u{1b}[2J");
        assert_eq!(s, "boom\\u{1b}]52;c;ZXZpbA==\\u{7}  \\u{1b}[2J");
        let long = summarize_error(&"\u{1b}".repeat(300));
        assert_eq!(long.chars().count(), 120);
        assert!(!long.contains('\u{1b}'));
    }

    #[test]
    fn long_errors_are_clipped_to_120_columns() {
        let long = "x".repeat(300);
        let s = summarize_error(&long);
        assert_eq!(s.chars().count(), 120);
        assert!(s.ends_with("..."));
        assert_eq!(summarize_error(&"y".repeat(120)), "y".repeat(120));
    }
}
