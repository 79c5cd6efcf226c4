//! `toolport acp`: an ACP agent on stdin/stdout for editors and embedding hosts.

use std::process::ExitCode;
use std::time::Duration;

use toolport::serving::{AcpLimits, AcpOptions, serve_acp};
use toolport::{Paths, RuntimeOptions};

use super::duration::parse_duration;

/// The home comes from the global flags, and each session's workspace from the client's `cwd`.
#[derive(Debug, clap::Args)]
pub struct AcpArgs {
    /// Close a session no request has used for this long (`90s`, `30m`, `2h`; `0` never).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    idle_timeout: Duration,
    /// Requests served at once; more are refused with an error until one has answered.
    #[arg(long, value_name = "N", default_value_t = AcpLimits::default().max_requests,
          value_parser = parse_count)]
    max_requests: usize,
}

/// Serves ACP until the client closes stdin. stdout carries only protocol lines.
pub async fn run(paths: &Paths, args: AcpArgs) -> anyhow::Result<ExitCode> {
    let idle_timeout = (!args.idle_timeout.is_zero()).then_some(args.idle_timeout);
    let limits = AcpLimits { idle_timeout, max_requests: args.max_requests, ..AcpLimits::default() };
    let options = AcpOptions {
        home: paths.home.clone(),
        runtime: RuntimeOptions::default().with_observer(crate::cli::observer()),
        limits,
    };
    serve_acp(tokio::io::stdin(), tokio::io::stdout(), options).await?;
    Ok(ExitCode::SUCCESS)
}

/// A count of at least 1.
fn parse_count(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a count of at least 1")),
    }
}
