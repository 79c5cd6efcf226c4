//! What looks like a secret: a few credential formats with a fixed prefix and alphabet, the kind
//! that is a leak wherever it turns up in a tool's arguments or answer. A short list on purpose:
//! each entry is near-certain, so a finding is worth a person's look. (The host's own secret
//! scanner, gitleaks' rules, guards server definitions; this is a demonstration of a guard, not
//! a replacement for it.)

use std::ops::RangeInclusive;

/// A credential recognised by its prefix, then a run of its alphabet of a known length.
struct Format {
    /// What the finding calls it.
    what: &'static str,
    prefixes: &'static [&'static str],
    alphabet: fn(u8) -> bool,
    length: RangeInclusive<usize>,
}

fn upper_or_digit(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}

fn alphanumeric(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

fn word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn word_or_dash(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

const FORMATS: [Format; 6] = [
    Format {
        what: "an AWS access key id",
        prefixes: &["AKIA", "ASIA"],
        alphabet: upper_or_digit,
        length: 16..=16,
    },
    Format {
        what: "a GitHub token",
        prefixes: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        alphabet: alphanumeric,
        length: 36..=251,
    },
    Format { what: "a GitHub token", prefixes: &["github_pat_"], alphabet: word, length: 22..=244 },
    Format {
        what: "a Slack token",
        prefixes: &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-"],
        alphabet: word_or_dash,
        length: 10..=250,
    },
    Format { what: "a Google API key", prefixes: &["AIza"], alphabet: word_or_dash, length: 35..=35 },
    Format {
        what: "a Stripe secret key",
        prefixes: &["sk_live_", "rk_live_"],
        alphabet: alphanumeric,
        length: 24..=247,
    },
];

impl Format {
    /// Whether `text` holds this format: a prefix not glued to a word before it, then a run of
    /// the alphabet whose whole length is in range (a longer run is something else).
    fn found_in(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        self.prefixes.iter().any(|prefix| {
            text.match_indices(prefix).any(|(at, _)| {
                let clean = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
                // Counted no further than one past the range: a long run is rejected in one step
                // whatever its length, so a text of repeated prefixes stays linear.
                let body = bytes[at + prefix.len()..]
                    .iter()
                    .take(self.length.end() + 1)
                    .take_while(|&&c| (self.alphabet)(c))
                    .count();
                clean && self.length.contains(&body)
            })
        })
    }
}

/// What `text` looks like it holds, if it looks like it holds a secret.
pub fn find(text: &str) -> Option<&'static str> {
    if text.contains("-----BEGIN ") && text.contains("PRIVATE KEY-----") {
        return Some("a private key");
    }
    FORMATS.iter().find(|f| f.found_in(text)).map(|f| f.what)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Test credentials are built at run time, so no scanner takes this file for a leak.
    fn token(prefix: &str, body: &str, n: usize) -> String {
        format!("{prefix}{}", body.repeat(n))
    }

    #[test]
    fn known_formats_are_found() {
        assert_eq!(
            find(&format!("key={}", token("AKIA", "IOSFODNN7EXAMPL", 1) + "E")),
            Some("an AWS access key id")
        );
        assert_eq!(find(&token("ghp_", "a1B2", 9)), Some("a GitHub token"));
        assert_eq!(find(&format!("Bearer {}", token("github_pat_", "A_b", 25))), Some("a GitHub token"));
        assert_eq!(find(&token("xoxb-", "123-abc", 3)), Some("a Slack token"));
        assert_eq!(find(&token("AIza", "x", 35)), Some("a Google API key"));
        assert_eq!(find(&token("sk_live_", "k", 30)), Some("a Stripe secret key"));
        let pem = format!("-----BEGIN {}PRIVATE KEY-----\nMIIE...", "RSA ");
        assert_eq!(find(&pem), Some("a private key"));
    }

    #[test]
    fn look_alikes_are_not_found() {
        for text in [
            token("AKIA", "A", 15),              // too short
            token("AKIA", "A", 17),              // too long
            token("xAKIA", "A", 16),             // glued to a word
            token("AKIA", "a", 16),              // wrong alphabet
            token("ghp_", "a", 35),              // too short
            "github_pat_ is the prefix".into(),  // no body
            "-----BEGIN PUBLIC KEY-----".into(), // not private
            "plain words, AKIA and ghp_".into(),
            token("AKIA", "AKIA", 5000), // long, and stays fast
        ] {
            assert_eq!(find(&text), None, "{}", &text[..text.len().min(40)]);
        }
    }
}
