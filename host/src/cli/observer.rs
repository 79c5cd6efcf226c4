//! The binary's observer: the audit log and the trail of decisions under its home, notices on
//! stderr, and the meter when OTLP or `serve --http --metrics` asks for one. One process runs
//! one command, so the meter is built once before it ([`start_metrics`]) and the rest once the
//! home is known ([`install`]); that observer is handed to every runtime, elicitor and sign-in
//! the command starts. Before that (or without a home) the notices and the meter go on.

use std::sync::{Arc, OnceLock};

use toolport::audit::{AuditLog, AuditTrail};
use toolport::{Observer, Paths};

static OBSERVER: OnceLock<Observer> = OnceLock::new();
/// The observer with the command's meter alone, if it has one: what every observer handed
/// out starts from, so all of them count into the one meter.
static METERED: OnceLock<Observer> = OnceLock::new();

/// Builds the command's meter: the OTLP exporter when the `OTEL_*` variables ask for metrics,
/// the Prometheus reader when `prometheus` (`serve --http --metrics`); none when neither.
/// Called once, inside the async runtime (the gRPC exporter binds to it), before the command.
pub(crate) fn start_metrics(prometheus: bool) -> Result<(), String> {
    let metered = Observer::new().with_metrics(prometheus).map_err(String::from)?;
    let _ = METERED.set(metered);
    Ok(())
}

/// The command's observer ([`install`]ed), or one that only shows notices.
pub(crate) fn observer() -> Observer {
    OBSERVER.get().cloned().unwrap_or_else(notices_only)
}

/// Records for the home of `paths`: trust decisions (holds, approvals, confirmations,
/// redactions) for `mcp get`; every call, read, prompt and sign-in with its arguments' shape,
/// on stderr too when `audit_stderr` (`serve --audit-stderr`; a workspace's `audit.stderr`
/// asks for its own lines).
pub(crate) fn install(paths: &Paths, audit_stderr: bool) -> Observer {
    OBSERVER.get_or_init(|| for_home(paths, audit_stderr)).clone()
}

fn for_home(paths: &Paths, audit_stderr: bool) -> Observer {
    notices_only()
        .with_audit_trail(AuditTrail { file: paths.audit_trail(), workspace: paths.workspace_root.clone() })
        .with_audit_log(AuditLog {
            file: Some(toolport::audit::log_file(&paths.home)),
            printer: Some(Arc::new(|line: &str| eprintln!("{line}"))),
            stderr: audit_stderr,
        })
}

/// Writes every line recorded so far (the command ended, or a signal ends it).
pub(crate) fn flush() {
    if let Some(observer) = OBSERVER.get() {
        observer.flush();
    }
}

/// The command is over: the last lines written and the meter's last points exported (the
/// final OTLP push). May wait on a slow collector: `cli/mod.rs` bounds it.
pub(crate) fn shutdown() {
    observer().shutdown();
}

/// The library's notices (sign-in addresses, serve's reconnects) are for the person here;
/// the command's meter counts.
fn notices_only() -> Observer {
    METERED.get().cloned().unwrap_or_default().with_notices(Arc::new(|line: &str| eprintln!("{line}")))
}
