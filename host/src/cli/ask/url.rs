//! URL mode: the server sends the person to a page (a sign-in, a payment) and learns only
//! whether they went. The URL is printed, escaped, and opened in a browser when it is a web page
//! (the library's `browser`).

use dialoguer::Select;
use dialoguer::console::Term;

use toolport::display::escape_line;
use toolport::questions::{BrowserShown, ElicitationAnswer, open_in_browser};

/// Prints the page and why the server wants it visited.
pub fn show(server: &str, message: &str, url: &str) {
    eprintln!("MCP server {server} asks you to open a page: {}", escape_line(message));
    eprintln!("  {}", escape_line(url));
}

/// Opens `url` in a browser when it is a page toolport opens (`open_in_browser`); the person
/// has it printed either way.
pub fn open(url: &str) {
    if let BrowserShown::Refused(why) = open_in_browser(url) {
        eprintln!("  (not opened: {why})");
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
