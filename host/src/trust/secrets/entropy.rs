//! Tokens no pattern knows but that read as random: long runs of base64-like characters whose
//! Shannon entropy is that of a generated key, not of a word, a path or a hash.
//!
//! The thresholds, and why:
//! - [`MIN_LEN`] 32: API keys and tokens are 32 characters and up; shorter random-looking runs
//!   (ids, short hashes) are everywhere in results.
//! - [`MAX_LEN`] 512: a longer run is a blob (an image's base64, a bundle), not a credential,
//!   and replacing it would ruin the result for nothing.
//! - upper case, lower case and a digit all present: hex (UUIDs, SHA-256, git ids) and
//!   identifiers in one case never qualify, however long.
//! - [`MIN_BITS`] 4.5 bits per character (truffleHog's base64 threshold): a random 40-character
//!   alphanumeric key scores about 4.9, CamelCase identifiers and paths 4.0 to 4.3.

use crate::trust::matchers::{byte_runs, mixes_cases_and_digits};

/// Shortest run considered.
const MIN_LEN: usize = 32;
/// Longest run considered.
const MAX_LEN: usize = 512;
/// Entropy a run must reach, in bits per character.
const MIN_BITS: f64 = 4.5;

/// The rule id notes and the audit trail give a hit of this check.
pub const RULE: &str = "high-entropy-token";

/// Shannon entropy of `text`'s bytes, in bits per byte (gitleaks computes it the same way).
pub fn shannon(text: &str) -> f64 {
    if text.is_empty() {
        return 0.0;
    }
    let mut counts = [0usize; 256];
    for b in text.bytes() {
        counts[usize::from(b)] += 1;
    }
    let len = text.len() as f64;
    counts.iter().filter(|&&c| c > 0).map(|&c| c as f64 / len).map(|p| -p * p.log2()).sum()
}

fn token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-')
}

/// The byte ranges of `text` that read as random tokens.
pub fn high_entropy_tokens(text: &str) -> Vec<std::ops::Range<usize>> {
    byte_runs(text, token_byte)
        .filter(|run| {
            (MIN_LEN..=MAX_LEN).contains(&run.len())
                && mixes_cases_and_digits(&text.as_bytes()[run.clone()])
                && shannon(&text[run.clone()]) >= MIN_BITS
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_known_strings() {
        assert_eq!(shannon(""), 0.0);
        assert_eq!(shannon("aaaa"), 0.0);
        assert!((shannon("abcd") - 2.0).abs() < 1e-9);
    }

    #[test]
    fn random_tokens_are_found() {
        // A generated 40-character key (not a real one).
        let key = "q8ZtR2vLx9WmN4kPb7YcJ3hFs6GdA1eUo5TiKnQw";
        let text = format!("the key is {key}.");
        assert_eq!(high_entropy_tokens(&text), vec![std::ops::Range { start: 11, end: 11 + key.len() }]);
    }

    #[test]
    fn hashes_ids_paths_and_words_are_not() {
        for text in [
            "550e8400-e29b-41d4-a716-446655440000",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
            "commit 83d9cd684c87d95d656c1458ef04895a7f1cbd8e",
            "/usr/local/lib/node_modules/modelcontextprotocol/server-everything/dist/index2",
            "src/main/java/com/Example/Foo2Bar/BazQux3",
            "ThisIsAVeryLongIdentifierName1ForTesting",
            "modelContextProtocolServerEverything2Version",
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        ] {
            assert!(high_entropy_tokens(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn blobs_are_not_tokens() {
        let blob: String =
            (0..2000).map(|i| ["aZ3", "Qx9", "m1K", "p7W"][i % 4]).collect::<Vec<_>>().concat();
        assert!(high_entropy_tokens(&blob).is_empty());
    }
}
