//! URL mode: the server sends the person to a page (a sign-in, a payment) and learns only
//! whether they went. The URL is printed, escaped, and opened with `$BROWSER` when it is set.

use dialoguer::Select;
use dialoguer::console::Term;

use crate::runtime::ElicitationAnswer;
use crate::text::escape_line;

/// Prints the page and why the server wants it visited.
pub fn show(server: &str, message: &str, url: &str) {
    eprintln!("MCP server {server} asks you to open a page: {}", escape_line(message));
    eprintln!("  {}", escape_line(url));
}

/// Opens `url` with `$BROWSER` (a command and its arguments; `%s` stands for the URL, else it
/// is the last argument). Not waited for: a browser may keep running; a thread reaps it.
pub fn open(url: &str) {
    let Some(browser) = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()) else { return };
    // `$BROWSER` may list several, separated by colons: the first is used.
    let first = browser.split(':').next().unwrap_or_default();
    let Some(mut words) = shlex::split(first).filter(|w| !w.is_empty()) else {
        tracing::warn!("cannot read $BROWSER as a command: {first}");
        return;
    };
    let program = words.remove(0);
    let mut args: Vec<String> = words.iter().map(|w| w.replace("%s", url)).collect();
    if !words.iter().any(|w| w.contains("%s")) {
        args.push(url.to_string());
    }
    match std::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => tracing::warn!("cannot start $BROWSER ({program}): {e}"),
    }
}

/// On a terminal: show, open, then ask whether the person is done there.
pub fn ask(server: &str, message: &str, url: &str) -> ElicitationAnswer {
    show(server, message, url);
    open(url);
    let term = Term::stderr();
    let picked = Select::new()
        .with_prompt("When you are done on that page")
        .items(["Continue (accept)", "Decline", "Cancel"])
        .default(0)
        .interact_on_opt(&term);
    match picked {
        Ok(Some(0)) => ElicitationAnswer::Accept(Default::default()),
        Ok(Some(1)) => ElicitationAnswer::Decline,
        Ok(_) => ElicitationAnswer::Cancel,
        Err(e) => {
            tracing::warn!("cannot ask on the terminal: {e}");
            ElicitationAnswer::Cancel
        }
    }
}
