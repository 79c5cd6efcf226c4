//! `mcp import`'s report: one line per server of the client's file, then the count, and a
//! warning for each caution of a project file's server — names and keys only, never a value.

use serde_json::Value;

use crate::cli::clients::{ImportCaution, ImportOutcome, ImportReport};
use toolport::Paths;
use toolport::display::escape_line;

/// The `mcp import` lines: one per server of the client's file (names and keys only, never a
/// value), then the count.
pub(super) fn import_view(paths: &Paths, report: &ImportReport) -> String {
    let mut out = String::new();
    let mut imported = 0;
    for line in &report.lines {
        // A blank name (the store refuses it) is quoted, or its line would name nothing.
        let name = if line.name.trim().is_empty() {
            escape_line(&Value::from(line.name.as_str()).to_string()).into_owned()
        } else {
            escape_line(&line.name).into_owned()
        };
        match &line.outcome {
            ImportOutcome::Imported { transport, enabled, off_in_client, notes, cautions, held_back } => {
                imported += 1;
                let enabled = if *enabled { ", enabled" } else { "" };
                out.push_str(&format!("imported: {name} ({transport}{enabled})\n"));
                if *off_in_client {
                    out.push_str(&format!(
                        "  note: turned off in the client's file (enabled = false), so not enabled here: \
                         `toolport mcp enable {name}` enables it\n"
                    ));
                }
                if *held_back {
                    out.push_str(&format!(
                        "  note: not enabled: it comes from a project file and {} (see the warning): \
                         `toolport mcp enable {name}` enables it, as would --enable --trust\n",
                        what_it_does(cautions)
                    ));
                }
                for note in notes {
                    out.push_str(&format!("  note: {}\n", escape_line(note)));
                }
            }
            ImportOutcome::Skipped(why) => {
                out.push_str(&format!("skipped: {name} {}\n", escape_line(why)));
            }
        }
    }
    let skipped = report.lines.len() - imported;
    out.push_str(&format!(
        "mcp import: {imported} imported, {skipped} skipped ({} -> {})\n",
        report.file.display(),
        paths.store_file().display()
    ));
    out
}

/// One `toolport: warning:` line per caution of a project file's imported server: what it
/// will run and which variables it will send where, by name (never a value), so a cloned
/// repository's file cannot quietly send the user's token to its author.
pub(super) fn import_warnings(report: &ImportReport) -> String {
    let file = report.file.display();
    let mut out = String::new();
    for line in &report.lines {
        let ImportOutcome::Imported { cautions, .. } = &line.outcome else { continue };
        let name = escape_line(&line.name);
        for caution in cautions {
            let what = match caution {
                ImportCaution::RunsCommand { command, args } => {
                    let words = std::iter::once(command).chain(args).map(String::as_str);
                    let joined = shlex::try_join(words.clone())
                        .unwrap_or_else(|_| words.collect::<Vec<_>>().join(" "));
                    format!(
                        "runs a command from the repository, as you and with your environment: {}",
                        escape_line(&joined)
                    )
                }
                ImportCaution::ReadsEnv { vars, url } => {
                    let names: Vec<String> = vars.iter().map(|v| format!("${{{v}}}")).collect();
                    let them = if names.len() == 1 { "it" } else { "them" };
                    let to = match url {
                        Some(url) => escape_line(url).into_owned(),
                        None => "the command it runs".to_string(),
                    };
                    format!("reads {} from your environment and sends {them} to {to}", and_list(&names))
                }
            };
            out.push_str(&format!("toolport: warning: server \"{name}\" from {file} {what}\n"));
        }
    }
    out
}

/// The held-back note's reason: which of the two a server does.
fn what_it_does(cautions: &[ImportCaution]) -> &'static str {
    let runs = cautions.iter().any(|c| matches!(c, ImportCaution::RunsCommand { .. }));
    let reads = cautions.iter().any(|c| matches!(c, ImportCaution::ReadsEnv { .. }));
    match (runs, reads) {
        (true, true) => "runs a command and reads your environment",
        (true, false) => "runs a command",
        _ => "reads your environment",
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
