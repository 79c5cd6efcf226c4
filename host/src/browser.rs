//! Showing the person a page a server named (a sign-in's authorization page, a URL-mode
//! question): `$BROWSER` when set (the convention `git`, `gh` and Python's `webbrowser` follow:
//! a `:`-separated list of commands, `%s` standing for the URL, else the URL appended), else the
//! desktop's opener when there is a display, else nothing. Callers print the URL too, so a person
//! can always copy it.
//!
//! The URL is the server's, so it is checked before anything starts: only `https` pages, or
//! `http` on this machine, with a host (a `file:`, `vscode:` or `javascript:` URL is never
//! handed to an opener), and it is always one argument of its own, never a shell's input. A
//! `$BROWSER` that puts `%s` inside a larger word (`sh -c "firefox %s"`) may hand that word to a
//! shell: such an entry gets only a URL with none of a shell's special characters, and is
//! skipped otherwise (CVE-2025-6514 was this class of hole).

use std::net::IpAddr;
use std::process::{Command, Stdio};

/// How the URL reached the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A `$BROWSER` command or the desktop opener was started with it.
    Opened(String),
    /// No browser to start: printed only.
    Printed,
    /// Not a page toolport opens (the reason, for the person): printed only.
    Refused(String),
}

/// Starts a browser on `url` if it is a page toolport opens and there is a browser to start;
/// never waits for it to close.
pub fn open(url: &str) -> Shown {
    let url = match openable(url) {
        Ok(url) => url,
        Err(why) => {
            tracing::warn!("not opening the page: {why}");
            return Shown::Refused(why);
        }
    };
    let url = url.as_str();
    if let Some(list) = std::env::var("BROWSER").ok().filter(|b| !b.trim().is_empty()) {
        for entry in list.split(':').filter(|e| !e.trim().is_empty()) {
            let Some(words) = command(entry, url) else { continue };
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

/// `url` parsed, when it is a page toolport opens: `https` with a host, or `http` whose host is
/// this machine (`localhost`, a loopback address: a local sign-in server).
pub fn openable(url: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(url.trim()).map_err(|e| format!("not a URL ({e})"))?;
    let local = match parsed.host() {
        None => return Err(format!("a {}: URL without a host is not a web page", parsed.scheme())),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if local => Ok(parsed),
        "http" => {
            Err("an http page on another machine is not opened (only https, or http on this machine)".into())
        }
        other => Err(format!("a {other}: URL is not a web page (only https, or http on this machine)")),
    }
}

/// One `$BROWSER` entry as the words to start, the URL in place of `%s` (or last); `None` for
/// an entry that does not read as a command, or that would put a URL with a shell's special
/// characters inside a larger word.
fn command(entry: &str, url: &str) -> Option<Vec<String>> {
    let Some(mut words) = shlex::split(entry).filter(|w| !w.is_empty()) else {
        tracing::warn!("cannot read $BROWSER as a command: {entry}");
        return None;
    };
    if !words.iter().any(|w| w.contains("%s")) {
        words.push(url.to_string());
        return Some(words);
    }
    let embedded = words.iter().any(|w| w.contains("%s") && w != "%s");
    if embedded && !url.chars().all(shell_inert) {
        tracing::warn!(
            "skipping the $BROWSER entry {entry}: it puts the URL inside a larger argument (a shell \
             command?) and this URL holds characters a shell would act on"
        );
        return None;
    }
    words.iter_mut().for_each(|w| *w = w.replace("%s", url));
    Some(words)
}

/// Characters no POSIX shell treats specially, inside quotes or out.
fn shell_inert(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~:/?#[]@%=+,".contains(c)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_pages_and_local_http_ones_are_opened() {
        for ok in [
            "https://auth.example.com/authorize?a=1&b=2",
            "http://127.0.0.1:8080/cb",
            "http://localhost/x",
            "http://[::1]:9/",
        ] {
            assert!(openable(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("file:///etc/passwd", "a file: URL without a host"),
            ("vscode://extension/x", "a vscode: URL is not a web page"),
            ("javascript:alert(1)", "a javascript: URL without a host"),
            ("http://auth.example.com/authorize", "an http page on another machine"),
            ("not a url", "not a URL"),
        ] {
            let e = openable(bad).err().unwrap_or_default();
            assert!(e.starts_with(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_url_is_one_word_and_never_shell_text() {
        let url = "https://a.example/authorize?x=1&state=$(touch pwned)";
        let parsed = openable(url).map(|u| u.to_string()).unwrap_or_default();
        // As its own word, any URL goes as one argument (no shell sees it).
        assert_eq!(
            command("firefox --new-tab %s", &parsed),
            Some(vec!["firefox".into(), "--new-tab".into(), parsed.clone()])
        );
        assert_eq!(command("firefox", &parsed), Some(vec!["firefox".into(), parsed.clone()]));
        // Inside a larger word, only one a shell would not act on.
        assert_eq!(command(r#"sh -c "firefox %s""#, &parsed), None);
        let plain = "https://a.example/authorize?x=1";
        assert_eq!(
            command(r#"sh -c "firefox %s""#, plain),
            Some(vec!["sh".into(), "-c".into(), format!("firefox {plain}")])
        );
    }
}
