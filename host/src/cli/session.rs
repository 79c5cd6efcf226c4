//! `toolport session`: the interactive `/mcp` language over a live runtime.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;

use super::ask::{ElicitPolicy, TerminalElicitor};
use super::progress::Spinners;
use super::session_editor::run_interactive;
use toolport::{Paths, RuntimeOptions, Session};

/// File in the home folder where the terminal editor keeps past lines.
const HISTORY_FILE: &str = "session_history";

/// `toolport session` takes no options: the home and workspace come from the global flags.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {}

/// Starts the runtime for this workspace and reads commands until `/quit` or end of input.
pub async fn run(paths: &Paths, _args: SessionArgs) -> anyhow::Result<ExitCode> {
    // Spinners while servers connect, only when stderr is a terminal.
    // A server's questions are asked on the terminal (declined when input is not one).
    let options = RuntimeOptions::for_paths(paths, paths.workspace_root.clone())
        .with_progress(Spinners::on_stderr())
        .with_elicitor(Arc::new(TerminalElicitor::new(ElicitPolicy::Ask)))
        // A person at the terminal can finish a sign-in for more scope; piped input cannot.
        .with_sign_in(std::io::stdin().is_terminal())
        .with_observer(crate::cli::observer());
    let session = Session::start(paths.clone(), options).await?;
    run_interactive(session, Some(paths.home.join(HISTORY_FILE))).await?;
    Ok(ExitCode::SUCCESS)
}
