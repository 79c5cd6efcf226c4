//! Secrets out of text: the query values and the userinfo of every URL in a log line or a
//! message become `***`. A server URL may carry an expanded `${TOKEN}` (`?token=…`, or
//! `https://user:pass@host`), and it reaches text through paths we do not word ourselves:
//! rmcp's and reqwest's errors and log lines quote the whole URL. So the rule is applied where
//! text leaves the process (the log writer, the rows, the printed errors), not at each source.
//! The log writer also masks the one secret a library logs outside a URL: rmcp's debug line
//! with the authorization code ([`redact_log`]).
//!
//! A scanner rather than a regex: the rule is "after `://`, up to a delimiter", it cannot fail
//! to build, and it never allocates for the common line that holds no URL.

use std::borrow::Cow;

/// What a redacted value reads as (the same mask as the config's secrets).
const MASK: &str = "***";

/// The words rmcp writes just before the authorization code at debug level, quoted as `{:?}`
/// (rmcp 3.11, `AuthorizationManager::exchange_code_for_token_with_issuer`: `start exchange
/// code for token: "<code>"`). Not a URL, so [`redact_urls`] cannot see it; and a code, though
/// single-use and bound to the PKCE verifier, is the sign-in until it is exchanged. If rmcp
/// rewords the line, `faults::sign_in`'s `-vvv` test fails.
const CODE_LOGGED_AFTER: &str = "exchange code for token: ";

/// Characters that end a URL inside prose: whitespace, quotes and brackets (reqwest writes
/// `error sending request for url (http://…)`).
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>' | '(' | ')' | '[' | ']' | '{' | '}')
}

/// `text` with the userinfo and every query and fragment value of each URL in it masked:
/// `https://u:p@h/mcp?token=abc&x` → `https://***@h/mcp?token=***&***`. Scheme, host, port
/// and path stay, so a message still says where it went.
pub fn redact_urls(text: &str) -> Cow<'_, str> {
    each_url(text, redact_after_scheme)
}

/// `text` with the userinfo of each URL in it masked, the rest as it is:
/// `slow://admin:pw@doc?q=1` → `slow://***@doc?q=1`. For a place that keeps a URL's query on
/// purpose (the audit log under `audit.values`) but never a password.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    each_url(text, |url, out| {
        let (authority, tail) = url.split_at(url.find(['/', '?', '#']).unwrap_or(url.len()));
        redact_authority(authority, out);
        out.push_str(tail);
    })
}

/// `text` with each URL in it, from just after its `://`, written by `redact`.
fn each_url(text: &str, redact: impl Fn(&str, &mut String)) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (before, after) = rest.split_at(i + 3);
        out.push_str(before);
        let end = after.find(ends_url).unwrap_or(after.len());
        redact(&after[..end], &mut out);
        rest = &after[end..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A log line made safe to write: [`redact_urls`], and the authorization code a library logs
/// ([`CODE_LOGGED_AFTER`]) masked. The binary's log writer applies it to every line, whoever
/// wrote it.
pub fn redact_log(text: &str) -> Cow<'_, str> {
    let text = redact_urls(text);
    if !text.contains(CODE_LOGGED_AFTER) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest: &str = &text;
    while let Some(at) = rest.find(CODE_LOGGED_AFTER) {
        let (before, after) = rest.split_at(at + CODE_LOGGED_AFTER.len());
        out.push_str(before);
        out.push_str(if after.starts_with('"') { "\"***\"" } else { MASK });
        rest = &after[secret_end(after)..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Where the value at the start of `text` ends: after its closing quote for a `{:?}` string
/// (`\"` and `\\` inside it skipped), else at the first whitespace.
fn secret_end(text: &str) -> usize {
    let Some(quoted) = text.strip_prefix('"') else {
        return text.find(char::is_whitespace).unwrap_or(text.len());
    };
    let mut escaped = false;
    for (i, c) in quoted.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return 1 + i + 1,
            _ => {}
        }
    }
    text.len()
}

/// One URL from just after its `://`: authority, path, query, fragment.
fn redact_after_scheme(url: &str, out: &mut String) {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, tail) = url.split_at(authority_end);
    redact_authority(authority, out);
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

/// `user:pass@host:port` → `***@host:port`; an authority without userinfo as it is.
fn redact_authority(authority: &str, out: &mut String) {
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(MASK);
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
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
    fn userinfo_alone_is_masked_where_the_query_stays() {
        assert_eq!(redact_userinfo("slow://admin:hunter2@doc/x?q=1#f"), "slow://***@doc/x?q=1#f");
        assert_eq!(redact_userinfo("notes://find?q=a@b"), "notes://find?q=a@b");
        assert_eq!(redact_userinfo("no url"), "no url");
    }

    #[test]
    fn the_authorization_code_a_library_logs_is_masked() {
        let line = "2026-01-01T00:00:00Z DEBUG rmcp::transport::auth: start exchange code for token: \"c0d\\\"e-42\" at http://h/cb?code=x\n";
        assert_eq!(
            redact_log(line),
            "2026-01-01T00:00:00Z DEBUG rmcp::transport::auth: start exchange code for token: \"***\" at http://h/cb?code=***\n"
        );
        assert_eq!(redact_log("exchange code for token: bare rest"), "exchange code for token: *** rest");
        assert_eq!(redact_log("exchange code for token: \"open"), "exchange code for token: \"***\"");
        assert_eq!(redact_log("a plain line, code 7"), "a plain line, code 7");
    }

    #[test]
    fn text_without_secrets_is_untouched() {
        for t in ["no url here", "http://h:80/mcp", "tcp://127.0.0.1:9", "path a/b?c", "x://"] {
            assert_eq!(redact_urls(t), t);
        }
    }
}
