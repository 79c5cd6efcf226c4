//! `toolport mcp diff` and `mcp approve`: what changed in a server's definitions since they
//! were pinned in `.toolport/tools.lock`, and the person's approval that pins them again. Both
//! start the runtime as `mcp list` does (the held tools and their reasons are its view); the
//! library does the work and this file prints it.

use anyhow::Result;
use toolport::Paths;
use toolport::display;

use super::start_workspace as start;

/// `mcp diff <server>`: each held tool and why, a changed one word by word.
pub async fn diff(paths: &Paths, server: &str) -> Result<String> {
    let runtime = start(paths).await?;
    let out = runtime.pin_diff(server);
    runtime.shutdown().await;
    out
}

/// `mcp approve <server> [tool…]`: one line per tool pinned again.
pub async fn approve(paths: &Paths, server: &str, tools: &[String]) -> Result<String> {
    let runtime = start(paths).await?;
    let approved = runtime.approve(server, tools).await;
    runtime.shutdown().await;
    let approved = approved?;
    let lock = paths.tools_lock();
    let shown = display::escape_line(server);
    let mut out = String::new();
    for (tool, reason) in &approved.tools {
        let tool = display::escape_line(tool);
        out.push_str(&format!("mcp approved: {tool} of {shown} ({reason}) -> {}\n", lock.display()));
    }
    if approved.instructions {
        out.push_str(&format!("mcp approved: the instructions of {shown} -> {}\n", lock.display()));
    }
    if out.is_empty() {
        out = format!("mcp approve: nothing of {shown} is held\n");
    }
    Ok(out)
}
