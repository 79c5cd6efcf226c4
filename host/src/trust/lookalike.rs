//! Look-alike tool names: a tool a pinned server lists for the first time whose name reads as
//! a pinned tool's (`notes_purgе`, with a Cyrillic `е`, beside a pinned `notes_purge`). The pin
//! of the one a person trusted says nothing of the other, so without this check it would be
//! recorded at first sight and served — claiming, say, to be read-only — while a client, or a
//! person asked to confirm, reads the trusted name. Two names look alike when their confusable
//! skeletons (Unicode TR39, `unicode-security`) are equal.

use std::collections::{BTreeMap, BTreeSet};

use super::pins::{HoldReason, ServerPins};

/// The pinned tool names of one server by their skeleton, to look a new name up in.
#[derive(Debug, Default)]
pub struct PinnedNames {
    by_skeleton: BTreeMap<String, String>,
}

impl PinnedNames {
    /// The names `pins` (one server's, if it has any) pins.
    pub fn of(pins: Option<&ServerPins>) -> PinnedNames {
        let mut by_skeleton = BTreeMap::new();
        for name in pins.iter().flat_map(|p| p.tools.keys()) {
            by_skeleton.entry(skeleton(name)).or_insert_with(|| name.clone());
        }
        PinnedNames { by_skeleton }
    }

    /// Why `name`, which has no pin of its own, is held: the pinned name it looks like, if any.
    pub fn lookalike(&self, name: &str) -> Option<HoldReason> {
        let pinned = self.by_skeleton.get(&skeleton(name)).filter(|p| p.as_str() != name)?;
        Some(HoldReason::LookAlike { pinned: pinned.clone(), differs: differs(pinned, name) })
    }
}

/// `name`'s TR39 skeleton.
fn skeleton(name: &str) -> String {
    unicode_security::skeleton(name).collect()
}

/// The characters one name has and the other does not, as `U+XXXX`, in code point order.
fn differs(a: &str, b: &str) -> Vec<String> {
    let (a, b): (BTreeSet<char>, BTreeSet<char>) = (a.chars().collect(), b.chars().collect());
    a.symmetric_difference(&b).map(|c| format!("U+{:04X}", u32::from(*c))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::Pin;

    fn pinned(names: &[&str]) -> ServerPins {
        let mut pins = ServerPins::default();
        for name in names {
            pins.tools.insert((*name).to_string(), Pin::of_instructions(name));
        }
        pins
    }

    #[test]
    fn a_confusable_name_of_a_pinned_tool_is_held_naming_it_and_the_characters() {
        let pins = pinned(&["notes_purge", "read_notes"]);
        let names = PinnedNames::of(Some(&pins));
        assert_eq!(
            names.lookalike("notes_purg\u{435}"),
            Some(HoldReason::LookAlike { pinned: "notes_purge".into(), differs: vec!["U+0435".into()] })
        );
        assert_eq!(
            names.lookalike("rea\u{0501}_notes").map(|r| r.phrase()),
            Some("looks like pinned read_notes, differs in U+0064 U+0501".to_string())
        );
        // Itself, an unrelated name, a server without pins: nothing.
        assert_eq!(names.lookalike("notes_purge"), None);
        assert_eq!(names.lookalike("notes_purge_all"), None);
        assert_eq!(PinnedNames::of(None).lookalike("notes_purg\u{435}"), None);
    }
}
