//! Paths checked against the allowed prefix, lexically: `.` and `..` are resolved in the text,
//! the way the server would walk them, so `/tmp/../etc/passwd` is `/etc/passwd` and refused.
//!
//! Lexical on purpose: the guard runs in a sandbox with no view of the server's files, so it
//! cannot follow a symbolic link. A link inside the prefix that points out of it is the
//! server's own sandbox's to stop (`grants.dirs` for a `wasm` server, the native sandbox for a
//! process).

use std::env::VarError;

/// The prefix when `GUARD_PATH_PREFIX` is unset or empty.
pub const DEFAULT_PREFIX: &str = "/tmp";

/// The allowed prefix, normalised, from the value of `GUARD_PATH_PREFIX`; `Err` (the reason
/// every path is refused) when it is set to something that is not an absolute path.
pub fn prefix_from(variable: Result<String, VarError>) -> Result<String, String> {
    let raw = match variable {
        Ok(value) if !value.is_empty() => value,
        Ok(_) | Err(VarError::NotPresent) => DEFAULT_PREFIX.to_string(),
        Err(VarError::NotUnicode(_)) => return Err("GUARD_PATH_PREFIX is not valid UTF-8".into()),
    };
    normalize(&raw).ok_or_else(|| format!("GUARD_PATH_PREFIX must be an absolute path, not {raw:?}"))
}

/// `path` with empty and `.` segments dropped and each `..` taking off the segment before it
/// (at the root it stays at the root, as the kernel does); `None` when `path` is not absolute.
pub fn normalize(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Why `path` may not be used, if it may not: not absolute, holding a NUL byte (a C server
/// would cut it there), or outside `prefix` once normalised. `what` names it in the reason,
/// which never repeats the path itself.
pub fn refusal(path: &str, what: &str, prefix: &Result<String, String>) -> Option<String> {
    let prefix = match prefix {
        Ok(prefix) => prefix,
        Err(reason) => return Some(format!("{what} cannot be checked: {reason}")),
    };
    if path.contains('\0') {
        return Some(format!("{what} holds a NUL byte"));
    }
    let Some(resolved) = normalize(path) else {
        return Some(format!("{what} is not an absolute path, so it cannot be checked against {prefix}"));
    };
    let inside = prefix == "/"
        || resolved == *prefix
        || resolved.strip_prefix(prefix.as_str()).is_some_and(|rest| rest.starts_with('/'));
    (!inside).then(|| format!("{what} is outside {prefix} (GUARD_PATH_PREFIX), with `..` resolved"))
}

/// The local path a `file:` URI names: `Ok(None)` for any other scheme, `Err` for a `file:` URI
/// that names no local path (another host, broken percent-encoding). The query and fragment are
/// dropped and `%XX` decoded, so `file:///tmp/%2e%2e/etc` is checked as `/tmp/../etc`.
pub fn file_uri_path(uri: &str) -> Result<Option<String>, String> {
    let Some(rest) = uri.get(..5).filter(|s| s.eq_ignore_ascii_case("file:")).map(|_| &uri[5..]) else {
        return Ok(None);
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let slash = authority_and_path.find('/').unwrap_or(authority_and_path.len());
            let (host, path) = authority_and_path.split_at(slash);
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err("the file URI names another host".into());
            }
            path
        }
        None => rest,
    };
    percent_decode(path).map(Some)
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bad = || "the file URI has a broken %-escape".to_string();
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits exactly: `from_str_radix` alone would take `%+f`.
            let hex = text.get(i + 1..i + 3).filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
            out.push(hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or_else(bad)?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the file URI's path is not UTF-8 once decoded".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> Result<String, String> {
        Ok("/tmp".into())
    }

    #[test]
    fn dots_are_resolved_lexically() {
        assert_eq!(normalize("/tmp/../etc/passwd").as_deref(), Some("/etc/passwd"));
        assert_eq!(normalize("/tmp/./a//b/").as_deref(), Some("/tmp/a/b"));
        assert_eq!(normalize("/../../tmp").as_deref(), Some("/tmp"));
        assert_eq!(normalize("tmp/a"), None);
        assert_eq!(normalize(""), None);
    }

    #[test]
    fn paths_inside_the_prefix_pass_and_others_are_refused() {
        for path in ["/tmp", "/tmp/", "/tmp/a/b.txt", "/tmp/a/../b", "/tmp/./x"] {
            assert_eq!(refusal(path, "argument `path`", &tmp()), None, "{path}");
        }
        for path in ["/tmp/../etc/passwd", "/etc/passwd", "/tmpfoo/x", "/", "/tmp/a/../../etc"] {
            assert_eq!(
                refusal(path, "argument `path`", &tmp()).as_deref(),
                Some("argument `path` is outside /tmp (GUARD_PATH_PREFIX), with `..` resolved"),
                "{path}"
            );
        }
        assert_eq!(
            refusal("etc/passwd", "argument `path`", &tmp()).as_deref(),
            Some("argument `path` is not an absolute path, so it cannot be checked against /tmp")
        );
        assert_eq!(refusal("/tmp/a\0/../../etc", "p", &tmp()).as_deref(), Some("p holds a NUL byte"));
        assert_eq!(refusal("/etc", "p", &Ok("/".into())), None);
    }

    #[test]
    fn the_prefix_comes_from_the_variable_or_defaults_to_tmp() {
        assert_eq!(prefix_from(Err(VarError::NotPresent)), Ok("/tmp".into()));
        assert_eq!(prefix_from(Ok(String::new())), Ok("/tmp".into()));
        assert_eq!(prefix_from(Ok("/srv/data/".into())), Ok("/srv/data".into()));
        assert_eq!(prefix_from(Ok("/srv/data/../x".into())), Ok("/srv/x".into()));
        let relative = prefix_from(Ok("data".into()));
        assert_eq!(relative, Err(r#"GUARD_PATH_PREFIX must be an absolute path, not "data""#.into()));
        assert_eq!(
            refusal("/tmp/a", "argument `path`", &relative).as_deref(),
            Some(
                r#"argument `path` cannot be checked: GUARD_PATH_PREFIX must be an absolute path, not "data""#
            )
        );
    }

    #[test]
    fn file_uris_name_their_local_path() {
        assert_eq!(file_uri_path("file:///tmp/a.txt"), Ok(Some("/tmp/a.txt".into())));
        assert_eq!(file_uri_path("FILE://localhost/tmp/a?x=1#f"), Ok(Some("/tmp/a".into())));
        assert_eq!(file_uri_path("file:/etc/passwd"), Ok(Some("/etc/passwd".into())));
        assert_eq!(file_uri_path("file:///tmp/%2e%2e/etc/passwd"), Ok(Some("/tmp/../etc/passwd".into())));
        assert_eq!(file_uri_path("https://example.com/a"), Ok(None));
        assert_eq!(file_uri_path("mem://x"), Ok(None));
        assert_eq!(file_uri_path("fi"), Ok(None));
        assert!(file_uri_path("file://evil.example/tmp/a").is_err());
        assert!(file_uri_path("file:///tmp/%zz").is_err());
        assert!(file_uri_path("file:///tmp/%2").is_err());
        assert!(file_uri_path("file:///tmp/%+f").is_err());
        assert!(file_uri_path("file:///tmp/%ff").is_err());
    }
}
