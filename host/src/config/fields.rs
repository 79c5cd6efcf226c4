//! Typed reads of a JSON object's fields, shared by both config files. Absent and `null` both
//! mean "not set"; a wrong type is an error naming the owner and the field as the user wrote
//! it (`server "x": "args" must be an array of strings`), so the message leads to the line.

use serde_json::{Map, Value};

use crate::config::ConfigError;

/// Whether the strings of an array are trimmed. Server `args` are kept exactly as written
/// (no trimming, no de-duplication); names and grants are trimmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trim {
    Yes,
    No,
}

/// One JSON object and how to name its fields in messages.
pub(super) struct Fields<'a> {
    obj: &'a Map<String, Value>,
    /// Put before every message: `server "x": `, `plugin "p": `, or nothing.
    owner: &'a str,
    /// Put before a key inside a nested object: `grants.` for `grants.hosts`.
    prefix: String,
}

impl<'a> Fields<'a> {
    pub fn new(obj: &'a Map<String, Value>, owner: &'a str) -> Self {
        Self { obj, owner, prefix: String::new() }
    }

    /// `<owner>"<field>" must be <what>`.
    pub fn err(&self, key: &str, what: &str) -> ConfigError {
        self.says(key, &format!("must be {what}"))
    }

    /// `<owner>"<field>" <text>`: a message about a field whose type is right but whose value
    /// is not (a glob that does not compile).
    pub fn says(&self, key: &str, text: &str) -> ConfigError {
        ConfigError(format!("{}\"{}{key}\" {text}", self.owner, self.prefix))
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    /// The value of a field whose shape is the caller's to check (one of several types), `None`
    /// when absent or `null`.
    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.get(key)
    }

    /// A trimmed string; absent and blank are both `None`.
    pub fn string(&self, key: &str) -> Result<Option<String>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
            Some(_) => Err(self.err(key, "a string")),
        }
    }

    /// `true` or `false`, `None` when absent.
    pub fn boolean(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.err(key, "true or false")),
        }
    }

    /// An array of strings, `None` when absent.
    pub fn strings(&self, key: &str, trim: Trim) -> Result<Option<Vec<String>>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    let s = v.as_str().ok_or_else(|| self.err(key, "an array of strings"))?;
                    Ok(if trim == Trim::Yes { s.trim() } else { s }.to_string())
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(self.err(key, "an array of strings")),
        }
    }

    /// An object of strings as pairs in file order: keys and values trimmed, blank keys
    /// dropped, and of two keys that trim alike the later wins, like a re-assignment.
    pub fn string_map(&self, key: &str) -> Result<Vec<(String, String)>, ConfigError> {
        let Some(value) = self.get(key) else { return Ok(Vec::new()) };
        let m = value.as_object().ok_or_else(|| self.err(key, "an object of strings"))?;
        let mut out: Vec<(String, String)> = Vec::new();
        for (k, v) in m {
            let v = v.as_str().ok_or_else(|| self.err(key, "an object of strings"))?;
            let k = k.trim();
            if !k.is_empty() {
                out.retain(|(existing, _)| existing != k);
                out.push((k.to_string(), v.trim().to_string()));
            }
        }
        Ok(out)
    }

    /// A nested object whose fields are named `<key>.<field>` in messages.
    pub fn object(&self, key: &str) -> Result<Option<Fields<'a>>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(obj)) => {
                Ok(Some(Fields { obj, owner: self.owner, prefix: format!("{}{key}.", self.prefix) }))
            }
            Some(_) => Err(self.err(key, "an object")),
        }
    }

    /// An array, `None` when absent.
    pub fn array(&self, key: &str) -> Result<Option<&'a Vec<Value>>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => Ok(Some(items)),
            Some(_) => Err(self.err(key, "an array")),
        }
    }

    /// What messages put before every field name (`server "x": `).
    pub fn owner(&self) -> &str {
        self.owner
    }

    /// A positive integer; `unit` is added to the message (` (milliseconds)`).
    pub fn positive(&self, key: &str, unit: &str) -> Result<Option<u64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n > 0)
                .map(Some)
                .ok_or_else(|| self.err(key, &format!("a positive integer{unit}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn messages_name_owner_and_nested_field() {
        let v = json!({"grants": {"hosts": "x"}, "n": 0, "s": 3, "m": {"k": 1}});
        let obj = v.as_object().cloned().unwrap_or_default();
        let f = Fields::new(&obj, "plugin \"p\": ");
        let grants = f.object("grants").ok().flatten();
        let err = grants.map(|g| g.strings("hosts", Trim::Yes).err());
        assert_eq!(err, Some(Some("plugin \"p\": \"grants.hosts\" must be an array of strings".into())));
        assert_eq!(
            f.positive("n", "").err().as_deref(),
            Some("plugin \"p\": \"n\" must be a positive integer")
        );
        assert_eq!(f.string("s").err().as_deref(), Some("plugin \"p\": \"s\" must be a string"));
        assert_eq!(
            f.string_map("m").err().as_deref(),
            Some("plugin \"p\": \"m\" must be an object of strings")
        );
        assert_eq!(f.string("absent"), Ok(None));
        assert_eq!(f.boolean("s").err().as_deref(), Some("plugin \"p\": \"s\" must be true or false"));
        assert_eq!(f.boolean("absent"), Ok(None));
    }

    #[test]
    fn trimming_follows_the_rule_asked_for() {
        let v = json!({"a": [" x ", "y"], "m": {" k ": " v ", "k": "w", " ": "z"}});
        let obj = v.as_object().cloned().unwrap_or_default();
        let f = Fields::new(&obj, "");
        assert_eq!(f.strings("a", Trim::No), Ok(Some(vec![" x ".to_string(), "y".to_string()])));
        assert_eq!(f.strings("a", Trim::Yes), Ok(Some(vec!["x".to_string(), "y".to_string()])));
        assert_eq!(f.string_map("m"), Ok(vec![("k".to_string(), "w".to_string())]));
    }
}
