//! `toolport audit tail`: the audit log of every call, read, prompt and sign-in
//! (`<home>/audit/calls.jsonl`, rotated into `.1` … `.4`), as aligned text or its raw JSON
//! lines, filtered, and followed as lines are appended (across a rotation too).

use std::fs::File;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use toolport::Paths;
use toolport::audit::{self, AuditLine, LOG_KEPT, rotated_file};
use toolport::display::escape_line;

use super::ExitError;

/// How often `--follow` looks for new lines: a person watching sees a call within a blink,
/// and an idle follow costs a stat call four times a second.
const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// `toolport audit …`.
#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AuditCommand {
    /// The newest lines of the audit log (every call, read, prompt and sign-in), oldest first.
    Tail(TailArgs),
}

#[derive(Debug, clap::Args)]
struct TailArgs {
    /// How many lines (of those the filters keep).
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 10)]
    lines: usize,
    /// Keep reading: print lines as they are appended, until interrupted.
    #[arg(short, long)]
    follow: bool,
    /// The log's own JSON lines instead of text.
    #[arg(long)]
    json: bool,
    /// Only this server's lines.
    #[arg(long, value_name = "SERVER")]
    server: Option<String>,
    /// Only this tool's (final name), resource's (URI) or prompt's lines.
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Only lines that ended so: ok, tool-error or error.
    #[arg(long, value_name = "OUTCOME")]
    outcome: Option<String>,
    /// Only lines of this kind: call, read, prompt or sign-in.
    #[arg(long, value_name = "KIND")]
    kind: Option<String>,
}

const OUTCOMES: [&str; 3] = ["ok", "tool-error", "error"];
const KINDS: [&str; 4] = ["call", "read", "prompt", "sign-in"];

/// Runs `toolport audit <command>`.
pub async fn run(paths: &Paths, args: AuditArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        AuditCommand::Tail(tail) => run_tail(paths, tail).await,
    }
}

async fn run_tail(paths: &Paths, args: TailArgs) -> anyhow::Result<ExitCode> {
    let filter = Filter::of(&args)?;
    let file = audit::log_file(&paths.home);
    // The live file is opened first and followed from where this read ends, so no line
    // appended in between is lost or shown twice.
    let mut live = File::open(&file).ok();
    let mut live_text = String::new();
    if let Some(handle) = live.as_mut() {
        let mut bytes = Vec::new();
        handle.read_to_end(&mut bytes)?;
        // A partial last line (being written) is left for the follow to finish.
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |at| at + 1);
        live_text = String::from_utf8_lossy(&bytes[..whole]).into_owned();
        if whole < bytes.len() {
            use std::io::Seek as _;
            handle.seek(std::io::SeekFrom::Start(whole as u64))?;
        }
    } else {
        eprintln!("No audit log yet: toolport writes it to {} as calls pass through.", file.display());
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let mut out = std::io::stdout().lock();
    for (raw, line) in newest(&file, &live_text, args.lines, &filter) {
        writeln!(out, "{}", shown(&raw, &line, args.json))?;
    }
    out.flush()?;
    drop(out);
    if args.follow {
        follow(&file, live, &filter, args.json).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `--server`, `--tool`, `--outcome` and `--kind` keep.
struct Filter {
    server: Option<String>,
    tool: Option<String>,
    outcome: Option<String>,
    kind: Option<String>,
}

impl Filter {
    fn of(args: &TailArgs) -> Result<Self, ExitError> {
        let one_of = |flag: &str, value: &Option<String>, words: &[&str]| match value {
            Some(v) if !words.contains(&v.as_str()) => Err(ExitError::usage(format!(
                "--{flag} must be {}, not \"{}\"",
                words.join(", "),
                escape_line(v)
            ))),
            _ => Ok(value.clone()),
        };
        Ok(Self {
            server: args.server.clone(),
            tool: args.tool.clone(),
            outcome: one_of("outcome", &args.outcome, &OUTCOMES)?,
            kind: one_of("kind", &args.kind, &KINDS)?,
        })
    }

    fn keeps(&self, line: &AuditLine) -> bool {
        let same = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        same(&self.server, &line.server)
            && same(&self.tool, line.name())
            && same(&self.outcome, &line.outcome)
            && same(&self.kind, &line.kind)
    }
}

/// The newest `n` lines `filter` keeps, oldest first: from the live file's text, then the
/// rotated files from the newest back, until there are enough.
fn newest(file: &Path, live_text: &str, n: usize, filter: &Filter) -> Vec<(String, AuditLine)> {
    let mut found = Vec::new();
    let rotated = (1..=LOG_KEPT).map(|k| std::fs::read_to_string(rotated_file(file, k)).unwrap_or_default());
    for text in std::iter::once(live_text.to_string()).chain(rotated) {
        if found.len() >= n {
            break;
        }
        for raw in text.lines().rev() {
            if found.len() >= n {
                break;
            }
            if let Some(line) = parsed(raw).filter(|l| filter.keeps(l)) {
                found.push((raw.to_string(), line));
            }
        }
    }
    found.reverse();
    found
}

/// A line of the log; `None` for one that does not parse (a torn write after a crash).
fn parsed(raw: &str) -> Option<AuditLine> {
    serde_json::from_str(raw).ok()
}

/// Prints every line appended to `file` from here on, following it to its new file when it
/// is rotated; until interrupted.
async fn follow(file: &Path, mut live: Option<File>, filter: &Filter, json: bool) -> anyhow::Result<()> {
    let mut partial = String::new();
    loop {
        if let Some(handle) = live.as_mut() {
            print_new(handle, &mut partial, filter, json)?;
        }
        if rotated_away(file, live.as_ref()) {
            // What was written to the old file before the move is read first.
            if let Some(handle) = live.as_mut() {
                print_new(handle, &mut partial, filter, json)?;
            }
            partial.clear();
            live = File::open(file).ok();
            continue;
        }
        tokio::time::sleep(FOLLOW_POLL).await;
    }
}

/// Whether the name `file` now holds another file than `live` (rotated, or created since).
fn rotated_away(file: &Path, live: Option<&File>) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(now) = std::fs::metadata(file) else { return false };
    match live.and_then(|h| h.metadata().ok()) {
        Some(open) => open.ino() != now.ino() || open.dev() != now.dev(),
        None => true,
    }
}

/// Reads what was appended to `handle` and prints the whole lines `filter` keeps.
fn print_new(handle: &mut File, partial: &mut String, filter: &Filter, json: bool) -> anyhow::Result<()> {
    let mut bytes = Vec::new();
    handle.read_to_end(&mut bytes)?;
    if bytes.is_empty() {
        return Ok(());
    }
    partial.push_str(&String::from_utf8_lossy(&bytes));
    let Some(end) = partial.rfind('\n') else { return Ok(()) };
    let whole: String = partial.drain(..=end).collect();
    let mut out = std::io::stdout().lock();
    for raw in whole.lines() {
        if let Some(line) = parsed(raw).filter(|l| filter.keeps(l)) {
            writeln!(out, "{}", shown(raw, &line, json))?;
        }
    }
    out.flush()?;
    Ok(())
}

/// A line as printed: the raw JSON, or aligned text —
/// `2026-12-04T22:31:07.123Z  call     everything/echo           ok              3.2 ms   in 25 B  out 40 B  client=mcp@3f2a9c1e`.
fn shown(raw: &str, line: &AuditLine, json: bool) -> String {
    if json {
        return raw.to_string();
    }
    let name = line.name();
    // `server/tool`; a call that reached no server (an unknown tool) shows the name alone.
    let target = match (line.server.is_empty(), name.is_empty()) {
        (_, true) => escape_line(&line.server).into_owned(),
        (true, false) => escape_line(name).into_owned(),
        (false, false) => format!("{}/{}", escape_line(&line.server), escape_line(name)),
    };
    let outcome = match &line.error {
        Some(class) => format!("{} ({})", line.outcome, escape_line(class)),
        None => line.outcome.clone(),
    };
    let ms = line.duration_ms;
    let duration = if ms < 10.0 { format!("{ms:.1} ms") } else { format!("{ms:.0} ms") };
    let mut text = format!(
        "{}  {:<7}  {:<32}  {:<20}  {:>8}  in {} B  out {} B",
        escape_line(&line.time),
        escape_line(&line.kind),
        target,
        outcome,
        duration,
        line.bytes_in,
        line.bytes_out
    );
    if let Some(client) = &line.client {
        text.push_str("  client=");
        text.push_str(&escape_line(client));
    }
    text
}
