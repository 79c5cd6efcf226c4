//! The process limit for a server started by root. `RLIMIT_NPROC` does not bind a process
//! whose real uid is root's (the kernel exempts it, in any user namespace mapped to it), so a
//! launcher running as root puts itself, before anything else, in a `pids` cgroup of its own
//! whose `pids.max` is the limit; the server and its children inherit it. An unprivileged user
//! is bound by the rlimit and needs no cgroup. The host removes the cgroup once the launcher
//! has ended; what a host that ended first left behind, the next launcher removes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::SandboxError;

/// Where a `pids` controller may be: the unified hierarchy (cgroup v2), or v1's own.
const HIERARCHIES: [&str; 2] = ["/sys/fs/cgroup", "/sys/fs/cgroup/pids"];
/// A launcher's cgroup is this and its pid.
const PREFIX: &str = "toolport-sandbox-";

/// The cgroup folders a launcher with this pid may have made.
pub fn folders(launcher: u32) -> Vec<PathBuf> {
    HIERARCHIES.iter().map(|h| PathBuf::from(h).join(format!("{PREFIX}{launcher}"))).collect()
}

/// Removes the cgroups of launchers that have ended: a toolport that exits (or is killed) right
/// after its servers may not get to remove theirs ([`remove`]). A living launcher's pid is in
/// `/proc`, so one still setting up is left alone; a cgroup with processes cannot be removed.
fn sweep(hierarchy: &str) {
    let Ok(entries) = std::fs::read_dir(hierarchy) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else { continue };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Makes `folder`; one left by an ended process that had this pid before is replaced (the
/// removal fails if it still holds a process).
fn make_fresh(folder: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(folder) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_dir(folder)?;
            std::fs::create_dir(folder)
        }
        made => made,
    }
}

/// The launcher's side: when running as root, joins a new `pids` cgroup limited to `max`.
pub fn enter(max: u64) -> Result<(), SandboxError> {
    if !nix::unistd::getuid().is_root() {
        return Ok(());
    }
    let pid = std::process::id();
    let mut tried = Vec::new();
    for (hierarchy, folder) in HIERARCHIES.iter().zip(folders(pid)) {
        let has_pids = std::fs::read_to_string(format!("{hierarchy}/cgroup.controllers"))
            .map(|c| c.split_whitespace().any(|c| c == "pids"))
            .unwrap_or_else(|_| {
                std::path::Path::new(hierarchy).join("pids.max").exists() || hierarchy.ends_with("pids")
            });
        if !has_pids {
            continue;
        }
        sweep(hierarchy);
        let joined = make_fresh(&folder)
            .and_then(|()| std::fs::write(folder.join("pids.max"), max.to_string()))
            .and_then(|()| std::fs::write(folder.join("cgroup.procs"), pid.to_string()));
        match joined {
            Ok(()) => return Ok(()),
            Err(e) => {
                let _ = std::fs::remove_dir(&folder);
                tried.push(format!("{}: {e}", folder.display()));
            }
        }
    }
    Err(SandboxError(format!(
        "cannot limit the server's processes: running as root, rlimits do not bind it, and no pids cgroup could be made ({})",
        if tried.is_empty() { "no pids controller is mounted".to_string() } else { tried.join("; ") }
    )))
}

/// The host's side: removes the launcher's cgroup, once its last process is gone (the PID
/// namespace's other processes die with its first, a moment after).
pub fn remove(launcher: u32) {
    let folders: Vec<PathBuf> = folders(launcher).into_iter().filter(|f| f.exists()).collect();
    if folders.is_empty() {
        return;
    }
    std::thread::spawn(move || {
        for _ in 0..50 {
            if folders.iter().all(|f| std::fs::remove_dir(f).is_ok() || !f.exists()) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::warn!("cannot remove the sandbox's cgroup {}", folders[0].display());
    });
}
