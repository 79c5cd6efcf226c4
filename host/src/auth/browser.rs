//! Showing the person the authorization page: `$BROWSER` when set (the convention `git`,
//! `gh` and Python's `webbrowser` follow: a `:`-separated list of commands, `%s` standing for
//! the URL, else the URL appended), else the desktop's opener when there is a display, else
//! nothing — the URL is printed on stderr in every case, so a person can always copy it.

use std::process::{Command, Stdio};

/// How the URL reached the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A `$BROWSER` command or the desktop opener was started with it.
    Opened(String),
    /// No browser to start: printed only.
    Printed,
}

/// Starts a browser on `url` if there is one to start; never waits for it to close.
pub fn open(url: &str) -> Shown {
    if let Some(list) = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()) {
        for entry in list.split(':').filter(|e| !e.trim().is_empty()) {
            let Some(mut words) = shlex::split(entry).filter(|w| !w.is_empty()) else { continue };
            if words.iter().any(|w| w.contains("%s")) {
                words.iter_mut().for_each(|w| *w = w.replace("%s", url));
            } else {
                words.push(url.to_string());
            }
            if start(&words) {
                return Shown::Opened(words[0].clone());
            }
        }
    }
    if let Some(opener) = desktop_opener()
        && start(&[opener.to_string(), url.to_string()])
    {
        return Shown::Opened(opener.to_string());
    }
    Shown::Printed
}

/// The desktop's "open this URL" program, when a person is looking at a desktop.
fn desktop_opener() -> Option<&'static str> {
    if cfg!(target_os = "macos") {
        return Some("open");
    }
    let display =
        ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
    display.then_some("xdg-open")
}

/// Starts `words` detached from our stdio (a browser's chatter must not mix with stdout, which
/// may be a protocol stream under `serve`), and reaps it in the background.
fn start(words: &[String]) -> bool {
    let Some((program, args)) = words.split_first() else { return false };
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match child {
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
            true
        }
        Err(e) => {
            tracing::debug!("cannot start {program}: {e}");
            false
        }
    }
}
