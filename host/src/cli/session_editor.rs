//! The session's input side. On a terminal: `rustyline` (history kept in the home folder, tab
//! completion from the library's `Known::complete`) on its own thread, because it blocks; the async side
//! runs each line and only then lets the editor draw the next prompt, so output and prompt
//! never interleave. Off a terminal (a script, a pipe): plain lines, no prompt or banner, and
//! stdout flushed after every command so a driving process sees each answer as it comes.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context as _, Result};
use rustyline::completion::Completer;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Editor, Helper};
use tokio::io::AsyncBufReadExt as _;
use tokio::sync::mpsc;

use toolport::{Known, Session};

const PROMPT: &str = "toolport> ";
const BANNER: &str = "toolport session: /help lists the commands, /quit leaves";

/// Runs `session` until `/quit` or end of input, then closes its connections. `history` is
/// where the terminal editor keeps past lines (ignored off a terminal).
pub async fn run_interactive(mut session: Session, history: Option<PathBuf>) -> Result<()> {
    for warning in session.warnings() {
        eprintln!("{warning}");
    }
    let result = if std::io::stdin().is_terminal() {
        terminal_loop(&mut session, history).await
    } else {
        plain_loop(&mut session).await
    };
    session.shutdown().await;
    result
}

async fn plain_loop(session: &mut Session) -> Result<()> {
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf).await.context("cannot read the session's input")? == 0 {
            return Ok(());
        }
        // A stray non-UTF-8 byte costs that line its meaning, not the whole session.
        let line = String::from_utf8_lossy(&buf);
        let reply = session.execute(line.trim_end_matches(['\n', '\r'])).await;
        emit(&reply.text)?;
        if reply.quit {
            return Ok(());
        }
    }
}

async fn terminal_loop(session: &mut Session, history: Option<PathBuf>) -> Result<()> {
    let known = Arc::new(Mutex::new(session.known()));
    let Editing { mut lines, ack, thread } = spawn_editor(Arc::clone(&known), history)?;
    emit(&format!("{BANNER}\n"))?;
    while let Some(line) = lines.recv().await {
        let reply = session.execute(&line).await;
        emit(&reply.text)?;
        if reply.quit {
            break;
        }
        let fresh = session.known();
        if let Ok(mut k) = known.lock() {
            *k = fresh;
        }
        // The editor waits for this before drawing the next prompt.
        if ack.send(()).is_err() {
            break;
        }
    }
    // The editor thread is waiting for an ack (or has ended): dropping the sender ends it,
    // and joining lets it save the history before the process exits.
    drop(ack);
    drop(lines);
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .context("cannot join the line editor thread")?
        .map_err(|_| anyhow::anyhow!("the line editor thread panicked"))
}

fn emit(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write to stdout")
}

/// Starts the editor thread. Lines arrive on the receiver (closed at end of input); each must
/// be acknowledged on the sender before the next prompt is drawn. Dropping the sender ends
/// the thread.
fn spawn_editor(known: Arc<Mutex<Known>>, history: Option<PathBuf>) -> Result<Editing> {
    let mut editor: Editor<LineHelper, DefaultHistory> =
        Editor::new().context("cannot start the line editor")?;
    editor.set_helper(Some(LineHelper { known }));
    if let Some(path) = &history {
        // No history yet is the normal first run.
        let _ = editor.load_history(path);
    }
    let (line_tx, line_rx) = mpsc::channel::<String>(1);
    let (ack_tx, ack_rx) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("toolport-line-editor".into())
        .spawn(move || {
            loop {
                match editor.readline(PROMPT) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        if line_tx.blocking_send(line).is_err() || ack_rx.recv().is_err() {
                            break;
                        }
                    }
                    // Ctrl-C abandons the line being typed, as in a shell.
                    Err(ReadlineError::Interrupted) => continue,
                    Err(ReadlineError::Eof) => break,
                    Err(e) => {
                        tracing::warn!("line editor stopped: {e}");
                        break;
                    }
                }
            }
            if let Some(path) = &history
                && let Err(e) = editor.save_history(path)
            {
                tracing::debug!("cannot save the session history to {}: {e}", path.display());
            }
        })
        .context("cannot start the line editor thread")?;
    Ok(Editing { lines: line_rx, ack: ack_tx, thread })
}

/// The async side's handles on the editor thread.
struct Editing {
    lines: mpsc::Receiver<String>,
    ack: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// Completion from the names the session knows; no hints, highlighting or validation.
struct LineHelper {
    known: Arc<Mutex<Known>>,
}

impl Completer for LineHelper {
    type Candidate = String;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<String>)> {
        let known = self.known.lock().map(|k| k.clone()).unwrap_or_default();
        Ok(known.complete(&line[..pos]))
    }
}

impl Hinter for LineHelper {
    type Hint = String;
}
impl Highlighter for LineHelper {}
impl Validator for LineHelper {}
impl Helper for LineHelper {}
