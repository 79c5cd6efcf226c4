//! Token counts under a real tokenizer: what a tool definition or a call result costs a model's
//! context. One tokenizer for every figure the host prints (`tools --tokens`, the lazy
//! surface's savings, `maxResultTokens`), so they add up: `o200k_base`, the encoding of
//! OpenAI's current models, bundled with `tiktoken-rs` (no download). Other models' tokenizers
//! differ by a few percent; the ranking and the shares do not.

use tiktoken_rs::CoreBPE;

use crate::text::floor_char_boundary;

/// The encoding every count is made in.
pub const TOKENIZER: &str = "o200k_base";

/// The bundled encoder, built once (a few hundred milliseconds) on first use.
fn encoder() -> &'static CoreBPE {
    tiktoken_rs::o200k_base_singleton()
}

/// How many tokens `text` is, special-token spellings counted as plain text (a tool's
/// description that says `<|endoftext|>` is still just text to the model).
pub fn count(text: &str) -> usize {
    encoder().encode_ordinary(text).len()
}

/// Bytes per allowed token the first probe takes: English runs about four bytes a token, so a
/// probe this long usually settles the question at once.
const FIRST_PROBE_BYTES_PER_TOKEN: usize = 8;

/// The beginning of `text` that fits in `max` tokens, or `None` when the whole text does.
/// Only a prefix is encoded, doubled until it holds more than `max` tokens or is the whole
/// text, so asking about a 30 MB result costs about what encoding `max` tokens of it does. The
/// cut falls on a token boundary (hence a char boundary).
pub fn within(text: &str, max: usize) -> Option<&str> {
    let mut probe_len = max.saturating_mul(FIRST_PROBE_BYTES_PER_TOKEN).max(64);
    loop {
        let probe = floor_char_boundary(text, probe_len);
        let tokens = encoder().encode_ordinary(&text[..probe]);
        if tokens.len() > max {
            return Some(&text[..prefix_len(&tokens, max, text)]);
        }
        if probe == text.len() {
            return None;
        }
        probe_len = probe_len.saturating_mul(2);
    }
}

/// The byte length of the first `max` tokens of `tokens`, which encode a prefix of `text`.
fn prefix_len(tokens: &[tiktoken_rs::Rank], max: usize, text: &str) -> usize {
    let kept = &tokens[..max.min(tokens.len())];
    let bytes = encoder().decode_bytes(kept).map(|b| b.len()).unwrap_or(0);
    floor_char_boundary(text, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_published_o200k_encodings() {
        // The reference encodings of OpenAI's tiktoken for o200k_base.
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        assert_eq!(count("Hello, world!"), 4);
        assert_eq!(count("<|endoftext|>"), 7);
    }

    #[test]
    fn a_text_within_the_budget_is_not_cut() {
        assert_eq!(within("hello world", 2), None);
        assert_eq!(within("", 0), None);
    }

    #[test]
    fn a_long_text_is_cut_on_a_token_and_char_boundary() {
        let text = "héllo wörld ".repeat(10_000);
        let cut = within(&text, 100).unwrap_or_else(|| panic!("not cut"));
        assert!(text.starts_with(cut));
        let n = count(cut);
        assert!((99..=100).contains(&n), "{n} tokens");
    }

    #[test]
    fn long_tokens_still_count_past_the_probe() {
        // Runs of spaces make long tokens: the probe alone could not see the budget exceeded.
        let text = format!("{}x", " ".repeat(200_000));
        let cut = within(&text, 10);
        assert_eq!(cut.is_some(), count(&text) > 10);
    }
}
