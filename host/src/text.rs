//! Text that a guest or a server controls, made safe to show: escaped before it reaches a
//! terminal or a log line. The one place for it, so every view escapes the same characters
//! the same way.
//!
//! A server's tool name, a plugin's reject reason, its log line or a transport's error are
//! written by someone else: unescaped, an ESC sequence clears the screen, sets the window title
//! or writes the clipboard (OSC 52), a CR/LF forges a host log line, and a bidi override makes
//! a name read differently from what it is.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_general_category::{GeneralCategory, get_general_category};

/// Whether `c` must not reach a terminal or a log line as itself: control characters (C0, DEL,
/// C1), format characters (zero-width, bidi overrides and isolates, BOM, …) and the Unicode line
/// and paragraph separators.
pub fn is_hidden_or_control(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// One line of foreign text (a name, a log message, an error in a row): every character that
/// [`is_hidden_or_control`] as `\u{…}`, newlines included, so the result is exactly one
/// visible line.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, |c| !is_hidden_or_control(c))
}

/// `text` with every character that `keep` refuses written as `\u{hex}`.
fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if text.chars().all(&keep) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if keep(c) {
            out.push(c);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_escapes_controls_newlines_and_format_characters() {
        assert_eq!(escape_line("plain name"), "plain name");
        assert_eq!(escape_line("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(escape_line("x\r\nINFO forged"), "x\\u{d}\\u{a}INFO forged");
        assert_eq!(escape_line("bash\u{200b}"), "bash\\u{200b}");
        assert_eq!(escape_line("\u{202e}evil\u{7f}\u{9b}"), "\\u{202e}evil\\u{7f}\\u{9b}");
        assert_eq!(escape_line("l\u{2028}p\u{2029}"), "l\\u{2028}p\\u{2029}");
    }
}
