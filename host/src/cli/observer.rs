//! The binary's observer: the audit log and the trail of decisions under its home, notices on
//! stderr. One process runs one command, so it is built once, when the home is known
//! ([`install`]), and handed to every runtime, elicitor and sign-in the command starts; before
//! that (or without a home) only the notices go anywhere.

use std::sync::{Arc, OnceLock};

use toolport::audit::{AuditLog, AuditTrail};
use toolport::{Observer, Paths};

static OBSERVER: OnceLock<Observer> = OnceLock::new();

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

/// The library's notices (sign-in addresses, serve's reconnects) are for the person here.
fn notices_only() -> Observer {
    Observer::new().with_notices(Arc::new(|line: &str| eprintln!("{line}")))
}
