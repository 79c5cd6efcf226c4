//! Each stdio server runs in a process group of its own, so the host can end the server *and*
//! every helper it started (a shell wrapper's child, a language server's worker), and so a
//! terminal's Ctrl-C reaches toolport alone (toolport then closes its servers itself).
//!
//! Ending a group is always the same three steps: SIGTERM to the group, up to `TERM_GRACE`
//! for every member to go, then SIGKILL to whatever is left. Groups still alive are kept in a
//! process-wide list so [`end_all`] can finish them when toolport exits or is signalled, even
//! if the task that owned the child was dropped with the async runtime.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

/// How long a group gets between SIGTERM and SIGKILL. Long enough for a server to flush and
/// reap its helpers (Node and Python exit in milliseconds on SIGTERM), short enough that a
/// server ignoring the signal delays `/quit` or a one-shot command by about a second.
pub const TERM_GRACE: Duration = Duration::from_secs(1);
/// How often the host looks whether a group is gone during the grace; a group cannot be
/// waited for like a child, only probed with signal 0.
const PROBE_EVERY: Duration = Duration::from_millis(20);
/// The grace between SIGTERM and SIGKILL when toolport itself was signalled
/// ([`end_all_promptly`]): whoever signalled it kills it soon after (Claude Code sends
/// SIGINT, SIGTERM 100 ms later and SIGKILL 500 ms after that), and toolport must be out by
/// then with its servers ended. Node and Python servers exit on SIGTERM in milliseconds; one
/// that traps it is killed.
pub const SIGNAL_TERM_GRACE: Duration = Duration::from_millis(100);

/// Process groups started by this process and not yet known to be empty.
static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Woken each time a group leaves [`LIVE`], so [`end_all`] waits for servers leaving on their
/// own without polling.
static LEFT: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Sets `cmd` up to start a new process group (its id is the child's pid) and, on Linux, to
/// receive SIGKILL when toolport dies without closing it (killed with SIGKILL, a crash).
pub fn isolate(cmd: &mut Command) {
    cmd.process_group(0);
    die_with_parent(cmd);
}

#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // The death signal is tied to the *thread* that forked, not the process: stdio servers
    // are spawned from the async runtime's worker threads (and the main thread), which live as
    // long as toolport does; never spawn one from a `spawn_blocking` thread, which can retire.
    let parent = nix::unistd::getpid();
    // SAFETY: `pre_exec` runs the closure in the forked child before `exec`, where only
    // async-signal-safe calls are allowed. It makes two system calls (prctl, getppid) through
    // nix's thin wrappers, which neither allocate nor take locks, and builds an `io::Error`
    // from an errno (no allocation for `from_raw_os_error`).
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            // toolport may have died between fork and prctl: then nobody would send the signal.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(Errno::ESRCH as i32));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// A started child's process group, listed in [`LIVE`] while this handle lives.
#[derive(Debug)]
pub struct Group {
    id: i32,
}

impl Group {
    /// Records the group led by `child` (started with [`isolate`]); `None` if it has no pid
    /// (already reaped), in which case there is nothing to end.
    pub fn of(child: &Child) -> Option<Self> {
        let id = i32::try_from(child.id()?).ok()?;
        if let Ok(mut live) = LIVE.lock() {
            live.insert(id);
        }
        Some(Self { id })
    }

    /// SIGTERM to the group, `TERM_GRACE` for the leader (`child`, reaped here if given)
    /// and its helpers to exit, then SIGKILL to the rest. Quick when the group is already
    /// empty (the server and its helpers exited on their own).
    pub async fn end(&self, child: Option<&mut Child>) {
        end_group(self.id, child, TERM_GRACE).await;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            live.remove(&self.id);
        }
        LEFT.notify_waiters();
    }
}

/// How long [`end_all`] lets servers leave on their own first: their connections are closing
/// (stdin closed, as the MCP stdio shutdown asks), and a server may still be acting on the
/// last thing it read, such as a `notifications/cancelled`.
const OWN_EXIT_GRACE: Duration = Duration::from_millis(500);

/// Ends every group this process started that is not known to be gone (at exit, on SIGINT or
/// SIGTERM): first [`OWN_EXIT_GRACE`] for servers to exit by themselves, then the rest all at
/// once, so the whole wait is one `TERM_GRACE` more at most.
pub async fn end_all() {
    let all_left = async {
        loop {
            // Registered before LIVE is read, so a group leaving in between still wakes it.
            let left = LEFT.notified();
            tokio::pin!(left);
            left.as_mut().enable();
            if LIVE.lock().map_or(true, |live| live.is_empty()) {
                return;
            }
            left.await;
        }
    };
    let _ = tokio::time::timeout(OWN_EXIT_GRACE, all_left).await;
    let groups: Vec<i32> =
        LIVE.lock().map(|mut live| std::mem::take(&mut *live).into_iter().collect()).unwrap_or_default();
    futures::future::join_all(groups.into_iter().map(|id| end_group(id, None, TERM_GRACE))).await;
}

/// Ends every group this process started at once, for an exit on SIGINT or SIGTERM: SIGTERM
/// to all of them now (no wait for servers to leave on their own), [`SIGNAL_TERM_GRACE`],
/// then SIGKILL to what is left. Returns once every group is empty, its leader reaped by the
/// task that watches it (a server is then no zombie left behind). The groups stay listed
/// until reaped, so [`kill_all`] still finds them if a second signal cuts this short.
pub async fn end_all_promptly() {
    let groups: Vec<i32> = LIVE.lock().map(|live| live.iter().copied().collect()).unwrap_or_default();
    futures::future::join_all(groups.into_iter().map(|id| end_group(id, None, SIGNAL_TERM_GRACE))).await;
}

/// SIGKILL to every group not yet known to be gone, without waiting: toolport was signalled
/// twice and leaves at once.
pub fn kill_all() {
    let groups: Vec<i32> =
        LIVE.lock().map(|mut live| std::mem::take(&mut *live).into_iter().collect()).unwrap_or_default();
    for id in groups {
        let _ = killpg(Pid::from_raw(id), Signal::SIGKILL);
    }
}

async fn end_group(id: i32, mut child: Option<&mut Child>, grace: Duration) {
    let group = Pid::from_raw(id);
    let deadline = tokio::time::Instant::now() + grace;
    let mut signalled = false;
    loop {
        if leader_gone(&mut child) && killpg(group, None) == Err(Errno::ESRCH) {
            return;
        }
        if !signalled {
            let _ = killpg(group, Signal::SIGTERM);
            signalled = true;
            // The leader is ours to wait for: its exit wakes us, no probing while it lives.
            if let Some(c) = child.as_deref_mut() {
                let _ = tokio::time::timeout_at(deadline, c.wait()).await;
                continue;
            }
        } else if tokio::time::Instant::now() >= deadline {
            break;
        }
        // Helpers of a group whose leader is gone (or not ours) can only be probed.
        tokio::time::sleep(PROBE_EVERY).await;
    }
    let _ = killpg(group, Signal::SIGKILL);
    if let Some(c) = child {
        let _ = c.wait().await;
    }
}

/// Whether the group's leader has been reaped (or is not ours to reap). A zombie leader still
/// counts as a member of its group, so the group only looks empty once it is reaped.
fn leader_gone(child: &mut Option<&mut Child>) -> bool {
    match child {
        Some(c) => matches!(c.try_wait(), Ok(Some(_)) | Err(_)),
        None => true,
    }
}
