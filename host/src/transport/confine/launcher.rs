//! The launcher: the toolport binary started again as `toolport __sandbox-launch`, with the
//! [`LaunchSpec`] in its environment. It confines itself, in an order where each step still
//! has what it needs, then starts the server, which inherits all of it:
//!
//! 1. every descriptor it inherited beyond stdio marked close-on-exec; its parent's death
//!    (toolport's) becomes a SIGTERM it waits for, like any stop;
//! 2. as root, a `pids` cgroup of its own (`pids_cgroup.rs`: rlimits do not bind root);
//!    new user, network, PID, IPC and UTS namespaces: the same uid inside, no route out, the
//!    server its PID namespace's first process, so every child it leaves behind (a double
//!    fork, a `setsid`) dies with it;
//! 3. the namespace's loopback up, and the egress proxy's listener bound on it and handed to
//!    toolport (`handoff.rs`);
//! 4. rlimits; Landlock (`landlock_rules.rs`, which also sets `no_new_privs`); seccomp;
//! 5. the server started as its child; the launcher waits, passes a stop on as SIGKILL to the
//!    namespace (its first process ignores SIGTERM from outside unless it handles it) and
//!    leaves with the server's status.
//!
//! Doing it in a process of its own keeps `unsafe` out of the crate: no `pre_exec`, no `fork`.
//! Elsewhere than on Linux, `run` refuses with the reason and the way out.

use std::process::ExitStatus;

use super::error::SandboxError;
use super::spec::{LaunchSpec, SPEC_VAR};

/// Why a sandboxed server cannot start on this system.
#[cfg(not(target_os = "linux"))]
pub fn not_linux() -> String {
    format!(
        "sandboxed stdio servers need Linux (Landlock, namespaces, seccomp); this is {}, where macOS Seatbelt \
         is a later step; {}",
        std::env::consts::OS,
        super::spec::UNCONFINED_HINT
    )
}

/// How a launch ended, for the binary to turn into its exit.
#[derive(Debug)]
pub enum Ended {
    /// The server exited with this status.
    Server(ExitStatus),
    /// `check_only`: every layer is in place.
    Checked {
        /// Landlock enforced every right asked for, not the subset of an older kernel.
        landlock_fully: bool,
        /// The kernel's Landlock ABI.
        landlock_abi: u32,
    },
}

/// The spec from the environment.
pub fn spec_from_env() -> Result<LaunchSpec, SandboxError> {
    let text = std::env::var(SPEC_VAR)
        .map_err(|_| SandboxError(format!("{SPEC_VAR} is not set: this command is toolport's own")))?;
    serde_json::from_str(&text).map_err(|e| SandboxError(format!("{SPEC_VAR} is malformed: {e}")))
}

/// Elsewhere than on Linux: the refusal, with the way out.
#[cfg(not(target_os = "linux"))]
pub fn run(_spec: &LaunchSpec) -> Result<Ended, SandboxError> {
    Err(not_linux())
}

#[cfg(target_os = "linux")]
pub use linux::run;

#[cfg(target_os = "linux")]
mod linux {
    use std::net::TcpListener;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Child, Command, ExitStatus};

    use nix::sched::{CloneFlags, unshare};
    use nix::sys::resource::{Resource, setrlimit};
    use nix::sys::signal::{SigSet, Signal};

    use super::super::error::SandboxError;
    use super::super::spec::{LaunchSpec, SpecLimits, UNCONFINED_HINT};
    use super::super::{handoff, landlock_rules, loopback, pids_cgroup, seccomp};
    use super::Ended;

    /// Confines this process as `spec` says and runs the server to its end.
    pub fn run(spec: &LaunchSpec) -> Result<Ended, SandboxError> {
        // What toolport's own parent left open (an agent's file, a pipe) must not reach the server:
        // a descriptor opened before Landlock is not checked by it.
        close_fds::set_fds_cloexec(3, &[]);
        let stops = SigSet::from_iter([Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP, Signal::SIGCHLD]);
        stops.thread_block().map_err(|e| SandboxError(format!("cannot block signals: {e}")))?;
        if !spec.check_only {
            nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)
                .map_err(|e| SandboxError(format!("cannot watch toolport: {e}")))?;
            if nix::unistd::getppid().as_raw() != spec.parent {
                return Err("toolport ended before the server started".into());
            }
        }
        // Before the user namespace: writing the cgroup needs root's rights where they are.
        pids_cgroup::enter(spec.limits.processes)?;
        enter_namespaces()?;
        loopback::bring_up()?;
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .map_err(|e| SandboxError(format!("cannot bind the egress proxy: {e}")))?;
        if !spec.check_only {
            handoff::send(&spec.handoff, &listener)?;
        }
        let port = listener
            .local_addr()
            .map_err(|e| SandboxError(format!("cannot read the egress proxy's port: {e}")))?
            .port();
        drop(listener);
        limit(spec.limits)?;
        let enforced = landlock_rules::restrict(&spec.read_only, &spec.read_write, &spec.devices)?;
        seccomp::install()?;
        if spec.check_only {
            return Ok(Ended::Checked { landlock_fully: enforced.fully, landlock_abi: enforced.abi });
        }
        let child = start(spec, port)?;
        Ok(Ended::Server(wait(child, &stops)))
    }

    fn enter_namespaces() -> Result<(), SandboxError> {
        let uid = nix::unistd::getuid();
        let gid = nix::unistd::getgid();
        let flags = CloneFlags::CLONE_NEWUSER
            | CloneFlags::CLONE_NEWNET
            | CloneFlags::CLONE_NEWPID
            | CloneFlags::CLONE_NEWIPC
            | CloneFlags::CLONE_NEWUTS;
        unshare(flags).map_err(|e| {
        format!(
            "cannot make user and network namespaces ({e}): unprivileged user namespaces are off \
             (see /proc/sys/user/max_user_namespaces, and kernel.apparmor_restrict_unprivileged_userns on Ubuntu); \
             {UNCONFINED_HINT}"
        )
    })?;
        let write = |file: &str, text: String| {
            std::fs::write(format!("/proc/self/{file}"), text)
                .map_err(|e| SandboxError(format!("cannot write /proc/self/{file}: {e}")))
        };
        write("setgroups", "deny".to_string())?;
        write("uid_map", format!("{uid} {uid} 1"))?;
        write("gid_map", format!("{gid} {gid} 1"))
    }

    fn limit(limits: SpecLimits) -> Result<(), SandboxError> {
        let set = |what: Resource, name: &str, value: u64| {
            setrlimit(what, value, value)
                .map_err(|e| SandboxError(format!("cannot set {name} to {value}: {e}")))
        };
        set(Resource::RLIMIT_DATA, "the memory limit", limits.memory_mb.saturating_mul(1024 * 1024))?;
        set(Resource::RLIMIT_NPROC, "the process limit", limits.processes)?;
        set(Resource::RLIMIT_NOFILE, "the open-file limit", limits.open_files)?;
        set(Resource::RLIMIT_CORE, "the core-file limit", 0)
    }

    /// Starts the server with its environment and the proxy's variables, in both spellings
    /// (curl reads only the lower-case ones; Node reads them with `NODE_USE_ENV_PROXY`). Nothing
    /// bypasses the proxy unless the definition's own `NO_PROXY` says so.
    fn start(spec: &LaunchSpec, port: u16) -> Result<Child, SandboxError> {
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args).env_clear().envs(spec.env.iter().map(|(k, v)| (k, v)));
        let proxy = format!("http://127.0.0.1:{port}");
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"] {
            cmd.env(name, &proxy);
        }
        cmd.env("NODE_USE_ENV_PROXY", "1");
        for name in ["NO_PROXY", "no_proxy"] {
            if !spec.env.iter().any(|(k, _)| k == name) {
                cmd.env(name, "");
            }
        }
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        cmd.spawn().map_err(|e| SandboxError(format!("cannot start {}: {e}", spec.program.display())))
    }

    /// Waits for the server, passing a stop on; returns its status. The signals are blocked in
    /// this thread (and unblocked in the child by `Command`), so they queue for `wait` here.
    fn wait(mut child: Child, stops: &SigSet) -> ExitStatus {
        loop {
            match stops.wait() {
                Ok(Signal::SIGCHLD) => {}
                // A stop: the server is its namespace's first process, so SIGKILL ends it and
                // every process it left.
                Ok(_) => {
                    let _ = child.kill();
                }
                Err(_) => continue,
            }
            match child.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) => {}
                Err(_) => return ExitStatus::from_raw(1 << 8),
            }
        }
    }
}
