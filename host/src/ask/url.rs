//! URL mode: the server sends the person to a page (a sign-in, a payment) and learns only
//! whether they went. The URL is printed, escaped, and opened in a browser when it is a web page
//! (`crate::browser`).

use dialoguer::Select;
use dialoguer::console::Term;

use crate::observe::Observer;
use crate::runtime::ElicitationAnswer;
use crate::text::escape_line;

/// Prints (as notices of `observer`) the page and why the server wants it visited.
pub fn show(observer: &Observer, server: &str, message: &str, url: &str) {
    observer.tell(format_args!("MCP server {server} asks you to open a page: {}", escape_line(message)));
    observer.tell(format_args!("  {}", escape_line(url)));
}

/// Opens `url` in a browser when it is a page toolport opens ([`crate::browser`]); the person
/// has it printed either way.
pub fn open(observer: &Observer, url: &str) {
    if let crate::browser::Shown::Refused(why) = crate::browser::open(url) {
        observer.tell(format_args!("  (not opened: {why})"));
    }
}

/// On a terminal: show, open, then ask whether the person is done there.
pub fn ask(observer: &Observer, server: &str, message: &str, url: &str) -> ElicitationAnswer {
    show(observer, server, message, url);
    open(observer, url);
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
