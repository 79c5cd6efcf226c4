//! What one ACP client can make the agent hold: the size of a line, the requests running at
//! once, and how long a session it stopped using keeps its servers running.

use std::time::Duration;

/// Largest input line, in bytes (the newline not counted). Prompts and `_toolport/tools/call`
/// arguments are text a person or an editor wrote, far below this; the value matches what a
/// stdio server may send back (rmcp's default), and it bounds what the reader buffers: the
/// rest of a longer line is read and dropped, never kept.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Requests served at once. An editor runs a handful (a prompt, a cancel, a tools list); 64
/// leaves room for an embedding host that fans out calls, while bounding the tasks and
/// connections one client can start. Requests over the cap are refused at once rather than
/// queued: a queue would either grow without bound or stop the reader, and a stopped reader
/// could no longer see the `session/cancel` that frees a slot.
pub const MAX_REQUESTS: usize = 64;
/// A session no request has used for this long is closed (its servers stopped). Editors keep
/// sessions for a working day but touch them constantly; half an hour of silence means the
/// tab or the window is gone.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The most time between two looks for idle sessions: an eviction happens at most this late.
const MAX_SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The agent's caps; [`Default`] is the constants above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcpLimits {
    /// Largest input line in bytes (default `MAX_LINE_BYTES`, 16 MiB).
    pub max_line_bytes: usize,
    /// Requests served at once (default `MAX_REQUESTS`, 64); more are answered with an error.
    pub max_requests: usize,
    /// Idle time after which a session is closed (default `IDLE_TIMEOUT`, 30 minutes); `None` keeps sessions
    /// until the end of input.
    pub idle_timeout: Option<Duration>,
}

impl Default for AcpLimits {
    fn default() -> Self {
        Self { max_line_bytes: MAX_LINE_BYTES, max_requests: MAX_REQUESTS, idle_timeout: Some(IDLE_TIMEOUT) }
    }
}

impl AcpLimits {
    /// How often to look for idle sessions: a quarter of the timeout (so an eviction is at
    /// most 25% late), at most `MAX_SWEEP_EVERY`.
    pub fn sweep_every(&self) -> Option<Duration> {
        self.idle_timeout.map(|t| (t / 4).clamp(Duration::from_millis(10), MAX_SWEEP_EVERY))
    }
}
