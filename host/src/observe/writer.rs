//! The one writer of both audit files (the audit log, `calls.jsonl`, and the trail of decisions,
//! `decisions.jsonl`): a thread of its own, fed through a bounded channel, so a request only
//! hands over what happened and never formats, stats, writes or rotates a file on its path.
//!
//! Lines are written in the order they were handed over; whatever has queued up since the
//! thread last woke goes out in one `write` per file. [`Writer::flush`] returns once every
//! line handed over before it is in its file (the binary calls it when a command ends, the
//! runtime when it shuts down); dropping the last handle flushes and stops the thread, so a
//! clean shutdown loses no line.

use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::audit_log::{self, rotation::Appender};

/// Lines waiting for the writer. A burst past this many makes requests wait for room (a
/// line is never dropped): about a second of a busy gateway's calls, a few MiB at most.
const QUEUE: usize = 4096;

/// After writing, the thread rests before it looks at the queue again: lines that come in
/// meanwhile wait for it without waking it, and go out together. The rest grows with the batch
/// it follows ([`rest_after`]): a line after a quiet spell is written at once and the next
/// within `REST`, so a person or a test reading the file after an answer sees its line; a busy
/// gateway (a batch of many lines) pays one wake-up, one `stat` and one `write` per file every
/// `MAX_REST` rather than per call.
const REST: Duration = Duration::from_millis(2);

/// The longest rest: how late a line of a busy gateway may reach its file.
const MAX_REST: Duration = Duration::from_millis(20);

/// The rest after a batch of `lines`: `REST` for each line, at most `MAX_REST`.
fn rest_after(lines: usize) -> Duration {
    REST.saturating_mul(u32::try_from(lines).unwrap_or(u32::MAX)).min(MAX_REST)
}

/// How long a full queue is waited on before a `warn` says the disk is not keeping up (the
/// wait then goes on: the line is still written).
const SLOW_DISK: Duration = Duration::from_secs(5);

/// A line to render: called on the writer's thread, it appends the line's JSON (without its
/// newline) to the buffer.
pub(crate) type Render = Box<dyn FnOnce(&mut Vec<u8>) -> serde_json::Result<()> + Send>;

/// Where a line goes: the file and how it rotates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The file appended to.
    pub file: Arc<Path>,
    /// Rotated before a line once it reached this size.
    pub rotate_at: u64,
    /// How many rotated files are kept.
    pub kept: usize,
}

enum Job {
    Line(Target, Render),
    /// Answered once every line queued before it is written.
    Flush(SyncSender<()>),
}

/// A handle on the writer thread; the thread stops once the last handle is dropped, after
/// writing what was queued.
pub(crate) struct Writer {
    queue: SyncSender<Job>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// Starts the thread. `None` (and a `warn`) when the system refuses a thread: the lines
    /// are then written by whoever hands them over.
    pub(crate) fn start() -> Option<Writer> {
        let (queue, jobs) = mpsc::sync_channel(QUEUE);
        match std::thread::Builder::new().name("toolport-audit".into()).spawn(move || run(jobs)) {
            Ok(thread) => Some(Writer { queue, thread: Mutex::new(Some(thread)) }),
            Err(e) => {
                tracing::warn!("cannot start the audit writer, writing on the caller's thread: {e}");
                None
            }
        }
    }

    /// Hands `render`'s line for `target` to the thread.
    pub(crate) fn append(&self, target: Target, render: Render) {
        let job = Job::Line(target, render);
        let job = match self.queue.try_send(job) {
            Ok(()) => return,
            Err(TrySendError::Full(job)) => job,
            Err(TrySendError::Disconnected(Job::Line(target, render))) => return write_here(&target, render),
            Err(TrySendError::Disconnected(Job::Flush(_))) => return,
        };
        tracing::debug!("the audit writer is behind: waiting for room");
        if let Err(mpsc::SendError(Job::Line(target, render))) = self.queue.send(job) {
            write_here(&target, render);
        }
    }

    /// Returns once every line handed over before this call is in its file (or the writer
    /// stopped). Blocks the calling thread: a few milliseconds at most on a working disk.
    pub(crate) fn flush(&self) {
        let (done, wait) = mpsc::sync_channel(1);
        if self.queue.send(Job::Flush(done)).is_err() {
            return;
        }
        loop {
            match wait.recv_timeout(SLOW_DISK) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => tracing::warn!("the audit writer is slow to flush"),
            }
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // The thread writes what is queued, then ends: the queue's last sender (ours) is gone.
        let (closed, _) = mpsc::sync_channel(0);
        drop(std::mem::replace(&mut self.queue, closed));
        let thread = self.thread.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(thread) = thread
            && thread.join().is_err()
        {
            tracing::warn!("the audit writer stopped abnormally");
        }
    }
}

/// The thread: waits for a line, takes whatever else is queued, writes each file's lines in
/// one `write`, answers the flushes.
fn run(jobs: Receiver<Job>) {
    let mut files: Vec<(Target, Appender)> = Vec::new();
    let mut batch: Vec<(Target, Vec<u8>)> = Vec::new();
    while let Ok(first) = jobs.recv() {
        let mut flushes = Vec::new();
        let mut lines = 0;
        let mut next = Some(first);
        while let Some(job) = next.take().or_else(|| jobs.try_recv().ok()) {
            match job {
                Job::Flush(done) => flushes.push(done),
                Job::Line(target, render) => {
                    lines += 1;
                    let at = match batch.iter().position(|(t, _)| *t == target) {
                        Some(at) => at,
                        None => {
                            batch.push((target, Vec::with_capacity(512)));
                            batch.len() - 1
                        }
                    };
                    render_into(&mut batch[at].1, render);
                }
            }
        }
        for (target, text) in batch.drain(..) {
            write_batch(&mut files, target, &text);
        }
        for done in flushes {
            let _ = done.send(());
        }
        if lines > 0 {
            std::thread::sleep(rest_after(lines));
        }
    }
}

/// Appends `text` (whole lines) to `target`'s file through its appender.
fn write_batch(files: &mut Vec<(Target, Appender)>, target: Target, text: &[u8]) {
    if text.is_empty() {
        return;
    }
    let at = match files.iter().position(|(t, _)| *t == target) {
        Some(at) => at,
        None => {
            files.push((target, Appender::default()));
            files.len() - 1
        }
    };
    let (target, appender) = &mut files[at];
    if let Err(e) = appender.append(&target.file, text, target.rotate_at, target.kept) {
        tracing::warn!(file = %target.file.display(), "cannot write the audit file: {e:#}");
    }
}

/// Appends `render`'s line and its newline to `text`; a line that cannot be rendered is left
/// out (a `warn`), never half of it.
fn render_into(text: &mut Vec<u8>, render: Render) {
    let start = text.len();
    match render(text) {
        Ok(()) => text.push(b'\n'),
        Err(e) => {
            text.truncate(start);
            tracing::warn!("cannot write an audit line: {e}");
        }
    }
}

/// Without a thread: the line is written by the caller.
pub(crate) fn write_here(target: &Target, render: Render) {
    let mut text = Vec::new();
    render_into(&mut text, render);
    if !text.is_empty()
        && let Err(e) = audit_log::append_lines(&target.file, &text, target.rotate_at, target.kept)
    {
        tracing::warn!(file = %target.file.display(), "cannot write the audit file: {e:#}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_line_is_followed_by_a_short_rest_and_a_busy_batch_by_a_longer_one() {
        assert_eq!(rest_after(1), REST);
        assert_eq!(rest_after(3), REST * 3);
        assert_eq!(rest_after(1_000), MAX_REST);
        assert_eq!(rest_after(usize::MAX), MAX_REST);
    }

    fn line(text: &'static str) -> Render {
        Box::new(move |out: &mut Vec<u8>| {
            out.extend_from_slice(text.as_bytes());
            Ok(())
        })
    }

    /// Lines handed over from many threads are all in their files, whole, once flushed; and
    /// the two files do not mix.
    #[test]
    fn every_line_is_written_by_the_flush() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let target =
            |name: &str| Target { file: Arc::from(dir.path().join(name)), rotate_at: 1 << 20, kept: 1 };
        let writer = Arc::new(Writer::start().ok_or_else(|| anyhow::anyhow!("no thread"))?);
        std::thread::scope(|s| {
            for _ in 0..4 {
                let writer = writer.clone();
                let (calls, decisions) = (target("calls.jsonl"), target("decisions.jsonl"));
                s.spawn(move || {
                    for _ in 0..250 {
                        writer.append(calls.clone(), line("{\"kind\":\"call\"}"));
                        writer.append(decisions.clone(), line("{\"action\":\"held\"}"));
                    }
                });
            }
        });
        writer.flush();
        let calls = std::fs::read_to_string(dir.path().join("calls.jsonl"))?;
        let decisions = std::fs::read_to_string(dir.path().join("decisions.jsonl"))?;
        assert_eq!(calls.lines().filter(|l| *l == "{\"kind\":\"call\"}").count(), 1000);
        assert_eq!(decisions.lines().filter(|l| *l == "{\"action\":\"held\"}").count(), 1000);
        assert_eq!(calls.lines().count() + decisions.lines().count(), 2000);
        Ok(())
    }

    /// The last handle dropped: what was queued is written before the thread ends.
    #[test]
    fn dropping_the_writer_loses_no_line() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let target = Target { file: Arc::from(dir.path().join("calls.jsonl")), rotate_at: 1 << 20, kept: 1 };
        let writer = Writer::start().ok_or_else(|| anyhow::anyhow!("no thread"))?;
        for _ in 0..100 {
            writer.append(target.clone(), line("{}"));
        }
        drop(writer);
        assert_eq!(std::fs::read_to_string(&target.file)?.lines().count(), 100);
        Ok(())
    }
}
