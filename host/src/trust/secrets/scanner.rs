//! The scan of one text: gitleaks' rules (`patterns.rs`) as gitleaks applies them — keyword
//! pre-filter, regex, the secret group, the entropy floor, the rule's and the global
//! allowlists — then the high-entropy check (`entropy.rs`) for what no rule knows. Pure and
//! offline: the call guard decides what a hit means.

use std::borrow::Cow;
use std::ops::Range;

use super::entropy;
use super::patterns::{Pattern, patterns};

/// One secret found: which rule, and where (a byte range of the text scanned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// gitleaks' rule id, [`entropy::RULE`], or `$NAME` for a configured secret (the
    /// variable's name, never its value).
    pub rule: Cow<'static, str>,
    /// The secret's bytes in the text (the rule's secret group, not its context).
    pub span: Range<usize>,
}

/// Every secret in `text`, in order, overlapping ones merged (the first rule named).
pub fn scan(text: &str) -> Vec<Hit> {
    let set = patterns();
    let mut hits = Vec::new();
    for pattern in set.candidates(text) {
        let Some(regex) = pattern.regex() else { continue };
        for caps in regex.captures_iter(text.as_bytes()) {
            let Some(whole) = caps.get(0) else { continue };
            let whole_span = chars(text, whole.range());
            let span = chars(text, secret_of(pattern, &caps).unwrap_or(whole).range());
            let (whole, secret) = (&text[whole_span.clone()], &text[span.clone()]);
            if let Some(floor) = pattern.entropy
                && entropy::shannon(secret) <= floor
            {
                continue;
            }
            // gitleaks' generic rule wants a digit: `password = "correcthorse"` is prose.
            if pattern.id.starts_with("generic") && !secret.bytes().any(|b| b.is_ascii_digit()) {
                continue;
            }
            let line = line_of(text, whole_span);
            let allowed = set.global.allows(secret, whole, line)
                || pattern.allowlists.iter().any(|a| a.allows(secret, whole, line));
            if allowed {
                continue;
            }
            hits.push(Hit { rule: Cow::Borrowed(static_id(pattern)), span });
        }
    }
    for span in entropy::high_entropy_tokens(text) {
        hits.push(Hit { rule: Cow::Borrowed(entropy::RULE), span });
    }
    merge(hits)
}

/// `text` with every hit of [`scan`] and every one of `more` (configured secrets, found by
/// the caller) replaced by `***`, and the hits' rules (one per hit, in order); `None` when
/// there is nothing to replace.
pub fn redact(text: &str, more: Vec<Hit>) -> Option<(String, Vec<Cow<'static, str>>)> {
    let mut hits = scan(text);
    if !more.is_empty() {
        hits.extend(more);
        hits = merge(hits);
    }
    if hits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for hit in &hits {
        out.push_str(&text[at..hit.span.start]);
        out.push_str(crate::config::MASK);
        at = hit.span.end;
    }
    out.push_str(&text[at..]);
    Some((out, hits.into_iter().map(|h| h.rule).collect()))
}

/// The secret group gitleaks reads: `secretGroup` when set, else the first group that matched.
fn secret_of<'t>(pattern: &Pattern, caps: &regex::bytes::Captures<'t>) -> Option<regex::bytes::Match<'t>> {
    match pattern.secret_group {
        Some(group) => caps.get(group),
        None => caps.iter().skip(1).flatten().find(|m| !m.is_empty()),
    }
}

/// `span` widened to whole characters: the rules match bytes (`patterns::compile`).
fn chars(text: &str, span: Range<usize>) -> Range<usize> {
    let mut start = span.start.min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = span.end.min(text.len()).max(start);
    while !text.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

fn line_of(text: &str, span: Range<usize>) -> &str {
    let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[span.end..].find('\n').map_or(text.len(), |i| span.end + i);
    &text[start..end]
}

/// The rule's id for the `'static` set (the set lives as long as the program).
fn static_id(pattern: &'static Pattern) -> &'static str {
    pattern.id.as_str()
}

fn merge(mut hits: Vec<Hit>) -> Vec<Hit> {
    hits.sort_by_key(|h| (h.span.start, std::cmp::Reverse(h.span.end)));
    let mut merged: Vec<Hit> = Vec::with_capacity(hits.len());
    for hit in hits {
        match merged.last_mut() {
            Some(last) if hit.span.start < last.span.end => last.span.end = last.span.end.max(hit.span.end),
            _ => merged.push(hit),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Vec<String> {
        scan(text).into_iter().map(|h| h.rule.into_owned()).collect()
    }

    // Keys below are made up in each format (not real credentials), built from parts so the
    // repository's own secret scanning does not take them for leaks.
    fn made_up(prefix: &str, body: &str) -> String {
        format!("{prefix}{body}")
    }

    #[test]
    fn aws_access_key_ids_are_found_and_only_the_key_masked() {
        let key = made_up("AKIA", "QYLPMN5HHHFPZAM2");
        let text = format!("aws_access_key_id = {key}\nregion = eu-west-1");
        assert_eq!(rules(&text), ["aws-access-token"]);
        assert_eq!(
            redact(&text, Vec::new()).map(|(t, _)| t).as_deref(),
            Some("aws_access_key_id = ***\nregion = eu-west-1")
        );
    }

    #[test]
    fn the_aws_documentation_example_is_allowlisted_by_gitleaks() {
        // AWS's documented example key ends in EXAMPLE; gitleaks' rule allows `.+EXAMPLE$`.
        assert_eq!(rules("key AKIAIOSFODNN7EXAMPLE here"), Vec::<String>::new());
    }

    #[test]
    fn each_family_we_rely_on_is_found() {
        let cases = [
            ("github-pat", made_up("ghp_", "R8d2kQ7LmX4vN9pZ3tB6wY1cH5jF0sGaEeUu")),
            ("gitlab-pat", made_up("glpat-", "Xk3vR9mQ2pL7tN4wZ8bC")),
            ("slack-bot-token", made_up("xoxb-", "2837465019-4829104738201-Lk8Qm2Xv9Rt4Np7Wb3Zc6Hy1")),
            ("stripe-access-token", made_up("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc")),
            (
                "jwt",
                made_up(
                    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.",
                    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
                ),
            ),
            (
                "private-key",
                made_up(
                    "-----BEGIN RSA PRIVATE KEY-----\n",
                    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0\n-----END RSA PRIVATE KEY-----",
                ),
            ),
        ];
        for (rule, text) in cases {
            let found = rules(&format!("result: {text} end"));
            assert_eq!(found.first().map(String::as_str), Some(rule), "{rule}: {found:?}");
        }
    }

    #[test]
    fn ordinary_results_have_no_secret() {
        let text = "id 550e8400-e29b-41d4-a716-446655440000, sha256 \
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 at \
            /home/user/projects/toolport/src/main.rs; commit 83d9cd684c87d95d656c1458ef04895a7f1cbd8e; \
            {\"token_count\": 1234, \"api_version\": \"2024-01-01\", \"password\": \"${PASSWORD}\"}";
        assert_eq!(scan(text), []);
        assert_eq!(redact(text, Vec::new()), None);
    }

    #[test]
    fn a_match_inside_a_multi_byte_character_masks_whole_characters() {
        let text = "é€x";
        assert_eq!(chars(text, 1..3), 0..5);
        assert_eq!(chars(text, 2..5), 2..5);
        let key = made_up("AKIA", "QYLPMN5HHHFPZAM2");
        assert_eq!(
            redact(&format!("«{key}» — ключ"), Vec::new()).map(|(t, _)| t).as_deref(),
            Some("«***» — ключ")
        );
    }

    #[test]
    fn overlapping_hits_become_one_mask() {
        let hit = |rule: &'static str, span| Hit { rule: Cow::Borrowed(rule), span };
        let merged = merge(vec![hit("a", 2..10), hit("b", 5..12), hit("c", 12..14)]);
        assert_eq!(merged, [hit("a", 2..12), hit("c", 12..14)]);
    }
}
