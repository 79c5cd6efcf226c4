//! `toolport sandbox check`: whether this machine can confine stdio servers, and why not; and
//! the launcher's entry (`toolport __sandbox-launch`, toolport's own, never typed), which runs
//! before anything else of the binary: no async runtime, no threads, no tracing.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use toolport::sandbox::{self, Ended};

/// The launcher's exit when it could not confine the server (`EX_CONFIG`); its reason is on
/// stderr, which toolport quotes on the server's status row.
const EXIT_NOT_CONFINED: u8 = 78;

#[derive(Debug, Args)]
pub struct SandboxArgs {
    #[command(subcommand)]
    command: SandboxCommand,
}

#[derive(Debug, Subcommand)]
enum SandboxCommand {
    /// Whether this machine can sandbox stdio servers ("sandbox": true), and what is missing
    /// if it cannot: exit 0 if it can, 1 if not.
    Check,
}

/// Runs `toolport sandbox …`.
pub fn run(args: &SandboxArgs) -> ExitCode {
    match args.command {
        SandboxCommand::Check => check(),
    }
}

fn check() -> ExitCode {
    match sandbox::check() {
        Ok(report) => {
            println!("this machine can sandbox stdio servers:");
            let scoped = if report.landlock_abi >= 6 {
                "; signals and abstract Unix sockets scoped too"
            } else {
                "; signals and abstract Unix sockets kept in by the PID and network namespaces only"
            };
            println!("  files: Landlock ABI {}{scoped}", report.landlock_abi);
            println!("  network: a network namespace of their own; out only through toolport's egress proxy");
            println!(
                "  processes: user, PID, IPC and UTS namespaces; seccomp; rlimits (and a pids cgroup as root)"
            );
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("this machine cannot sandbox stdio servers: {why}");
            ExitCode::from(super::EXIT_FAILURE)
        }
    }
}

/// The launcher: confines itself, runs the server, and leaves as the server did.
pub fn launch() -> ExitCode {
    match sandbox::launch() {
        Ok(Ended::Checked { landlock_fully, landlock_abi }) => {
            println!(
                "{}",
                serde_json::json!({ "landlockFully": landlock_fully, "landlockAbi": landlock_abi })
            );
            ExitCode::SUCCESS
        }
        Ok(Ended::Server(status)) => exit_as(status),
        Err(why) => {
            eprintln!("toolport sandbox: {why}");
            ExitCode::from(EXIT_NOT_CONFINED)
        }
    }
}

/// The server's status as the launcher's own: its code, or its signal raised again here so
/// toolport sees "killed by signal N" as it would for an unconfined server.
fn exit_as(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if let Some(signal) = status.signal().and_then(|s| nix::sys::signal::Signal::try_from(s).ok()) {
        let _ = nix::sys::signal::SigSet::all().thread_unblock();
        let _ = nix::sys::signal::raise(signal);
        return ExitCode::from(128u8.saturating_add(u8::try_from(signal as i32).unwrap_or(0)));
    }
    ExitCode::from(1)
}
