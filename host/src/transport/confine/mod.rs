//! The native sandbox of stdio servers (`"sandbox": true`): the server runs under Landlock, in
//! user, network, PID, IPC and UTS namespaces of its own, under a seccomp filter and rlimits,
//! and reaches the network only through toolport's egress proxy, which lets through what
//! `grants.hosts` names and records the rest. Rootless and without a daemon: toolport starts
//! itself again as the launcher (`launcher.rs`), which confines itself and starts the server.
//!
//! This side decides what the server gets (`paths.rs`, the grants, its environment), starts the
//! launcher and, once the launcher hands over the listener inside the namespace
//! (`handoff.rs`), serves the proxy on it (`transport/egress.rs`).

#[cfg(target_os = "linux")]
mod error;
mod handoff;
#[cfg(target_os = "linux")]
mod landlock_rules;
pub(crate) mod launcher;
#[cfg(target_os = "linux")]
mod loopback;
mod paths;
#[cfg(target_os = "linux")]
mod pids_cgroup;
#[cfg(target_os = "linux")]
mod seccomp;
pub(crate) mod spec;

pub use error::SandboxError;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tokio::process::Command;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::egress::{self, EgressRefusals};
use crate::config::{HostPattern, INHERIT_ENV_KEPT, NativeSandbox, ServerDef};
use spec::{LAUNCHER_ARG, LaunchSpec, SPEC_VAR, SpecLimits};

/// Set by an embedder whose executable is not toolport's binary: the binary to start as the
/// launcher.
pub const LAUNCHER_VAR: &str = "TOOLPORT_SANDBOX_LAUNCHER";

/// What the host keeps for a launcher it is about to start.
pub(crate) struct Pending {
    dir: tempfile::TempDir,
    handoff: std::os::unix::net::UnixListener,
    hosts: Vec<HostPattern>,
    server: String,
}

/// A started confined server's host side: its private folder (removed when it ends) and its
/// proxy (stopped when this is dropped).
#[derive(Debug)]
pub struct Confinement {
    _dir: tempfile::TempDir,
    _proxy: DropGuard,
    refusals: EgressRefusals,
    launcher: u32,
}

impl Drop for Confinement {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        pids_cgroup::remove(self.launcher);
        #[cfg(not(target_os = "linux"))]
        let _ = self.launcher;
    }
}

impl Confinement {
    /// What the proxy refused, in the status view's words.
    pub fn refusals(&self) -> EgressRefusals {
        self.refusals.clone()
    }
}

/// Whether `def` runs confined: `sandbox` on, unless this machine cannot and the definition
/// says it need not be (`"required": false`). A required sandbox is never checked first: the
/// launcher fails closed and says why, which the server's status row then quotes.
pub(crate) fn wanted(def: &ServerDef) -> Option<&NativeSandbox> {
    let sandbox = def.sandbox.as_ref()?;
    if sandbox.required {
        return Some(sandbox);
    }
    match check() {
        Ok(_) => Some(sandbox),
        Err(why) => {
            tracing::warn!(server = %def.name, "sandbox unavailable, starting unconfined as its definition allows: {why}");
            None
        }
    }
}

/// Builds the launcher's command for `def` (already `${VAR}`-expanded); the caller sets its
/// stdio, starts it and hands its pid to [`Pending::started`].
pub(crate) fn prepare(def: &ServerDef, sandbox: &NativeSandbox) -> Result<(Command, Pending), SandboxError> {
    let command = def.command.as_deref().ok_or("stdio transport requires command")?;
    let path_var = std::env::var("PATH").ok();
    let program = paths::find_on_path(command, path_var.as_deref())
        .and_then(|p| std::path::absolute(p).ok())
        .ok_or_else(|| SandboxError(format!("cannot start {command}: not found on PATH")))?;
    let dir = tempfile::Builder::new()
        .prefix("toolport-sandbox-")
        .tempdir()
        .map_err(|e| SandboxError(format!("cannot make the sandbox's private folder: {e}")))?;
    let (home, tmp) = (dir.path().join("home"), dir.path().join("tmp"));
    for folder in [&home, &tmp] {
        std::fs::create_dir(folder)
            .map_err(|e| SandboxError(format!("cannot make {}: {e}", folder.display())))?;
    }
    let socket = dir.path().join("handoff.sock");
    let handoff = std::os::unix::net::UnixListener::bind(&socket)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| SandboxError(format!("cannot listen at {}: {e}", socket.display())))?;

    let grants = &sandbox.grants;
    let mut read_only = paths::read_only(&program, &def.args, path_var.as_deref());
    let mut read_write = vec![home.clone(), tmp.clone()];
    for d in &grants.dirs {
        if d.writable { read_write.push(d.host.clone()) } else { read_only.push(d.host.clone()) }
    }
    let spec = LaunchSpec {
        program,
        args: def.args.clone(),
        env: environment(def, sandbox, &home, &tmp),
        cwd: def.cwd.as_ref().map(PathBuf::from),
        read_only,
        read_write,
        devices: paths::DEVICES.iter().map(PathBuf::from).collect(),
        limits: SpecLimits {
            memory_mb: sandbox.limits.memory_mb,
            processes: sandbox.limits.processes,
            open_files: sandbox.limits.open_files,
        },
        handoff: socket,
        parent: i32::try_from(std::process::id()).unwrap_or(i32::MAX),
        check_only: false,
    };
    let hosts = grants.hosts.iter().filter_map(|h| HostPattern::parse(h).ok()).collect();
    let command = Command::from(launcher_command(&spec)?);
    Ok((command, Pending { dir, handoff, hosts, server: def.name.clone() }))
}

impl Pending {
    /// The launcher started as `pid`: accepts its listener and serves the proxy on it until the
    /// returned [`Confinement`] is dropped.
    pub(crate) fn started(self, pid: u32) -> Confinement {
        let stop = CancellationToken::new();
        let refusals = EgressRefusals::default();
        let Pending { dir, handoff, hosts, server } = self;
        let (task_stop, task_refusals) = (stop.clone(), refusals.clone());
        tokio::spawn(async move {
            let listener = tokio::select! {
                got = accept(handoff, pid) => got,
                _ = task_stop.cancelled() => return,
            };
            match listener {
                Ok(listener) => {
                    if let Err(e) = egress::spawn(listener, server.clone(), hosts, task_refusals, task_stop) {
                        tracing::warn!(server = %server, "cannot serve the egress proxy: {e}");
                    }
                }
                Err(e) => tracing::warn!(server = %server, "no egress proxy: {e}"),
            }
        });
        Confinement { _dir: dir, _proxy: stop.drop_guard(), refusals, launcher: pid }
    }
}

#[cfg(target_os = "linux")]
async fn accept(
    handoff: std::os::unix::net::UnixListener,
    pid: u32,
) -> Result<std::net::TcpListener, SandboxError> {
    let listener = tokio::net::UnixListener::from_std(handoff).map_err(|e| e.to_string())?;
    let deadline = tokio::time::Instant::now() + handoff::WAIT;
    loop {
        let (stream, _) = tokio::time::timeout_at(deadline, listener.accept())
            .await
            .map_err(|_| "the launcher did not hand its listener over".to_string())?
            .map_err(|e| e.to_string())?;
        let stream = stream.into_std().map_err(|e| e.to_string())?;
        stream.set_nonblocking(false).map_err(|e| e.to_string())?;
        match tokio::task::spawn_blocking(move || handoff::receive(&stream, pid)).await {
            Ok(Ok(listener)) => return Ok(listener),
            Ok(Err(e)) => tracing::warn!("refused a sandbox handoff: {e}"),
            Err(e) => return Err(e.to_string().into()),
        }
    }
}

/// Elsewhere the launcher refuses before any hand-over (see `launcher::run`).
#[cfg(not(target_os = "linux"))]
async fn accept(
    _handoff: std::os::unix::net::UnixListener,
    _pid: u32,
) -> Result<std::net::TcpListener, SandboxError> {
    Err(launcher::not_linux())
}

/// `inheritEnv: false`'s environment with a private `HOME` and `TMPDIR`, the definition's
/// `env`, and the granted names that are set here. The proxy's variables are the launcher's
/// to add: only it knows the port.
fn environment(def: &ServerDef, sandbox: &NativeSandbox, home: &Path, tmp: &Path) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = INHERIT_ENV_KEPT
        .iter()
        .filter(|k| **k != "HOME")
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    env.push(("HOME".into(), home.display().to_string()));
    env.push(("TMPDIR".into(), tmp.display().to_string()));
    for name in &sandbox.grants.env {
        if let Ok(value) = std::env::var(name) {
            env.push((name.clone(), value));
        }
    }
    env.extend(def.env.iter().cloned());
    env
}

/// The launcher started on `spec`: toolport's own binary, nothing of its environment but the
/// spec (the launcher hands the server only what the spec says).
fn launcher_command(spec: &LaunchSpec) -> Result<std::process::Command, SandboxError> {
    let json = serde_json::to_string(spec)
        .map_err(|e| SandboxError(format!("cannot write the sandbox spec: {e}")))?;
    let mut command = std::process::Command::new(launcher_binary()?);
    command.arg(LAUNCHER_ARG).env_clear().env(SPEC_VAR, json);
    Ok(command)
}

fn launcher_binary() -> Result<PathBuf, SandboxError> {
    if let Some(path) = std::env::var_os(LAUNCHER_VAR) {
        return Ok(PathBuf::from(path));
    }
    std::env::current_exe()
        .map_err(|e| SandboxError(format!("cannot find toolport's own binary to launch the sandbox: {e}")))
}

/// The launcher's whole run (`toolport __sandbox-launch`), for the binary.
pub fn launch() -> Result<launcher::Ended, SandboxError> {
    launcher::run(&launcher::spec_from_env()?)
}

/// Whether this machine can sandbox: a launcher run in check mode, once per process. The
/// reason when it cannot, in the launcher's words.
pub fn check() -> Result<CheckReport, SandboxError> {
    static CHECKED: OnceLock<Result<CheckReport, SandboxError>> = OnceLock::new();
    CHECKED.get_or_init(run_check).clone()
}

/// What `toolport sandbox check` reports of a machine that can sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Every Landlock right this build asks for is enforced (else the kernel's older subset).
    pub landlock_fully: bool,
    /// The kernel's Landlock ABI: 6 and later also scope signals and abstract Unix sockets.
    pub landlock_abi: u32,
}

fn run_check() -> Result<CheckReport, SandboxError> {
    let spec = LaunchSpec {
        program: PathBuf::from("/"),
        args: Vec::new(),
        env: Vec::new(),
        cwd: None,
        read_only: Vec::new(),
        read_write: Vec::new(),
        devices: Vec::new(),
        limits: SpecLimits { memory_mb: 1024, processes: 64, open_files: 64 },
        handoff: PathBuf::new(),
        parent: 0,
        check_only: true,
    };
    let out = launcher_command(&spec)?
        .output()
        .map_err(|e| SandboxError(format!("cannot start the launcher: {e}")))?;
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said.trim().trim_start_matches("toolport sandbox: ");
    if !out.status.success() {
        return Err(SandboxError(if said.is_empty() {
            format!("the launcher failed ({})", out.status)
        } else {
            said.to_string()
        }));
    }
    let report: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| SandboxError(format!("the launcher said: {e}")))?;
    Ok(CheckReport {
        landlock_fully: report["landlockFully"].as_bool().unwrap_or(false),
        landlock_abi: report["landlockAbi"].as_u64().and_then(|v| u32::try_from(v).ok()).unwrap_or(0),
    })
}
