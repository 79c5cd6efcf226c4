//! A pinned definition against the one listed now, word by word, marked the way
//! `git diff --word-diff=plain` marks it (`[-removed-]{+added+}`), so it reads without colour
//! and in a log. Pure.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::text::escape_line;

/// `old` against `new` word by word: unchanged words as they are, a run of removed words in
/// `[-…-]`, a run of added ones in `{+…+}` (removed first).
pub fn words(old: &str, new: &str) -> String {
    let diff = TextDiff::from_words(old, new);
    let (mut out, mut removed, mut added) = (String::new(), String::new(), String::new());
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Equal => {
                flush(&mut out, &mut removed, &mut added);
                out.push_str(change.value());
            }
            ChangeTag::Delete => removed.push_str(change.value()),
            ChangeTag::Insert => added.push_str(change.value()),
        }
    }
    flush(&mut out, &mut removed, &mut added);
    out
}

/// Writes the pending runs; whitespace at a run's end stays outside its marks, so
/// `[-old-] {+new+}` keeps the sentence's spacing.
fn flush(out: &mut String, removed: &mut String, added: &mut String) {
    let mut tail = "";
    for (run, open, close) in [(&*removed, "[-", "-]"), (&*added, "{+", "+}")] {
        let trimmed = run.trim_end();
        if !trimmed.is_empty() {
            let _ = write!(out, "{open}{trimmed}{close}");
            tail = &run[trimmed.len()..];
        }
    }
    out.push_str(tail);
    removed.clear();
    added.clear();
}

/// Each pinned field of a tool that differs between `old` and `new` (pinned definitions, see
/// [`super::pins::definition`]), as `(field, word diff)`. A string field is compared as text,
/// a schema or annotations as their pretty JSON; an absent field as empty. The text is escaped
/// line by line: it is the server's, and reaches a terminal.
pub fn fields(old: &Value, new: &Value) -> Vec<(String, String)> {
    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
    let all: BTreeSet<String> = keys(old).into_iter().chain(keys(new)).collect();
    let mut out = Vec::new();
    for field in &all {
        let (before, after) = (text_of(old.get(field)), text_of(new.get(field)));
        if before != after {
            out.push((field.clone(), escaped(&words(&before, &after))));
        }
    }
    out
}

/// Two texts (a server's instructions) as one escaped word diff.
pub fn text(old: &str, new: &str) -> String {
    escaped(&words(old, new))
}

fn text_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

fn escaped(text: &str) -> String {
    text.split('\n').map(|line| escape_line(line).into_owned()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn marks_removed_then_added_words() {
        assert_eq!(
            words("Reads the notes.", "Reads the notes and mails them."),
            "Reads the [-notes.-]{+notes and mails them.+}"
        );
        assert_eq!(words("a b c", "a c"), "a [-b-] c");
        assert_eq!(words("a c", "a b c"), "a {+b+} c");
        assert_eq!(words("same", "same"), "same");
    }

    #[test]
    fn only_changed_fields_are_shown_and_escaped() {
        let old = json!({"description": "Reads notes.", "title": "Notes"});
        let new = json!({"description": "Reads notes.\u{202e}", "title": "Notes", "annotations": {"readOnlyHint": true}});
        let diff = fields(&old, &new);
        assert_eq!(
            diff,
            [
                ("annotations".to_string(), "{+{\n  \"readOnlyHint\": true\n}+}".to_string()),
                ("description".to_string(), "Reads [-notes.-]{+notes.\\u{202e}+}".to_string()),
            ]
        );
    }
}
