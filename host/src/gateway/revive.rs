//! A long-running `serve` reconnects a server whose connection failed or died, with a backoff
//! that doubles from one second to a minute, so a crashed server comes back without anyone
//! typing `/mcp retry` and one that keeps failing costs next to nothing. Each success or
//! failure is visible to clients as a change of the surface (`list_changed`).

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

use crate::runtime::Runtime;

/// The first wait after a failure.
const FIRST: Duration = Duration::from_secs(1);
/// The longest wait between two attempts.
const LONGEST: Duration = Duration::from_secs(60);
/// How often the failed servers are looked for.
const TICK: Duration = Duration::from_millis(250);

/// One server's place in the backoff.
struct Backoff {
    /// When to try next.
    next: Instant,
    /// The wait after that attempt.
    wait: Duration,
    /// When it was last seen failed: a server that stays up for [`LONGEST`] starts afresh,
    /// one that crashes soon after each reconnect keeps backing off.
    failed_at: Instant,
}

/// Retries failed servers, forever (the gateway aborts the task when it is dropped).
pub async fn run(runtime: Runtime) {
    let mut servers: HashMap<String, Backoff> = HashMap::new();
    loop {
        tokio::time::sleep(TICK).await;
        let now = Instant::now();
        let failed = runtime.failed();
        servers.retain(|name, b| failed.contains(name) || now.duration_since(b.failed_at) < LONGEST);
        for name in failed {
            let backoff = servers.entry(name.clone()).or_insert(Backoff {
                next: now + FIRST,
                wait: FIRST,
                failed_at: now,
            });
            backoff.failed_at = now;
            if backoff.next > now {
                continue;
            }
            backoff.wait = (backoff.wait * 2).min(LONGEST);
            backoff.next = now + backoff.wait;
            runtime
                .observer()
                .tell(format_args!("toolport serve: reconnecting {}", crate::text::escape_line(&name)));
            if let Err(e) = runtime.retry(&name).await {
                tracing::warn!(server = %name, "cannot retry: {e:#}");
            }
        }
    }
}
