//! The built-in matchers of the rules (`kind` in `rules.json`): character classes by Unicode
//! property, base64 blobs by their mix of characters, and names as whole words. Each returns
//! byte spans in order.

use std::collections::{BTreeSet, HashSet};
use std::ops::Range;

use aho_corasick::AhoCorasick;
use unicode_general_category::{GeneralCategory, get_general_category};

use crate::text::is_bidi_control;

/// Shortest base64 run taken for a blob: 30 bytes encoded, longer than any word or identifier
/// a description uses.
const MIN_BASE64_LEN: usize = 40;

/// Unicode tag characters: an invisible copy of ASCII that models read.
pub(super) fn is_tag(c: char) -> bool {
    ('\u{e0000}'..='\u{e007f}').contains(&c)
}

/// Characters that show nothing: format characters (zero-width space and joiners, BOM, soft
/// hyphen), controls other than line breaks and tabs, and the Hangul fillers that render
/// blank; bidi and tag characters have rules of their own.
pub(super) fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        // Most text is ASCII: no table lookup for it.
        return c.is_ascii_control() && !matches!(c, '\n' | '\r' | '\t');
    }
    if is_bidi_control(c) || is_tag(c) {
        return false;
    }
    matches!(c, '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}')
        || matches!(
            get_general_category(c),
            GeneralCategory::Control | GeneralCategory::Format | GeneralCategory::LineSeparator
        )
}

/// Runs of consecutive characters that `class` takes, each one span.
pub(super) fn char_runs(text: &str, class: fn(char) -> bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (at, c) in text.char_indices().filter(|(_, c)| class(*c)) {
        let end = at + c.len_utf8();
        match out.last_mut() {
            Some(last) if last.1 == at => last.1 = end,
            _ => out.push((at, end)),
        }
    }
    out
}

/// Byte spans, in order.
pub(super) type Spans = Vec<(usize, usize)>;

/// Runs of invisible characters, split by whether they sit inside a word: `(inside, not)`.
/// Inside is between two letters or digits of an alphabet written with spaces between words
/// (Latin, Greek, Cyrillic, Armenian, their fullwidth forms), where nothing invisible belongs:
/// `Ig\u{200b}nore` is a word split so that a rule does not read it. Scripts that use a
/// zero-width joiner, non-joiner or space inside words (Arabic, Indic, Thai, CJK) are not
/// taken, nor a run of soft hyphens only (a line-break hint).
pub(super) fn invisible_runs(text: &str) -> (Spans, Spans) {
    char_runs(text, is_invisible).into_iter().partition(|&(start, end)| {
        let before = text[..start].chars().next_back().is_some_and(is_spaced_alphanumeric);
        let after = text[end..].chars().next().is_some_and(is_spaced_alphanumeric);
        before && after && text[start..end].chars().any(|c| c != '\u{ad}')
    })
}

/// A letter or digit of an alphabet written with spaces between words.
fn is_spaced_alphanumeric(c: char) -> bool {
    c.is_alphanumeric()
        && (c < '\u{590}'
            || ('\u{1d00}'..='\u{1fff}').contains(&c)
            || ('\u{2c60}'..='\u{2c7f}').contains(&c)
            || ('\u{a640}'..='\u{a69f}').contains(&c)
            || ('\u{a720}'..='\u{a7ff}').contains(&c)
            || ('\u{ff10}'..='\u{ff5a}').contains(&c))
}

/// Runs of base64 of at least [`MIN_BASE64_LEN`] characters that mix upper case, lower case
/// and digits, and are not a path (a slash in every 16 characters or fewer); up to two `=` of
/// padding belong to the run.
pub(super) fn base64_blobs(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    byte_runs(text, |b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        .filter(|run| {
            let run = &bytes[run.clone()];
            let slashes = run.iter().filter(|b| **b == b'/').count();
            run.len() >= MIN_BASE64_LEN && mixes_cases_and_digits(run) && slashes * 16 <= run.len()
        })
        .map(|run| {
            let padding = bytes[run.end..].iter().take(2).take_while(|b| **b == b'=').count();
            (run.start, run.end + padding)
        })
        .collect()
}

/// The longest runs of bytes `class` takes, in order, as byte ranges (what the blob and token
/// checks here and in `secrets/` cut a text into).
pub(super) fn byte_runs(text: &str, class: fn(u8) -> bool) -> impl Iterator<Item = Range<usize>> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !class(bytes[at]) {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && class(bytes[at]) {
            at += 1;
        }
        (start < at).then_some(start..at)
    })
}

/// Whether `run` has upper case, lower case and a digit: what generated keys and encoded
/// blobs have, and words, hex digests and one-case identifiers do not.
pub(super) fn mixes_cases_and_digits(run: &[u8]) -> bool {
    let has = |f: fn(&u8) -> bool| run.iter().any(f);
    has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase) && has(u8::is_ascii_digit)
}

/// Whether a tool name reads as an identifier rather than a word (`read_graph`, `get-env`,
/// `printEnv`), so finding it in prose means the tool.
pub(super) fn is_identifier_like(name: &str) -> bool {
    let camel = name.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    name.len() >= 4 && (name.contains(['_', '-']) || camel)
}

/// Names to find in prose, ASCII case ignored, searched all at once: a text is checked
/// against every server's tool names (hundreds), so one pass of an Aho-Corasick automaton per
/// text, not one search per name.
pub(super) struct NameSet {
    /// The names, ASCII lower case, by pattern id.
    names: Vec<String>,
    finder: Option<AhoCorasick>,
}

impl NameSet {
    pub(super) fn new(names: &BTreeSet<String>) -> Self {
        let names: Vec<String> = names.iter().map(|n| n.to_ascii_lowercase()).collect();
        let finder = (!names.is_empty())
            .then(|| AhoCorasick::builder().ascii_case_insensitive(true).build(&names))
            // Building fails only past the automaton's size limits, far beyond any listing;
            // then nothing is searched rather than the scan failing.
            .and_then(Result::ok);
        Self { names, finder }
    }
}

/// Every occurrence of one of `names` in `text` as a whole word (no letter, digit or `_` on
/// either side), ASCII case ignored; the names in `except` (ASCII lower case) never count.
pub(super) fn whole_words(text: &str, names: &NameSet, except: &HashSet<String>) -> Vec<(usize, usize)> {
    let Some(finder) = &names.finder else { return Vec::new() };
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out: Vec<(usize, usize)> = finder
        .find_overlapping_iter(text)
        .filter(|m| !except.contains(&names.names[m.pattern().as_usize()]))
        .map(|m| (m.start(), m.end()))
        .filter(|&(start, end)| {
            let before = text[..start].chars().next_back().is_some_and(is_word);
            let after = text[end..].chars().next().is_some_and(is_word);
            !before && !after
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
