//! Secrets anywhere in a server's JSON (issue 44 item 9): a result's every block — a link's
//! URI, an embedded resource's base64 `blob` — every string *and every key* of
//! `structuredContent` and `_meta`, a resource's contents, a prompt's messages, a JSON-RPC
//! error's message and data. A text block was never the only way a key reaches a model: the
//! client passes all of it on.
//!
//! Base64 is read through: a `blob` (and an image's or audio's `data`) is decoded, and when
//! its bytes are UTF-8 text it is scanned as text and, once masked, encoded again. Bytes that
//! are not UTF-8 are media, not text, and are left as they are (a PNG is not a key). A key
//! that is a secret becomes `***` (`***#2`, … when two would collide, so no value is lost).

use std::borrow::Cow;
use std::collections::HashSet;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::SecretBook;
use super::scanner::redact;

/// The rules of every secret a walk found, one per hit, in the order met.
pub type Found = Vec<Cow<'static, str>>;

/// Every secret in `value` (the scanner's and `book`'s), found, and masked with `***` when
/// `mask` (else `value` is left as it is, for a caller that withholds it whole).
pub fn redact_json(value: &mut Value, book: &SecretBook, mask: bool) -> Found {
    let mut found = Found::new();
    walk(value, book, mask, &mut found);
    found
}

/// [`redact_json`] of a JSON object (a result's `_meta`, call arguments).
pub fn redact_object(map: &mut Map<String, Value>, book: &SecretBook, mask: bool) -> Found {
    let mut found = Found::new();
    object(map, book, mask, &mut found);
    found
}

/// [`redact_json`] of one text (a server's error message).
pub fn redact_string(text: &mut String, book: &SecretBook, mask: bool) -> Found {
    let mut found = Found::new();
    string(text, book, mask, &mut found);
    found
}

/// `map`'s keys with every secret in them masked, at any depth; the values are not scanned
/// (the audit log's shape of the arguments shows keys, never values).
pub fn mask_keys(map: &mut Map<String, Value>, book: &SecretBook) -> Found {
    let mut found = keys(map, book, true);
    for value in map.values_mut() {
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Value::Object(inner) => {
                    found.extend(keys(inner, book, true));
                    stack.extend(inner.values_mut());
                }
                Value::Array(items) => stack.extend(items.iter_mut()),
                _ => {}
            }
        }
    }
    found
}

// Recursion is bounded: every `Value` here was parsed by serde_json, which stops at 128 levels.
fn walk(value: &mut Value, book: &SecretBook, mask: bool, found: &mut Found) {
    match value {
        Value::String(text) => string(text, book, mask, found),
        Value::Array(items) => items.iter_mut().for_each(|item| walk(item, book, mask, found)),
        Value::Object(map) => object(map, book, mask, found),
        _ => {}
    }
}

fn object(map: &mut Map<String, Value>, book: &SecretBook, mask: bool, found: &mut Found) {
    found.extend(keys(map, book, mask));
    let media = map.get("type").and_then(Value::as_str).is_some_and(|t| t == "image" || t == "audio");
    for (key, value) in map.iter_mut() {
        let base64 = key == "blob" || (media && key == "data");
        match value {
            Value::String(text) if base64 => encoded(text, book, mask, found),
            _ => walk(value, book, mask, found),
        }
    }
}

fn string(text: &mut String, book: &SecretBook, mask: bool, found: &mut Found) {
    if let Some((clean, rules)) = redact(text, book.hits(text)) {
        found.extend(rules);
        if mask {
            *text = clean;
        }
    }
}

/// A base64 field: its text scanned when it decodes to UTF-8, left when it decodes to other
/// bytes, and scanned as it is when it is not base64 at all (then it is text).
fn encoded(text: &mut String, book: &SecretBook, mask: bool, found: &mut Found) {
    let engine = &base64::engine::general_purpose::STANDARD;
    let Ok(bytes) = engine.decode(text.trim()) else {
        return string(text, book, mask, found);
    };
    let Ok(mut decoded) = String::from_utf8(bytes) else { return };
    let before = found.len();
    string(&mut decoded, book, mask, found);
    if mask && found.len() > before {
        *text = engine.encode(decoded);
    }
}

/// Masks the keys of `map` that carry a secret (when `mask`), keeping the order and every
/// entry; the rules found.
fn keys(map: &mut Map<String, Value>, book: &SecretBook, mask: bool) -> Found {
    let mut found = Found::new();
    let cleaned: Vec<Option<String>> = map
        .keys()
        .map(|key| {
            if book.is_clean_key(key) {
                return None;
            }
            let masked = redact(key, book.hits(key));
            if masked.is_none() {
                book.note_clean_key(key);
            }
            masked.map(|(clean, rules)| {
                found.extend(rules);
                clean
            })
        })
        .collect();
    if found.is_empty() || !mask {
        return found;
    }
    // A masked key must not take the name of a key that stays (`***` itself, say).
    let mut taken: HashSet<String> =
        map.keys().zip(&cleaned).filter(|(_, clean)| clean.is_none()).map(|(key, _)| key.clone()).collect();
    let entries = std::mem::take(map);
    for ((key, value), clean) in entries.into_iter().zip(cleaned) {
        let key = match clean {
            Some(clean) => {
                let name = unique(clean, &taken);
                taken.insert(name.clone());
                name
            }
            None => key,
        };
        map.insert(key, value);
    }
    found
}

/// `key`, or `key#2`, `key#3`, … the first not `taken`.
fn unique(key: String, taken: &HashSet<String>) -> String {
    if !taken.contains(&key) {
        return key;
    }
    (2..).map(|n| format!("{key}#{n}")).find(|k| !taken.contains(k)).unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> String {
        format!("{}{}", "AKIA", "QYLPMN5HHHFPZAM2")
    }

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn links_keys_meta_and_text_blobs_are_masked() {
        let key = key();
        let book = SecretBook::default();
        let mut value = json!({
            "content": [
                {"type": "resource_link", "uri": format!("leak://doc/{key}"), "name": "doc"},
                {"type": "resource", "resource": {"uri": "leak://b", "mimeType": "text/plain", "blob": b64(&format!("k={key}"))}},
            ],
            "structuredContent": {key.clone(): 1, "***": 2},
            "_meta": {"token": key.clone()},
        });
        let found = redact_json(&mut value, &book, true);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(value["content"][0]["uri"], json!("leak://doc/***"));
        assert_eq!(value["content"][1]["resource"]["blob"], json!(b64("k=***")));
        assert_eq!(value["structuredContent"], json!({"***#2": 1, "***": 2}));
        assert_eq!(value["_meta"], json!({"token": "***"}));
    }

    #[test]
    fn media_and_found_but_unmasked_values_are_left() {
        let book = SecretBook::default();
        let png = base64::engine::general_purpose::STANDARD.encode([0x89, b'P', b'N', b'G', 0xff, 0xfe]);
        let mut image = json!({"type": "image", "data": png, "mimeType": "image/png"});
        let before = image.clone();
        assert!(redact_json(&mut image, &book, true).is_empty());
        assert_eq!(image, before);
        let mut meta = json!({"k": key()});
        let before = meta.clone();
        assert_eq!(redact_json(&mut meta, &book, false).len(), 1);
        assert_eq!(meta, before, "found, not masked");
    }

    /// A clean name is remembered, so the next call's is not scanned again; a name with a
    /// secret never is, and is masked every time.
    #[test]
    fn clean_keys_are_remembered_and_secret_ones_masked_every_time() {
        let book = SecretBook::default();
        for _ in 0..2 {
            let mut args = Map::new();
            args.insert("query".into(), json!(1));
            args.insert(key(), json!(2));
            let found = mask_keys(&mut args, &book);
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(args.keys().collect::<Vec<_>>(), ["query", "***"]);
        }
        assert!(book.is_clean_key("query"));
        assert!(!book.is_clean_key(&key()));
    }

    #[test]
    fn only_keys_are_masked_for_the_shape() {
        let book = SecretBook::default();
        let mut args = Map::new();
        args.insert(key(), json!({ "inner": [{ key(): key() }] }));
        assert_eq!(mask_keys(&mut args, &book).len(), 2);
        assert_eq!(Value::Object(args), json!({"***": {"inner": [{"***": key()}]}}));
    }
}
