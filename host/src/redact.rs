//! Secrets out of text: the query values and the userinfo of every URL in a log line or a
//! message become `***`. A server URL may carry an expanded `${TOKEN}` (`?token=…`, or
//! `https://user:pass@host`), and it reaches text through paths we do not word ourselves:
//! rmcp's and reqwest's errors and log lines quote the whole URL. So the rule is applied where
//! text leaves the process (the log writer, the rows, the printed errors), not at each source.
//!
//! A scanner rather than a regex: the rule is "after `://`, up to a delimiter", it cannot fail
//! to build, and it never allocates for the common line that holds no URL.

use std::borrow::Cow;

/// What a redacted value reads as (the same mask as the config's secrets).
const MASK: &str = "***";

/// Characters that end a URL inside prose: whitespace, quotes and brackets (reqwest writes
/// `error sending request for url (http://…)`).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}')
}

/// `text` with the userinfo and every query and fragment value of each URL in it masked:
/// `https://u:p@h/mcp?token=abc&x` → `https://***@h/mcp?token=***&***`. Scheme, host, port
/// and path stay, so a message still says where it went.
pub fn redact_urls(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        out.push_str(before);
        let end = after.find(ends_url).unwrap_or(after.len());
        redact_after_scheme(&after[..end], &mut out);
        rest = &after[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// One URL from just after its `://`: authority, path, query, fragment.
fn redact_after_scheme(url: &str, out: &mut String) {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, tail) = url.split_at(authority_end);
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(MASK);
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let path_end = tail.find(['?', '#']).unwrap_or(tail.len());
    out.push_str(&tail[..path_end]);
    let mut rest = &tail[path_end..];
    // `?query` then `#fragment` (OAuth puts tokens in fragments too), each a list of pairs.
    while let Some(mark) = rest.chars().next() {
        let body = &rest[1..];
        let part_end = if mark == '?' { body.find('#').unwrap_or(body.len()) } else { body.len() };
        out.push(mark);
        redact_pairs(&body[..part_end], out);
        rest = &body[part_end..];
    }
}

/// `a=1&b&c=3` → `a=***&***&c=***`: names kept (they say what was sent), values masked.
fn redact_pairs(pairs: &str, out: &mut String) {
    for (i, pair) in pairs.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((name, _)) => {
                out.push_str(name);
                out.push('=');
                out.push_str(MASK);
            }
            None if pair.is_empty() => {}
            None => out.push_str(MASK),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_and_userinfo_are_masked() {
        assert_eq!(
            redact_urls("error sending request for url (http://127.0.0.1:1/mcp?token=s3cret&v=2)"),
            "error sending request for url (http://127.0.0.1:1/mcp?token=***&v=***)"
        );
        assert_eq!(redact_urls("https://user:pw@h.example/x"), "https://***@h.example/x");
        assert_eq!(redact_urls("ws://h/p?bare#access_token=t&k"), "ws://h/p?***#access_token=***&***");
        assert_eq!(
            redact_urls("a http://h/?a=1 and https://u@h?b=2 end"),
            "a http://h/?a=*** and https://***@h?b=*** end"
        );
    }

    #[test]
    fn text_without_secrets_is_untouched() {
        for t in ["no url here", "http://h:80/mcp", "tcp://127.0.0.1:9", "path a/b?c", "x://"] {
            assert_eq!(redact_urls(t), t);
        }
    }
}
