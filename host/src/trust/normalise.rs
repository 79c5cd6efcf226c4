//! The text as the rules read it: what a model reads in a definition, not the code points a
//! regex sees. A poisoned description splits its words with zero-width characters
//! (`Ig\u{200b}nore`), spells them with look-alikes from another script (Cyrillic `і`) or with
//! compatibility forms (fullwidth `＜IMPORTANT＞`); each passes a rule written in ASCII.
//! So before the rules run, each text is NFKC-normalised (`unicode-normalization`), its
//! invisible characters dropped, and every other non-ASCII character that is a TR39 confusable
//! of ASCII (`unicode-security`'s skeleton) replaced by that ASCII. ASCII itself is never
//! mapped: TR39 prototypes fold ASCII too (`m` → `rn`, `I` → `l`), which would break every
//! rule. A match in the normalised text is mapped back to the span of the original text it
//! came from, so findings point at what the server sent.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::LazyLock;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

use super::matchers::{is_invisible, is_tag};
use crate::text::is_bidi_control;

/// A text as the rules read it, and where each of its bytes came from.
pub(super) struct Normalised<'a> {
    /// The normalised text (the original when nothing changed).
    pub(super) text: Cow<'a, str>,
    /// For each byte of `text`, the original bytes it came from (empty when `text` is the
    /// original).
    origin: Vec<Range<usize>>,
}

impl<'a> Normalised<'a> {
    /// `text` normalised; ASCII without control characters (nearly every text) is borrowed.
    pub(super) fn new(text: &'a str) -> Self {
        if text.bytes().all(|b| b.is_ascii() && (!b.is_ascii_control() || matches!(b, b'\n' | b'\r' | b'\t')))
        {
            return Self { text: Cow::Borrowed(text), origin: Vec::new() };
        }
        let mut out = String::with_capacity(text.len());
        let mut origin = Vec::with_capacity(text.len());
        let mut push = |piece: &str, from: Range<usize>| {
            out.push_str(piece);
            origin.extend(std::iter::repeat_n(from, piece.len()));
        };
        let mut chars = text.char_indices().peekable();
        while let Some((start, c)) = chars.next() {
            // A character and the combining marks after it normalise together (`e` + U+0301).
            let mut end = start + c.len_utf8();
            while let Some(&(at, mark)) = chars.peek()
                && canonical_combining_class(mark) != 0
            {
                end = at + mark.len_utf8();
                chars.next();
            }
            if c.is_ascii() && end == start + 1 {
                if !is_dropped(c) {
                    push(c.encode_utf8(&mut [0; 4]), start..end);
                }
                continue;
            }
            for read in text[start..end].nfkc() {
                if !is_dropped(read) {
                    let read = ascii_look_alike(read).unwrap_or(read);
                    push(read.encode_utf8(&mut [0; 4]), start..end);
                }
            }
        }
        match out == text {
            true => Self { text: Cow::Borrowed(text), origin: Vec::new() },
            false => Self { text: Cow::Owned(out), origin },
        }
    }

    /// The original span of the normalised bytes `start..end` (a match of a rule): from the
    /// first original character it came from to the last, dropped characters in between
    /// included.
    pub(super) fn original(&self, (start, end): (usize, usize)) -> (usize, usize) {
        if self.origin.is_empty() {
            return (start, end);
        }
        match (self.origin.get(start), end.checked_sub(1).and_then(|last| self.origin.get(last))) {
            (Some(first), Some(last)) if start < end => (first.start, last.end),
            // An empty match has no characters of its own: it sits where its byte came from.
            (Some(at), _) => (at.start, at.start),
            _ => self.origin.last().map_or((0, 0), |last| (last.end, last.end)),
        }
    }
}

/// What the rules never see: invisible, bidi and tag characters (their own rules find them).
fn is_dropped(c: char) -> bool {
    is_invisible(c) || is_bidi_control(c) || is_tag(c) || is_ignorable(c)
}

/// Default-ignorable characters that are not format or control characters: variation
/// selectors, the combining grapheme joiner, the Hangul and Khmer fillers. TR39's skeleton
/// drops them too (an empty skeleton says so).
fn is_ignorable(c: char) -> bool {
    !c.is_ascii() && unicode_security::skeleton(c.encode_utf8(&mut [0; 4])).next().is_none()
}

/// The ASCII character a non-ASCII one is confusable with (TR39), when there is one.
fn ascii_look_alike(c: char) -> Option<char> {
    if c.is_ascii() {
        return None;
    }
    let skeleton: String = unicode_security::skeleton(c.encode_utf8(&mut [0; 4])).collect();
    if skeleton.is_empty() || !skeleton.is_ascii() {
        return None;
    }
    let class = ASCII_BY_SKELETON.get(&skeleton)?;
    // TR39 gives one prototype per class (`l` for `I`, `l`, `1`, `|`); the member of the class
    // with the same case reads as the model reads it: Cyrillic `І` is `I`, not `l`.
    let pick = |wanted: fn(&char) -> bool| class.iter().copied().find(wanted);
    let same_case = if c.is_uppercase() {
        pick(char::is_ascii_uppercase)
    } else if c.is_lowercase() {
        pick(char::is_ascii_lowercase)
    } else {
        None
    };
    same_case.or_else(|| pick(char::is_ascii_alphanumeric)).or(class.first().copied())
}

/// The printable ASCII characters by their TR39 skeleton, each class in code point order.
static ASCII_BY_SKELETON: LazyLock<HashMap<String, Vec<char>>> = LazyLock::new(|| {
    let mut classes: HashMap<String, Vec<char>> = HashMap::new();
    for c in (0x21u8..0x7f).map(char::from) {
        let skeleton: String = unicode_security::skeleton(c.encode_utf8(&mut [0; 4])).collect();
        classes.entry(skeleton).or_default().push(c);
    }
    classes
});

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> String {
        Normalised::new(text).text.into_owned()
    }

    #[test]
    fn ascii_is_borrowed_and_never_folded() {
        let plain = Normalised::new("Ignore memory | 1 l I 0 O rn m");
        assert!(matches!(plain.text, Cow::Borrowed(_)));
        assert_eq!(plain.original((3, 7)), (3, 7));
    }

    #[test]
    fn invisible_characters_are_dropped_and_spans_cover_them() {
        let text = "say: Ig\u{200b}nore it";
        let n = Normalised::new(text);
        assert_eq!(n.text, "say: Ignore it");
        // "Ignore" in the normalised text is bytes 5..11; in the original, 5..14 (ZWSP is 3).
        assert_eq!(n.original((5, 11)), (5, 14));
        assert_eq!(&text[5..14], "Ig\u{200b}nore");
        assert_eq!(read("a\u{ad}b\u{fe0f}c\u{2060}d\u{e0041}e\u{202e}f\u{1b}g"), "abcdefg");
    }

    #[test]
    fn look_alikes_read_as_ascii_with_their_case() {
        // Cyrillic і, е, о, а, І, О; Greek ο.
        assert_eq!(read("\u{456}gnore"), "ignore");
        assert_eq!(read("\u{406}GNORE"), "IGNORE");
        assert_eq!(read("pr\u{435}vi\u{43e}us \u{3bf}k"), "previous ok");
        // Fullwidth forms and mathematical letters through NFKC.
        assert_eq!(
            read("\u{ff1c}\u{ff29}\u{ff2d}\u{ff30}\u{ff2f}\u{ff32}\u{ff34}\u{ff21}\u{ff2e}\u{ff34}\u{ff1e}"),
            "<IMPORTANT>"
        );
        assert_eq!(read("\u{1d422}\u{1d420}\u{1d427}"), "ign");
        // Letters that are not look-alikes of ASCII stay: the text still reads as itself.
        assert_eq!(read("café Привет 東京"), "café Пpивeт 東京");
    }

    #[test]
    fn spans_of_mapped_text_point_at_the_original() {
        let text = "x \u{ff1c}IMPORTANT\u{ff1e} y";
        let n = Normalised::new(text);
        assert_eq!(n.text, "x <IMPORTANT> y");
        assert_eq!(n.original((2, 13)), (2, 17));
        assert_eq!(&text[2..17], "\u{ff1c}IMPORTANT\u{ff1e}");
        // A combining mark stays with its letter: é (e + U+0301) composes and maps as one.
        let n = Normalised::new("e\u{301}\u{200b}x");
        assert_eq!(n.text, "éx");
        assert_eq!(n.original((0, 2)), (0, 3));
    }
}
