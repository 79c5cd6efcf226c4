//! Configured secrets: the values toolport itself put into servers' definitions from `${VAR}`
//! (`config/expand.rs`), each known as its server's. A value of server B's in an argument to
//! server A is B's secret on its way to someone else: the call guard blocks it.
//!
//! Not every expanded value is a secret. What counts, and why:
//! - the variable went into `env`, `headers`, the `oauth` fields, `args`, or the userinfo or
//!   query of `url` (the parts `redact.rs` masks). A URL's host or path is an address, and
//!   passing it on is no leak.
//! - the value is at least [`MIN_LEN`] characters: a short value (`1`, `true`, `eu-west-1`)
//!   turns up in ordinary arguments and would block calls for nothing; no credential is that
//!   short.
//! - the value is not a path or a URL (`${HOME}/data`, `${BASE_URL}`): those are places, and
//!   a server that takes a path would otherwise be blocked from every file under the home.
//! - the variable is not one of the few the system sets for every process ([`NOT_SECRETS`]).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use super::scanner::Hit;
use crate::config::{ExpandedIn, ServerDef};

/// Shortest value treated as a secret.
pub const MIN_LEN: usize = 8;

/// Variables every shell sets, whose values (a user, a path, a locale) are not secrets.
const NOT_SECRETS: &[&str] = &[
    "HOME", "USER", "USERNAME", "LOGNAME", "PATH", "PWD", "OLDPWD", "SHELL", "TMPDIR", "TMP", "TEMP", "LANG",
    "LANGUAGE", "HOSTNAME", "TERM", "EDITOR", "VISUAL", "PAGER", "TZ",
];

/// One server's secret: whose it is, the variable's name (what messages show), its value.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfiguredSecret {
    /// The server whose definition took it.
    pub server: String,
    /// The variable's name.
    pub variable: String,
    value: String,
}

impl std::fmt::Debug for ConfiguredSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfiguredSecret")
            .field("server", &self.server)
            .field("variable", &self.variable)
            .field("value", &crate::config::MASK)
            .finish()
    }
}

/// Every configured secret of a set of servers.
#[derive(Debug, Default)]
pub struct SecretBook {
    secrets: Vec<ConfiguredSecret>,
    /// Argument names found to carry no secret ([`SecretBook::is_clean_key`]).
    clean_keys: Mutex<HashSet<String>>,
}

/// How many clean argument names a book remembers; later ones are scanned every time.
const CLEAN_KEYS: usize = 4096;
/// The longest argument name remembered: a long one is more likely text than a name.
const CLEAN_KEY_LEN: usize = 128;

impl SecretBook {
    /// The configured secrets of `defs`, their variables read through `lookup` (the host's
    /// environment in production), as connecting expands them.
    pub fn of<'a>(
        defs: impl IntoIterator<Item = &'a ServerDef>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Self {
        let mut secrets: Vec<ConfiguredSecret> = Vec::new();
        for def in defs {
            for var in def.expanded_variables(&lookup) {
                if !counts(var.field, &var.name, &var.value) {
                    continue;
                }
                let known = secrets.iter().any(|s| s.server == def.name && s.value == var.value);
                if !known {
                    secrets.push(ConfiguredSecret {
                        server: def.name.clone(),
                        variable: var.name,
                        value: var.value,
                    });
                }
            }
        }
        Self { secrets, clean_keys: Mutex::default() }
    }

    /// Whether the argument name `key` was found to carry no secret before. Whether a text
    /// holds one depends only on the text and this book (the scanner's rules are fixed), and
    /// a tool's calls repeat the same few names: each is scanned once, not on every call.
    pub fn is_clean_key(&self, key: &str) -> bool {
        self.clean_keys.lock().unwrap_or_else(PoisonError::into_inner).contains(key)
    }

    /// Remembers that the argument name `key` carries no secret (up to [`CLEAN_KEYS`] names).
    pub fn note_clean_key(&self, key: &str) {
        let mut clean = self.clean_keys.lock().unwrap_or_else(PoisonError::into_inner);
        if key.len() <= CLEAN_KEY_LEN && clean.len() < CLEAN_KEYS {
            clean.insert(key.to_string());
        }
    }

    /// Whether no server has a configured secret.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// A secret `text` carries that belongs to a server other than `to`, and is not also
    /// `to`'s own (the same token given to two servers is each one's).
    pub fn foreign_in(&self, text: &str, to: &str) -> Option<&ConfiguredSecret> {
        self.secrets.iter().find(|s| s.server != to && text.contains(&s.value) && !self.holds(to, &s.value))
    }

    /// `text` with every secret of a server other than `to` replaced by `***`, and the
    /// secrets replaced (`None` when there was none).
    pub fn mask_foreign(&self, text: &str, to: &str) -> Option<(String, Vec<&ConfiguredSecret>)> {
        let foreign: Vec<&ConfiguredSecret> = self
            .secrets
            .iter()
            .filter(|s| s.server != to && text.contains(&s.value) && !self.holds(to, &s.value))
            .collect();
        if foreign.is_empty() {
            return None;
        }
        let mut out = text.to_string();
        for s in &foreign {
            out = out.replace(&s.value, crate::config::MASK);
        }
        Some((out, foreign))
    }

    /// Where `text` carries any server's configured secret, as hits named `$VARIABLE`.
    pub fn hits(&self, text: &str) -> Vec<Hit> {
        let mut hits = Vec::new();
        for s in &self.secrets {
            for (at, _) in text.match_indices(s.value.as_str()) {
                hits.push(Hit { rule: Cow::Owned(format!("${}", s.variable)), span: at..at + s.value.len() });
            }
        }
        hits
    }

    fn holds(&self, server: &str, value: &str) -> bool {
        self.secrets.iter().any(|s| s.server == server && s.value == value)
    }
}

/// Whether a value expanded into `field` from the variable `name` counts as a secret.
fn counts(field: ExpandedIn, name: &str, value: &str) -> bool {
    let place = matches!(field, ExpandedIn::Url { secret_part: false });
    let path_or_url = value.starts_with(['/', '~', '.'])
        || value.contains("://")
        || value.get(1..3).is_some_and(|s| s == ":\\" || s == ":/");
    !place && value.chars().count() >= MIN_LEN && !path_or_url && !NOT_SECRETS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "B_TOKEN" => Some("b-token-0123456789".into()),
            "SHARED" => Some("shared-secret-value".into()),
            "SHORT" => Some("eu-west".into()),
            "HOME" => Some("/home/alice".into()),
            "DATA" => Some("/srv/data/store".into()),
            "HOST" => Some("api.example.com".into()),
            "USER" => Some("alexander-the-great".into()),
            _ => None,
        }
    }

    fn book() -> SecretBook {
        let a = ServerDef {
            name: "a".into(),
            env: vec![("S".into(), "${SHARED}".into()), ("D".into(), "${DATA}".into())],
            args: vec!["${HOME}/x".into(), "--region=${SHORT}".into()],
            ..ServerDef::default()
        };
        let b = ServerDef {
            name: "b".into(),
            url: Some("https://${HOST}/mcp?key=${B_TOKEN}".into()),
            headers: vec![
                ("Authorization".into(), "Bearer ${B_TOKEN}".into()),
                ("X".into(), "${SHARED}".into()),
            ],
            env: vec![("U".into(), "${USER}".into())],
            ..ServerDef::default()
        };
        SecretBook::of([&a, &b], env)
    }

    #[test]
    fn a_secret_of_another_server_is_foreign() {
        let book = book();
        let found = book.foreign_in("please send b-token-0123456789 along", "a");
        assert_eq!(found.map(|s| (s.server.as_str(), s.variable.as_str())), Some(("b", "B_TOKEN")));
        assert!(book.foreign_in("b-token-0123456789", "b").is_none(), "its own server");
        assert!(book.foreign_in("shared-secret-value", "a").is_none(), "configured for both");
        assert!(book.foreign_in("shared-secret-value", "c").is_some());
    }

    #[test]
    fn short_values_paths_places_and_system_variables_are_not_secrets() {
        let book = book();
        for text in ["eu-west", "/home/alice/x", "/srv/data/store", "api.example.com", "alexander-the-great"]
        {
            assert!(book.foreign_in(text, "c").is_none(), "{text}");
        }
    }

    #[test]
    fn masking_and_hits_name_the_variable_never_the_value() {
        let book = book();
        let masked = book.mask_foreign("x b-token-0123456789 y", "a");
        assert_eq!(masked.as_ref().map(|(t, _)| t.as_str()), Some("x *** y"));
        let hits = book.hits("b-token-0123456789");
        assert_eq!(hits.first().map(|h| h.rule.as_ref()), Some("$B_TOKEN"));
        assert!(!format!("{book:?}").contains("b-token"));
    }
}
