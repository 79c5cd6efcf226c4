//! Text that a guest or a server controls, made safe to hold and to show: clipped where an
//! error is built, and escaped before it reaches a terminal or a log line. The one place for
//! both, so every view escapes the same characters the same way.
//!
//! A server's tool name, a plugin's reject reason, its log line or a transport's error are
//! written by someone else: unescaped, an ESC sequence clears the screen, sets the window title
//! or writes the clipboard (OSC 52), a CR/LF forges a host log line, and a bidi override makes
//! a name read differently from what it is.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_general_category::{GeneralCategory, get_general_category};

/// Longest guest- or server-supplied text kept in an error (a reject reason, a transport's
/// failure, a trap message): enough for any real explanation with its context, small enough
/// that a 10 MB reason cannot make `mcp list --json` print megabytes.
pub const MAX_FOREIGN_TEXT_BYTES: usize = 4096;

/// `text` cut to [`MAX_FOREIGN_TEXT_BYTES`] on a character boundary, saying how much was cut.
pub fn clip_foreign(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_FOREIGN_TEXT_BYTES {
        return Cow::Borrowed(text);
    }
    let cut = floor_char_boundary(text, MAX_FOREIGN_TEXT_BYTES);
    Cow::Owned(format!("{}… ({} more bytes cut)", &text[..cut], text.len() - cut))
}

/// The largest char boundary of `text` at or below `at` (where a byte bound may cut a text
/// without splitting a character).
pub fn floor_char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

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
/// `is_hidden_or_control` as `\u{…}`, newlines included, so the result is exactly one
/// visible line.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, |c| !is_hidden_or_control(c))
}

/// A multi-line text view (a call's result, the tool list): C0 controls but `\n` and `\t`, DEL,
/// C1 and the bidi controls as `\u{…}`. Other format characters stay, because they are
/// legitimate inside text (the zero-width joiner of an emoji, a soft hyphen) and cannot move
/// the cursor or reorder what is shown.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t' || !(c.is_control() || is_bidi_control(c)))
}

/// The explicit bidi formatting characters (embeddings, overrides, isolates, marks): the
/// "Trojan Source" set that makes text display in another order than it is.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
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

/// `n` and `noun`, the noun plural unless `n` is one ("1 server", "2 servers"): a line a person
/// reads says "from 1 servers" nowhere. `noun` is a regular English noun (an `s` is added).
pub fn counted(n: usize, noun: &str) -> String {
    format!("{n} {noun}{}", plural(n))
}

/// The `s` of a regular plural, or nothing for one.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "server"), "1 server");
        assert_eq!(counted(0, "tool"), "0 tools");
        assert_eq!(counted(12, "tool"), "12 tools");
    }

    #[test]
    fn a_line_escapes_controls_newlines_and_format_characters() {
        assert_eq!(escape_line("plain name"), "plain name");
        assert_eq!(escape_line("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(escape_line("x\r\nINFO forged"), "x\\u{d}\\u{a}INFO forged");
        assert_eq!(escape_line("bash\u{200b}"), "bash\\u{200b}");
        assert_eq!(escape_line("\u{202e}evil\u{7f}\u{9b}"), "\\u{202e}evil\\u{7f}\\u{9b}");
        assert_eq!(escape_line("l\u{2028}p\u{2029}"), "l\\u{2028}p\\u{2029}");
    }

    #[test]
    fn text_keeps_layout_but_not_escape_sequences() {
        let osc52 = "copied\u{1b}]52;c;ZXZpbA==\u{7}\n\tnext\r";
        assert_eq!(escape_text(osc52), "copied\\u{1b}]52;c;ZXZpbA==\\u{7}\n\tnext\\u{d}");
        assert_eq!(
            escape_text("a\u{202e}b \u{1f469}\u{200d}\u{1f4bb}"),
            "a\\u{202e}b \u{1f469}\u{200d}\u{1f4bb}"
        );
        assert_eq!(escape_text("\u{85}\u{7f}"), "\\u{85}\\u{7f}");
    }

    #[test]
    fn foreign_text_is_clipped_on_a_character_boundary() {
        assert_eq!(clip_foreign("short"), "short");
        let long = "é".repeat(MAX_FOREIGN_TEXT_BYTES);
        let clipped = clip_foreign(&long);
        assert!(clipped.starts_with(&"é".repeat(MAX_FOREIGN_TEXT_BYTES / 2)));
        assert!(clipped.ends_with(&format!("… ({} more bytes cut)", MAX_FOREIGN_TEXT_BYTES)));
        assert!(clipped.len() < MAX_FOREIGN_TEXT_BYTES + 40);
    }
}
