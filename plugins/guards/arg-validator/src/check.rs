//! What of a request is checked: a call's arguments at any depth (`query` and `sql` for SQL,
//! `path` and `paths` for paths, names matched in any case) and a read's `file:` URI. Each
//! refusal names the argument by where it sits (`options.path`, `paths[2]`), never its value:
//! the reason reaches the model, the person and the audit trail.

use serde_json::Value;

use crate::paths::{file_uri_path, refusal};
use crate::sql::destructive_keyword;

/// Why a call with these `arguments` is refused, if it is: the first offending argument in
/// document order. `prefix` is the allowed prefix or why there is none.
pub fn call(arguments: &Value, prefix: &Result<String, String>) -> Option<String> {
    walk(arguments, "", prefix)
}

/// Why a read of `uri` is refused, if it is: a `file:` URI outside the prefix or naming no local
/// path. Other schemes are the server's business.
pub fn read(uri: &str, prefix: &Result<String, String>) -> Option<String> {
    match file_uri_path(uri) {
        Ok(Some(path)) => refusal(&path, "the file URI", prefix),
        Ok(None) => None,
        Err(reason) => Some(reason),
    }
}

fn walk(value: &Value, at: &str, prefix: &Result<String, String>) -> Option<String> {
    match value {
        Value::Object(map) => map.iter().find_map(|(key, value)| {
            let here = if at.is_empty() { key.clone() } else { format!("{at}.{key}") };
            argument(key, value, &here, prefix).or_else(|| walk(value, &here, prefix))
        }),
        Value::Array(items) => {
            items.iter().enumerate().find_map(|(i, item)| walk(item, &format!("{at}[{i}]"), prefix))
        }
        _ => None,
    }
}

/// The rules for one named argument, `here` its place in the arguments.
fn argument(key: &str, value: &Value, here: &str, prefix: &Result<String, String>) -> Option<String> {
    let named = |names: [&str; 2]| names.iter().any(|n| key.eq_ignore_ascii_case(n));
    if named(["query", "sql"]) {
        let word = destructive_keyword(value.as_str()?)?;
        return Some(format!(
            "argument `{here}` contains the SQL keyword {word}; dropping or truncating tables is refused"
        ));
    }
    if named(["path", "paths"]) {
        return match value {
            Value::String(path) => refusal(path, &format!("argument `{here}`"), prefix),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| refusal(item.as_str()?, &format!("argument `{here}[{i}]`"), prefix)),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tmp() -> Result<String, String> {
        Ok("/tmp".into())
    }

    #[test]
    fn destructive_sql_is_refused_at_any_depth() {
        assert_eq!(
            call(&json!({"query": "DROP TABLE users"}), &tmp()).as_deref(),
            Some("argument `query` contains the SQL keyword DROP; dropping or truncating tables is refused")
        );
        let nested = json!({"batch": [{"SQL": "truncate logs"}]});
        assert_eq!(
            call(&nested, &tmp()).as_deref(),
            Some(
                "argument `batch[0].SQL` contains the SQL keyword TRUNCATE; dropping or truncating tables is refused"
            )
        );
        assert_eq!(call(&json!({"query": "select dropdown from ui", "sql": 5}), &tmp()), None);
        assert_eq!(call(&json!({"note": "DROP TABLE users"}), &tmp()), None, "only query and sql are SQL");
    }

    #[test]
    fn paths_outside_the_prefix_are_refused() {
        assert_eq!(call(&json!({"path": "/tmp/a.txt", "paths": ["/tmp/b", "/tmp/c/../d"]}), &tmp()), None);
        assert_eq!(
            call(&json!({"path": "/tmp/../etc/passwd"}), &tmp()).as_deref(),
            Some("argument `path` is outside /tmp (GUARD_PATH_PREFIX), with `..` resolved")
        );
        assert_eq!(
            call(&json!({"options": {"paths": ["/tmp/ok", 7, "/etc"]}}), &tmp()).as_deref(),
            Some("argument `options.paths[2]` is outside /tmp (GUARD_PATH_PREFIX), with `..` resolved")
        );
        assert_eq!(call(&json!({"source": "/etc/passwd", "path": {"nested": true}}), &tmp()), None);
    }

    #[test]
    fn arguments_of_any_shape_are_answered() {
        for arguments in [json!(null), json!(5), json!("DROP TABLE t"), json!([]), json!({})] {
            assert_eq!(call(&arguments, &tmp()), None);
        }
    }

    #[test]
    fn file_reads_outside_the_prefix_are_refused() {
        assert_eq!(read("file:///tmp/notes.txt", &tmp()), None);
        assert_eq!(read("mem://anything/../../etc", &tmp()), None);
        assert_eq!(
            read("file:///tmp/%2E%2E/etc/passwd", &tmp()).as_deref(),
            Some("the file URI is outside /tmp (GUARD_PATH_PREFIX), with `..` resolved")
        );
        assert_eq!(
            read("file://example.com/tmp/a", &tmp()).as_deref(),
            Some("the file URI names another host")
        );
    }
}
