//! The commands a message prints as its fix (`toolport mcp set …`, `toolport workspace set …`),
//! written once so each runs as printed: every word quoted for a POSIX shell when it needs it
//! (a glob's `*` is not expanded by the shell, a `;` in a tool name ends nothing), and a tool's
//! own name escaped as a glob so `tools.exclude` leaves out exactly that tool. A leaf: the
//! runtime's name rules and its connect errors both print them.

use std::time::Duration;

/// The fix that lets the namespace name policy prefix every tool with its server's name.
pub const NAMESPACE_FIX: &str = "toolport workspace set namePolicy namespace";

/// A connect timeout suggested after one ran out: two minutes, or twice the old one when that
/// is longer (a first `npx` or `uvx` run downloads packages; 5–20 s is common, more on a slow
/// network).
pub fn longer_connect_timeout(old: Duration) -> u128 {
    (old.as_millis() * 2).max(120_000)
}

/// `toolport mcp set SERVER timeouts.connectMs MS`.
pub fn connect_timeout_fix(server: &str, ms: u128) -> String {
    toolport(&["mcp", "set", server, "timeouts.connectMs", &ms.to_string()])
}

/// `toolport mcp set SERVER sandbox true`: a `stdio` server put under the OS sandbox, so it
/// takes grants.
pub fn sandbox_fix(server: &str) -> String {
    toolport(&["mcp", "set", server, "sandbox", "true"])
}

/// `toolport mcp set SERVER tools.exclude …`: the globs the server already excludes (as
/// written, so none is lost, since the values replace the list), then each of `tools` (the
/// server's own names) escaped as a glob that matches only that name.
pub fn exclude_fix(server: &str, excluded: &[String], tools: &[&str]) -> String {
    let escaped: Vec<String> = tools.iter().map(|t| globset::escape(t)).collect();
    let mut words = vec!["mcp", "set", server, "tools.exclude"];
    words.extend(excluded.iter().map(String::as_str));
    words.extend(escaped.iter().map(String::as_str));
    toolport(&words)
}

/// `toolport mcp grant SERVER --host PATTERN`: what opens one destination to a sandboxed
/// server, printed where the sandbox refused it.
pub fn grant_host_fix(server: &str, pattern: &str) -> String {
    toolport(&["mcp", "grant", server, "--host", pattern])
}

/// `toolport` and `words`, each quoted for a shell when it needs it.
fn toolport(words: &[&str]) -> String {
    let mut line = String::from("toolport");
    for word in words {
        line.push(' ');
        // A NUL cannot be passed as an argument at all; such a word is shown as it is.
        line.push_str(&shlex::try_quote(word).unwrap_or((*word).into()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_and_names_escaped_as_globs() {
        assert_eq!(
            exclude_fix("files", &["x_*".into()], &["read_file", "a;b", "why?"]),
            "toolport mcp set files tools.exclude 'x_*' read_file 'a;b' 'why[?]'"
        );
        assert_eq!(
            connect_timeout_fix("my server", 120_000),
            "toolport mcp set 'my server' timeouts.connectMs 120000"
        );
        assert_eq!(
            grant_host_fix("my server", "https://[::1]:443"),
            "toolport mcp grant 'my server' --host 'https://[::1]:443'"
        );
        assert_eq!(sandbox_fix("my fs"), "toolport mcp set 'my fs' sandbox true");
        assert_eq!(longer_connect_timeout(Duration::from_millis(2_000)), 120_000);
        assert_eq!(longer_connect_timeout(Duration::from_millis(90_000)), 180_000);
    }
}
