//! `${VAR}` and `${VAR:-default}` in `env`, `headers`, `url`, `args` and the `oauth` secrets, expanded from the
//! host environment when connecting, never when writing (so secrets stay out of the store).

use super::error::ConfigError;
use super::server_def::ServerDef;
use super::store_keys::{self as key, oauth as oauth_key};

/// Expands `${VAR}` and `${VAR:-default}` in `text`.
///
/// - Text without `${` comes back unchanged (a lone `$` is just a dollar sign).
/// - `${VAR:-default}` uses the default when `VAR` is unset *or empty*, as a shell does.
/// - `${VAR}` with `VAR` unset is an error naming the variable: connecting with a silently empty
///   token gives a confusing 401 far from the cause. A set-but-empty `VAR` expands to "".
/// - `$${` is an escape for a literal `${`.
/// - Errors never contain `text` itself, which may be a secret.
pub fn expand_vars(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, ConfigError> {
    expand_visiting(text, lookup, |_, _, _| {})
}

/// [`expand_vars`], telling `visit` each variable it put in: its name, the value put in, and
/// where its `${…}` stood in `text` (a byte range), so a caller can tell which part of a URL
/// it landed in. A default used in place of an unset variable is not a variable's value and
/// is not visited.
fn expand_visiting(
    text: &str,
    lookup: impl Fn(&str) -> Option<String>,
    mut visit: impl FnMut(&str, &str, std::ops::Range<usize>),
) -> Result<String, ConfigError> {
    if !text.contains("${") {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        if rest[..i].ends_with('$') {
            // `$${`: drop the escaping dollar, keep `${` literally.
            out.push_str(&rest[..i - 1]);
            out.push_str("${");
            rest = &rest[i + 2..];
            continue;
        }
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let end = after.find('}').ok_or_else(|| ConfigError("unterminated \"${\" (missing \"}\")".into()))?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            // Never the text itself: `${…}` may hold a pasted secret instead of a name.
            return Err(ConfigError("invalid variable name in \"${…}\" (use letters, digits and _)".into()));
        }
        match (lookup(name), default) {
            (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
            (Some(v), _) => {
                let at = text.len() - rest.len() + i;
                visit(name, &v, at..at + 2 + end + 1);
                out.push_str(&v);
            }
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(ConfigError(format!(
                    "environment variable {name} is not set (use ${{{name}:-default}} for a fallback)"
                )));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Where in a definition toolport put a variable's value ([`ServerDef::expanded_variables`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpandedIn {
    /// An `env` value.
    Env,
    /// A `headers` value.
    Header,
    /// The `url`; `secret_part` when in its userinfo or its query (the parts `redact.rs`
    /// masks), not its scheme, host, port or path.
    Url {
        /// In the userinfo or the query.
        secret_part: bool,
    },
    /// An `args` item.
    Arg,
    /// One of the `oauth` fields that take variables.
    OAuth,
}

/// One variable toolport expanded into a definition, and its value. `Debug` masks the value:
/// it is a secret as often as not.
#[derive(Clone, PartialEq, Eq)]
pub struct ExpandedVar {
    /// The field it went into.
    pub field: ExpandedIn,
    /// The variable's name (`GITHUB_TOKEN`): what a message may show.
    pub name: String,
    /// Its value: never shown.
    pub value: String,
}

impl std::fmt::Debug for ExpandedVar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpandedVar")
            .field("field", &self.field)
            .field("name", &self.name)
            .field("value", &super::model::MASK)
            .finish()
    }
}

/// Whether the `${…}` at `at` in the URL template `url` stands in its userinfo or its query:
/// after a `?`, or between `://` and an `@` with no `/` on the way.
fn in_url_secret_part(url: &str, at: std::ops::Range<usize>) -> bool {
    let before = &url[..at.start];
    if before.contains('?') {
        return true;
    }
    let authority_start = before.find("://").map_or(0, |i| i + 3);
    let after = &url[at.end..];
    let authority_end = after.find(['/', '?', '#']).unwrap_or(after.len());
    !before[authority_start..].contains('/') && after[..authority_end].contains('@')
}

impl ServerDef {
    /// Every variable [`ServerDef::expanded`] puts into this definition, with its value and
    /// the field it goes into: what the call guard knows as this server's configured secrets
    /// (`runtime/calls/secret_guard.rs`). A field whose expansion fails contributes what it
    /// expanded before the failure (the failure itself is reported when connecting).
    pub fn expanded_variables(&self, lookup: impl Fn(&str) -> Option<String>) -> Vec<ExpandedVar> {
        let mut found = Vec::new();
        let mut visit_field = |text: &str, field: &dyn Fn(std::ops::Range<usize>) -> ExpandedIn| {
            let _ = expand_visiting(text, &lookup, |name, value, at| {
                found.push(ExpandedVar {
                    field: field(at),
                    name: name.to_string(),
                    value: value.to_string(),
                });
            });
        };
        if let Some(url) = &self.url {
            visit_field(url, &|at| ExpandedIn::Url { secret_part: in_url_secret_part(url, at) });
        }
        for a in &self.args {
            visit_field(a, &|_| ExpandedIn::Arg);
        }
        for (_, v) in &self.env {
            visit_field(v, &|_| ExpandedIn::Env);
        }
        for (_, v) in &self.headers {
            visit_field(v, &|_| ExpandedIn::Header);
        }
        if let Some(o) = &self.oauth {
            let idp = o.idp.as_ref();
            let fields = [
                o.client_id.as_ref(),
                o.client_secret.as_ref(),
                o.client_metadata_url.as_ref(),
                o.private_key.as_ref(),
                o.assertion.as_ref(),
                o.assertion_file.as_ref(),
                idp.and_then(|i| i.client_id.as_ref()),
                idp.and_then(|i| i.client_secret.as_ref()),
                idp.and_then(|i| i.id_token.as_ref()),
                idp.and_then(|i| i.id_token_file.as_ref()),
            ];
            for v in fields.into_iter().flatten() {
                visit_field(v, &|_| ExpandedIn::OAuth);
            }
        }
        found
    }

    /// A copy with `env`, `headers`, `url` and `args` expanded; errors name the server and field.
    /// Call it when connecting, with `|k| std::env::var(k).ok()` in production.
    pub fn expanded(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<ServerDef, ConfigError> {
        let ctx = |field: String| {
            let name = self.name.clone();
            move |e: ConfigError| ConfigError(format!("server \"{name}\": {field}: {}", e.0))
        };
        let mut d = self.clone();
        if let Some(url) = &self.url {
            d.url = Some(expand_vars(url, &lookup).map_err(ctx(format!("\"{}\"", key::URL)))?);
        }
        for (i, a) in d.args.iter_mut().enumerate() {
            *a = expand_vars(a, &lookup).map_err(ctx(format!("\"{}\"[{i}]", key::ARGS)))?;
        }
        for (k, v) in d.env.iter_mut() {
            *v = expand_vars(v, &lookup).map_err(ctx(format!("\"{}\" {k}", key::ENV)))?;
        }
        for (k, v) in d.headers.iter_mut() {
            *v = expand_vars(v, &lookup).map_err(ctx(format!("\"{}\" {k}", key::HEADERS)))?;
        }
        if let Some(o) = d.oauth.as_mut() {
            let fields = [
                (oauth_key::CLIENT_ID, &mut o.client_id),
                (oauth_key::CLIENT_SECRET, &mut o.client_secret),
                (oauth_key::CLIENT_METADATA_URL, &mut o.client_metadata_url),
                (oauth_key::PRIVATE_KEY, &mut o.private_key),
                (oauth_key::ASSERTION, &mut o.assertion),
                (oauth_key::ASSERTION_FILE, &mut o.assertion_file),
            ];
            for (field, value) in fields {
                if let Some(v) = value.as_mut() {
                    *v = expand_vars(v, &lookup).map_err(ctx(format!("\"{}.{field}\"", key::OAUTH)))?;
                }
            }
            if let Some(idp) = o.idp.as_mut() {
                let fields = [
                    (oauth_key::idp::CLIENT_ID, &mut idp.client_id),
                    (oauth_key::idp::CLIENT_SECRET, &mut idp.client_secret),
                    (oauth_key::idp::ID_TOKEN, &mut idp.id_token),
                    (oauth_key::idp::ID_TOKEN_FILE, &mut idp.id_token_file),
                ];
                for (field, value) in fields {
                    if let Some(v) = value.as_mut() {
                        *v = expand_vars(v, &lookup).map_err(ctx(format!(
                            "\"{}.{}.{field}\"",
                            key::OAUTH,
                            oauth_key::IDP
                        )))?;
                    }
                }
            }
        }
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn x(text: &str) -> Result<String, String> {
        expand_vars(text, env).map_err(|e| e.0)
    }

    #[test]
    fn set_variable_expands() {
        assert_eq!(x("Bearer ${TOKEN}"), Ok("Bearer s3cret".into()));
        assert_eq!(x("${TOKEN}${TOKEN}"), Ok("s3crets3cret".into()));
    }

    #[test]
    fn unset_without_default_names_the_variable() {
        assert_eq!(
            x("a ${NOPE} b"),
            Err("environment variable NOPE is not set (use ${NOPE:-default} for a fallback)".into())
        );
    }

    #[test]
    fn default_used_when_unset_or_empty() {
        assert_eq!(x("${NOPE:-fallback}"), Ok("fallback".into()));
        assert_eq!(x("${EMPTY:-fallback}"), Ok("fallback".into()));
        assert_eq!(x("${TOKEN:-fallback}"), Ok("s3cret".into()));
        assert_eq!(x("${NOPE:-}"), Ok(String::new()));
        assert_eq!(x("${EMPTY}"), Ok(String::new()));
    }

    #[test]
    fn plain_text_untouched() {
        for t in ["plain", "$HOME", "cost: $5", "{braces}", "$", "a$b{c}"] {
            assert_eq!(x(t), Ok(t.to_string()));
        }
    }

    #[test]
    fn escape_and_errors() {
        assert_eq!(x("$${TOKEN}"), Ok("${TOKEN}".into()));
        assert_eq!(x("${TOKEN"), Err("unterminated \"${\" (missing \"}\")".into()));
        let invalid = "invalid variable name in \"${…}\" (use letters, digits and _)";
        assert_eq!(x("${}"), Err(invalid.into()));
        // A token pasted where the name belongs is not echoed.
        assert_eq!(x("Bearer ${sk-live-abc.123}"), Err(invalid.into()));
    }

    #[test]
    fn expanded_variables_name_each_value_and_its_field() {
        let d = ServerDef {
            name: "s".into(),
            url: Some("https://${TOKEN}@h/${TOKEN}?key=${TOKEN}&d=${NOPE:-x}".into()),
            args: vec!["--t=${TOKEN}".into(), "${NOPE}".into()],
            env: vec![("K".into(), "${EMPTY}".into())],
            headers: vec![("Authorization".into(), "Bearer ${TOKEN}".into())],
            ..ServerDef::default()
        };
        let seen: Vec<(ExpandedIn, String, String)> =
            d.expanded_variables(env).into_iter().map(|v| (v.field, v.name, v.value)).collect();
        let t = |field| (field, "TOKEN".to_string(), "s3cret".to_string());
        assert_eq!(
            seen,
            [
                t(ExpandedIn::Url { secret_part: true }),
                t(ExpandedIn::Url { secret_part: false }),
                t(ExpandedIn::Url { secret_part: true }),
                t(ExpandedIn::Arg),
                (ExpandedIn::Env, "EMPTY".to_string(), String::new()),
                t(ExpandedIn::Header),
            ]
        );
        let shown = format!("{:?}", d.expanded_variables(env));
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn server_expansion_covers_env_headers_url_args_and_names_the_field() -> anyhow::Result<()> {
        let d = ServerDef {
            name: "s".into(),
            url: Some("https://h/${NOPE:-mcp}".into()),
            args: vec!["--t".into(), "${TOKEN}".into()],
            env: vec![("K".into(), "${TOKEN}".into())],
            headers: vec![("Authorization".into(), "Bearer ${TOKEN}".into())],
            ..ServerDef::default()
        };
        let e = d.expanded(env)?;
        assert_eq!(e.url.as_deref(), Some("https://h/mcp"));
        assert_eq!(e.args, ["--t", "s3cret"]);
        assert_eq!(e.env[0].1, "s3cret");
        assert_eq!(e.headers[0].1, "Bearer s3cret");
        let bad = ServerDef { headers: vec![("X".into(), "${NOPE}".into())], ..d };
        assert_eq!(
            bad.expanded(env).err().map(|e| e.0).as_deref(),
            Some(
                "server \"s\": \"headers\" X: environment variable NOPE is not set (use ${NOPE:-default} for a fallback)"
            )
        );
        Ok(())
    }
}
