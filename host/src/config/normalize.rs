//! Turns one JSON server definition into a normalised [`ServerDef`] (reference-behaviour A,
//! "Normalisation"), and back into the JSON written to the store. Type errors name the server
//! and the field; the caller adds the file.

use serde_json::{Map, Value};

use super::fields::{Fields, Trim};
use super::model::{Grant, IdpDef, Limits, OAuthDef, Roots, ServerDef, Timeouts, WasmDef};
use super::sandbox_fields::{self, Guest};
use super::tool_filter::ToolFilter;

/// The built-in transport type names; plugins may not take them.
pub const BUILTIN_TRANSPORTS: [&str; 4] = ["stdio", "sse", "streamable_http", "wasm"];

/// Lower-cases a `type` and maps the aliases `http` and `streamable-http` to `streamable_http`.
pub fn normalize_type(raw: &str) -> Option<String> {
    let t = raw.trim().to_lowercase();
    match t.as_str() {
        "" => None,
        "http" | "streamable-http" => Some("streamable_http".to_string()),
        _ => Some(t),
    }
}

impl ServerDef {
    /// Reads one `mcpServers` entry. `name` is trimmed by the caller's rules here too; errors
    /// read `server "<name>": "<field>" must be …` so the user can find the line to fix.
    pub fn from_json(name: &str, value: &Value) -> Result<ServerDef, String> {
        let name = name.trim();
        let obj =
            value.as_object().ok_or_else(|| format!("server \"{name}\": definition must be an object"))?;
        let owner = format!("server \"{name}\": ");
        let fields = Fields::new(obj, &owner);
        let command = fields.string("command")?;
        let component = fields.string("component")?;
        let builtin = fields.string("builtin")?;
        let transport = match fields.string("type")?.as_deref().and_then(normalize_type) {
            Some(t) => Some(t),
            // A url alone is deliberately not guessed: sse and streamable_http both take one.
            None if command.is_some() => Some("stdio".to_string()),
            None if component.is_some() || builtin.is_some() => Some("wasm".to_string()),
            None => None,
        };
        let wasm = match transport.as_deref() {
            Some("wasm") => Some(WasmDef {
                component_path: component.as_deref().map(sandbox_fields::expand_home),
                component,
                builtin,
                grants: sandbox_fields::grants(&fields, Guest::Server)?,
                limits: sandbox_fields::limits(&fields, Limits::for_server())?,
                sha256: sandbox_fields::sha256(&fields)?,
            }),
            _ => None,
        };
        Ok(ServerDef {
            name: name.to_string(),
            transport,
            url: fields.string("url")?,
            command,
            // Kept exactly: no trimming, no de-duplication (reference-behaviour B.2).
            args: fields.strings("args", Trim::No)?.unwrap_or_default(),
            env: fields.string_map("env")?,
            headers: fields.string_map("headers")?,
            cwd: fields.string("cwd")?,
            inherit_env: match obj.get("inheritEnv") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err(fields.err("inheritEnv", "true or false")),
            },
            timeouts: timeouts(&fields)?,
            oauth: oauth(&fields)?,
            wasm,
            tools: tool_filter(&fields)?,
            roots: roots(&fields)?,
        })
    }

    /// Resolves the paths a definition names against `base`, the folder of the file it came
    /// from: a `wasm` server's component and granted folders.
    pub fn resolve_paths(&mut self, base: &std::path::Path) {
        let Some(wasm) = &mut self.wasm else { return };
        if let Some(written) = &wasm.component {
            wasm.component_path = Some(super::sandbox_fields::resolve_against(base, written));
        }
        for dir in &mut wasm.grants.dirs {
            sandbox_fields::resolve_dir(dir, base);
        }
    }

    /// The definition as the store holds it: known fields in a fixed order, null/empty omitted,
    /// timeouts only where they differ from the defaults.
    pub fn to_json(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let put_str = |m: &mut Map<String, Value>, k: &str, v: &Option<String>| {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                m.insert(k.into(), Value::String(v.into()));
            }
        };
        put_str(&mut m, "type", &self.transport);
        put_str(&mut m, "url", &self.url);
        put_str(&mut m, "command", &self.command);
        if !self.args.is_empty() {
            m.insert("args".into(), self.args.iter().cloned().map(Value::String).collect());
        }
        for (key, pairs) in [("env", &self.env), ("headers", &self.headers)] {
            if !pairs.is_empty() {
                let obj: Map<String, Value> =
                    pairs.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
                m.insert(key.into(), Value::Object(obj));
            }
        }
        put_str(&mut m, "cwd", &self.cwd);
        if let Some(inherit) = self.inherit_env {
            m.insert("inheritEnv".into(), Value::Bool(inherit));
        }
        if let Some(t) = timeouts_json(&self.timeouts) {
            m.insert("timeouts".into(), t);
        }
        if let Some(o) = &self.oauth {
            m.insert("oauth".into(), Value::Object(oauth_json(o)));
        }
        if let Some(t) = tool_filter_json(&self.tools) {
            m.insert("tools".into(), t);
        }
        if let Some(r) = roots_json(&self.roots) {
            m.insert("roots".into(), r);
        }
        if let Some(w) = &self.wasm {
            put_str(&mut m, "component", &w.component);
            put_str(&mut m, "builtin", &w.builtin);
            if let Some(g) = sandbox_fields::grants_json(&w.grants) {
                m.insert("grants".into(), g);
            }
            if let Some(l) = sandbox_fields::limits_json(&w.limits, Limits::for_server()) {
                m.insert("limits".into(), l);
            }
            put_str(&mut m, "sha256", &w.sha256);
        }
        m
    }

    /// `input` (a user's JSON definition) with every known field replaced by its normalised
    /// value or dropped when empty, unknown keys kept in place, and an inferred `type` added.
    pub fn merge_into(&self, input: &Map<String, Value>) -> Map<String, Value> {
        let known = self.to_json();
        let mut out = Map::new();
        // A server that is not `wasm` has no sandbox fields: keys of those names are its own.
        let known_here =
            |k: &str| KNOWN_FIELDS.contains(&k) || (self.wasm.is_some() && WASM_FIELDS.contains(&k));
        for (k, v) in input {
            if known_here(k) {
                match (known.get(k), v) {
                    // `oauth`, `grants`, `limits` and `tools` keep the user's own keys inside
                    // them too, even when none of ours is left (`tools: {"x-note": …}`).
                    (nv @ (Some(Value::Object(_)) | None), Value::Object(given))
                        if NESTED_FIELDS.contains(&k.as_str()) =>
                    {
                        let empty = Map::new();
                        let nv = nv.and_then(Value::as_object).unwrap_or(&empty);
                        let mut merged: Map<String, Value> = given
                            .iter()
                            .filter(|(key, _)| nv.contains_key(*key) || !nested_known(k, key))
                            .map(|(key, value)| (key.clone(), nv.get(key).unwrap_or(value).clone()))
                            .collect();
                        for (key, value) in nv {
                            merged.entry(key.clone()).or_insert_with(|| value.clone());
                        }
                        if known.contains_key(k) || !merged.is_empty() {
                            out.insert(k.clone(), Value::Object(merged));
                        }
                    }
                    (Some(nv), _) => {
                        out.insert(k.clone(), nv.clone());
                    }
                    (None, _) => {}
                }
            } else {
                out.insert(k.clone(), v.clone());
            }
        }
        for (k, v) in known {
            out.entry(k).or_insert(v);
        }
        out
    }
}

const KNOWN_FIELDS: [&str; 12] = [
    "type",
    "url",
    "command",
    "args",
    "env",
    "headers",
    "cwd",
    "inheritEnv",
    "timeouts",
    "oauth",
    "tools",
    "roots",
];

/// The fields of a `wasm` server's sandbox.
const WASM_FIELDS: [&str; 5] = ["component", "builtin", "grants", "limits", "sha256"];

/// Objects whose unknown keys survive a merge.
const NESTED_FIELDS: [&str; 4] = ["oauth", "grants", "limits", "tools"];

/// Whether `key` is one of ours inside the nested object `field`.
fn nested_known(field: &str, key: &str) -> bool {
    match field {
        "oauth" => OAUTH_FIELDS.contains(&key),
        "grants" => ["hosts", "env", "dirs"].contains(&key),
        "limits" => ["memoryMb", "callMs", "cpuPercent"].contains(&key),
        "tools" => ["include", "exclude"].contains(&key),
        _ => false,
    }
}

const OAUTH_FIELDS: [&str; 13] = [
    "clientId",
    "clientSecret",
    "clientMetadataUrl",
    "scopes",
    "callbackPort",
    "grant",
    "privateKey",
    "privateKeyJwt",
    "assertion",
    "assertionFile",
    "issuer",
    "tokenEndpoint",
    "idp",
];

/// What `oauth.grant` may be, as its message says it.
const GRANTS: &str = "\"authorization_code\", \"client_credentials\", \"jwt_bearer\" or \"enterprise\"";

/// `oauth: {…}`, every field optional.
fn oauth(fields: &Fields<'_>) -> Result<Option<OAuthDef>, String> {
    let Some(o) = fields.object("oauth")? else { return Ok(None) };
    let grant = match o.string("grant")?.as_deref() {
        None | Some("authorization_code") => Grant::AuthorizationCode,
        Some("client_credentials") => Grant::ClientCredentials,
        Some("jwt_bearer") => Grant::JwtBearer,
        Some("enterprise") => Grant::Enterprise,
        Some(_) => return Err(o.err("grant", GRANTS)),
    };
    let callback_port = match o.positive("callbackPort", "")? {
        None => None,
        Some(p) => Some(u16::try_from(p).map_err(|_| o.err("callbackPort", "a port number (1-65535)"))?),
    };
    let scopes = o.strings("scopes", Trim::Yes)?.map(|s| s.into_iter().filter(|s| !s.is_empty()).collect());
    let def = OAuthDef {
        client_id: o.string("clientId")?,
        client_secret: o.string("clientSecret")?,
        client_metadata_url: o.string("clientMetadataUrl")?,
        scopes,
        callback_port,
        grant,
        private_key: o.string("privateKey")?,
        private_key_jwt: o.string("privateKeyJwt")?,
        assertion: o.string("assertion")?,
        assertion_file: o.string("assertionFile")?,
        issuer: o.string("issuer")?,
        token_endpoint: o.string("tokenEndpoint")?,
        idp: match o.object("idp")? {
            None => None,
            Some(i) => Some(IdpDef {
                issuer: i.string("issuer")?,
                token_endpoint: i.string("tokenEndpoint")?,
                client_id: i.string("clientId")?,
                client_secret: i.string("clientSecret")?,
                id_token: i.string("idToken")?,
                id_token_file: i.string("idTokenFile")?,
            }),
        },
    };
    pinned_issuer(&o, &def)?;
    Ok(Some(def))
}

/// What a `jwt_bearer` definition without `oauth.issuer` is told.
const ISSUER_REQUIRED: &str = "is required for oauth.grant \"jwt_bearer\": the authorization server \
     the workload's token may be sent to (its issuer, e.g. \"https://auth.example.com\")";

/// `oauth.issuer` and `oauth.tokenEndpoint`, which pin where the `jwt_bearer` grant sends the
/// workload's token (issue 26: the server's own metadata chose it before, and a token that
/// proves the workload's identity must not go wherever a server says). That grant needs the
/// issuer; no other grant reads either, so a pin written for one would be a pin that is not
/// in force. Read as written (no `${VAR}`, like `idp.issuer`), so they are checked here: web
/// addresses only, `http` only on this machine. Whether the server is on this machine too
/// (what `http` also needs) and which addresses a name reaches are checked when connecting
/// (`auth/address_policy.rs`): the server's url may be `${VAR}`.
fn pinned_issuer(o: &Fields<'_>, def: &OAuthDef) -> Result<(), String> {
    let pins = [("issuer", &def.issuer), ("tokenEndpoint", &def.token_endpoint)];
    if def.grant != Grant::JwtBearer {
        return match pins.iter().find(|(_, value)| value.is_some()) {
            Some((key, _)) => Err(o.says(key, "is read only by oauth.grant \"jwt_bearer\"")),
            None => Ok(()),
        };
    }
    if def.issuer.is_none() {
        return Err(o.says("issuer", ISSUER_REQUIRED));
    }
    for (key, value) in pins {
        if let Some(text) = value {
            web_address(text, key == "issuer").map_err(|why| o.says(key, &why))?;
        }
    }
    Ok(())
}

/// Why `text` is not an address a token may be sent to: not an absolute `https` URL with a host
/// (or `http` to this machine), or with a fragment, or for an issuer a query (RFC 8414 §2).
fn web_address(text: &str, issuer: bool) -> Result<(), String> {
    const WANTED: &str = "an https URL (http only on this machine)";
    let url = url::Url::parse(text).map_err(|e| format!("must be {WANTED}: {text} ({e})"))?;
    let local = match url.host() {
        None => return Err(format!("must be {WANTED}: {text} has no host")),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
    };
    match url.scheme() {
        "https" => {}
        "http" if local => {}
        _ => return Err(format!("must be {WANTED}: {text}")),
    }
    if url.fragment().is_some() || (issuer && url.query().is_some()) {
        let what = if issuer { "a query or fragment" } else { "a fragment" };
        return Err(format!("must be {WANTED} without {what}: {text}"));
    }
    Ok(())
}

fn oauth_json(o: &OAuthDef) -> Map<String, Value> {
    let mut m = Map::new();
    let strings = [
        ("clientId", &o.client_id),
        ("clientSecret", &o.client_secret),
        ("clientMetadataUrl", &o.client_metadata_url),
    ];
    for (key, value) in strings {
        if let Some(v) = value {
            m.insert(key.into(), Value::String(v.clone()));
        }
    }
    if let Some(scopes) = &o.scopes {
        m.insert("scopes".into(), scopes.iter().cloned().map(Value::String).collect());
    }
    if let Some(port) = o.callback_port {
        m.insert("callbackPort".into(), Value::from(port));
    }
    if o.grant != Grant::default() {
        m.insert("grant".into(), Value::String(o.grant.as_str().into()));
    }
    let rest = [
        ("privateKey", &o.private_key),
        ("privateKeyJwt", &o.private_key_jwt),
        ("assertion", &o.assertion),
        ("assertionFile", &o.assertion_file),
        ("issuer", &o.issuer),
        ("tokenEndpoint", &o.token_endpoint),
    ];
    for (key, value) in rest {
        if let Some(v) = value {
            m.insert(key.into(), Value::String(v.clone()));
        }
    }
    if let Some(idp) = &o.idp {
        let fields = [
            ("issuer", &idp.issuer),
            ("tokenEndpoint", &idp.token_endpoint),
            ("clientId", &idp.client_id),
            ("clientSecret", &idp.client_secret),
            ("idToken", &idp.id_token),
            ("idTokenFile", &idp.id_token_file),
        ];
        let i: Map<String, Value> = fields
            .into_iter()
            .filter_map(|(k, v)| v.clone().map(|v| (k.to_string(), Value::String(v))))
            .collect();
        m.insert("idp".into(), Value::Object(i));
    }
    m
}

/// What a bad `roots` is told.
const ROOTS_MUST_BE: &str = "\"workspace\", \"none\", \"client\" or an array of paths";

/// `roots`: one of the keywords, or an array of non-blank paths (trimmed; `~` and relative
/// paths are resolved when a server asks). Absent is `"workspace"`.
fn roots(fields: &Fields<'_>) -> Result<Roots, String> {
    let bad = || fields.err("roots", ROOTS_MUST_BE);
    match fields.raw("roots") {
        None => Ok(Roots::Workspace),
        Some(Value::String(word)) => Roots::from_keyword(word.trim()).ok_or_else(bad),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str().map(str::trim).filter(|p| !p.is_empty()).map(String::from).ok_or_else(bad)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Roots::Paths),
        Some(_) => Err(bad()),
    }
}

/// `roots` as the store holds it: omitted at the default.
fn roots_json(roots: &Roots) -> Option<Value> {
    match roots {
        Roots::Workspace => None,
        Roots::Paths(paths) => Some(paths.iter().cloned().map(Value::String).collect()),
        other => other.keyword().map(|word| Value::String(word.into())),
    }
}

/// `tools: { include, exclude }`: arrays of globs, trimmed, blanks dropped; an empty or absent
/// `include` keeps every tool. A glob that does not compile names the field, the glob and why.
fn tool_filter(fields: &Fields<'_>) -> Result<ToolFilter, String> {
    let Some(t) = fields.object("tools")? else { return Ok(ToolFilter::default()) };
    let globs = |key: &str| -> Result<Vec<String>, String> {
        let list = t.strings(key, Trim::Yes)?.unwrap_or_default();
        Ok(list.into_iter().filter(|g| !g.is_empty()).collect())
    };
    ToolFilter::new(globs("include")?, globs("exclude")?)
        .map_err(|bad| t.says(bad.field, &format!("has a bad glob \"{}\": {}", bad.glob, bad.reason)))
}

fn tool_filter_json(f: &ToolFilter) -> Option<Value> {
    let mut m = Map::new();
    for (key, globs) in [("include", f.include()), ("exclude", f.exclude())] {
        if !globs.is_empty() {
            m.insert(key.into(), globs.iter().cloned().map(Value::String).collect());
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

fn timeouts_json(t: &Timeouts) -> Option<Value> {
    let d = Timeouts::default();
    let mut m = Map::new();
    for (key, v, dv) in
        [("connectMs", t.connect, d.connect), ("listMs", t.list, d.list), ("callMs", t.call, d.call)]
    {
        if v != dv {
            m.insert(key.into(), Value::from(u64::try_from(v.as_millis()).unwrap_or(u64::MAX)));
        }
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// `timeouts: { connectMs, listMs, callMs }`, each defaulted when absent.
fn timeouts(fields: &Fields<'_>) -> Result<Timeouts, String> {
    let mut t = Timeouts::default();
    let Some(given) = fields.object("timeouts")? else { return Ok(t) };
    for (key, slot) in [("connectMs", &mut t.connect), ("listMs", &mut t.list), ("callMs", &mut t.call)] {
        if let Some(ms) = given.positive(key, " (milliseconds)")? {
            *slot = std::time::Duration::from_millis(ms);
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn def(v: Value) -> ServerDef {
        ServerDef::from_json("s", &v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn names_and_strings_are_trimmed_and_blanks_become_absent() {
        let d = ServerDef::from_json(
            "  files ",
            &json!({"type":" stdio ","command":"  npx ","url":"  ","cwd":" /srv ","env":{" A ":" 1 ","  ":"x"}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.name, "files");
        assert_eq!(d.transport.as_deref(), Some("stdio"));
        assert_eq!(d.command.as_deref(), Some("npx"));
        assert_eq!(d.url, None);
        assert_eq!(d.cwd.as_deref(), Some("/srv"));
        assert_eq!(d.env, vec![("A".to_string(), "1".to_string())]);
    }

    #[test]
    fn header_keys_trimmed_and_blank_keys_dropped() {
        let d = def(json!({"type":"sse","url":"u","headers":{" Authorization ":" Bearer x ","":"y"}}));
        assert_eq!(d.headers, vec![("Authorization".to_string(), "Bearer x".to_string())]);
    }

    #[test]
    fn blank_type_with_command_is_stdio() {
        assert_eq!(def(json!({"command":"x"})).transport.as_deref(), Some("stdio"));
        assert_eq!(def(json!({"type":"  ","command":"x"})).transport.as_deref(), Some("stdio"));
    }

    #[test]
    fn url_without_type_is_not_guessed() {
        assert_eq!(def(json!({"url":"http://h/mcp"})).transport, None);
    }

    #[test]
    fn type_is_lowercased_and_http_aliases_map_to_streamable_http() {
        for t in ["http", "HTTP", "streamable-http", "Streamable_HTTP"] {
            assert_eq!(def(json!({"type":t,"url":"u"})).transport.as_deref(), Some("streamable_http"), "{t}");
        }
        assert_eq!(def(json!({"type":"SSE","url":"u"})).transport.as_deref(), Some("sse"));
        assert_eq!(def(json!({"type":"TCP","url":"u"})).transport.as_deref(), Some("tcp"));
    }

    #[test]
    fn args_are_kept_exactly_with_duplicates() {
        let d = def(json!({"command":"x","args":["-p","a","-p","b"," spaced "]}));
        assert_eq!(d.args, ["-p", "a", "-p", "b", " spaced "]);
    }

    #[test]
    fn wrong_types_name_server_and_field() {
        let cases = [
            (json!({"command":"x","args":"a b"}), "server \"s\": \"args\" must be an array of strings"),
            (json!({"command":"x","args":[1]}), "server \"s\": \"args\" must be an array of strings"),
            (json!({"command":"x","env":{"A":1}}), "server \"s\": \"env\" must be an object of strings"),
            (json!({"command":"x","env":["A=1"]}), "server \"s\": \"env\" must be an object of strings"),
            (json!({"command":"x","headers":"h"}), "server \"s\": \"headers\" must be an object of strings"),
            (json!({"command":7}), "server \"s\": \"command\" must be a string"),
            (json!({"command":"x","cwd":false}), "server \"s\": \"cwd\" must be a string"),
            (
                json!({"command":"x","timeouts":{"callMs":-1}}),
                "server \"s\": \"timeouts.callMs\" must be a positive integer (milliseconds)",
            ),
            (json!("npx"), "server \"s\": definition must be an object"),
        ];
        for (v, msg) in cases {
            assert_eq!(ServerDef::from_json("s", &v), Err(msg.to_string()));
        }
    }

    #[test]
    fn inherit_env_is_read_kept_as_written_and_checked() {
        assert_eq!(def(json!({"command":"x"})).inherit_env, None);
        let d = def(json!({"command":"x","inheritEnv":false}));
        assert_eq!(d.inherit_env, Some(false));
        assert_eq!(d.to_json().get("inheritEnv"), Some(&json!(false)));
        assert_eq!(
            def(json!({"command":"x","inheritEnv":true})).to_json().get("inheritEnv"),
            Some(&json!(true))
        );
        let err = ServerDef::from_json("s", &json!({"command":"x","inheritEnv":"no"})).err();
        assert_eq!(err.as_deref(), Some("server \"s\": \"inheritEnv\" must be true or false"));
    }

    #[test]
    fn oauth_reads_writes_and_names_bad_fields() {
        let input = json!({"type":"http","url":"u","oauth":{"clientId":" c ","clientSecret":"${S}",
            "scopes":["a"," b "],"callbackPort":8765,"grant":"client_credentials","privateKeyJwt":"ES256"}});
        let d = def(input.clone());
        let o = d.oauth.clone().unwrap_or_default();
        assert_eq!(o.client_id.as_deref(), Some("c"));
        assert_eq!(o.scopes, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!((o.callback_port, o.grant), (Some(8765), Grant::ClientCredentials));
        assert!(!format!("{o:?}").contains("${S}"), "Debug shows the secret: {o:?}");
        let back = Value::Object(d.to_json());
        assert_eq!(back["oauth"]["clientSecret"], "${S}");
        assert_eq!(back["oauth"]["grant"], "client_credentials");
        assert_eq!(def(json!({"type":"http","url":"u","oauth":{}})).oauth, Some(OAuthDef::default()));
        let given = json!({"url":"u","oauth":{"x-team":"infra","clientId":" c ","grant":null}});
        let merged = def(given.clone()).merge_into(given.as_object().unwrap_or(&Map::new()));
        assert_eq!(Value::Object(merged)["oauth"], json!({"x-team":"infra","clientId":"c"}));
        for (bad, message) in [
            (json!({"grant":"implicit"}), format!("\"oauth.grant\" must be {GRANTS}").as_str()),
            (json!({"idp":{"idToken":7}}), "\"oauth.idp.idToken\" must be a string"),
            (json!({"callbackPort":70000}), "\"oauth.callbackPort\" must be a port number (1-65535)"),
            (json!({"scopes":"a b"}), "\"oauth.scopes\" must be an array of strings"),
        ] {
            let err = ServerDef::from_json("s", &json!({"url":"u","oauth":bad})).err().unwrap_or_default();
            assert_eq!(err, format!("server \"s\": {message}"));
        }
    }

    #[test]
    fn the_jwt_bearer_grant_needs_a_pinned_issuer_and_only_it_reads_one() {
        let jwt = |extra: Value| {
            let mut oauth = json!({"grant":"jwt_bearer","assertion":"${T}"});
            if let (Some(o), Value::Object(more)) = (oauth.as_object_mut(), extra) {
                o.extend(more);
            }
            ServerDef::from_json("s", &json!({"type":"http","url":"https://m/mcp","oauth":oauth}))
        };
        let pinned =
            jwt(json!({"issuer":" https://auth.example ","tokenEndpoint":"https://t.example/token?a=1"}))
                .unwrap_or_else(|e| panic!("{e}"));
        let o = pinned.oauth.clone().unwrap_or_default();
        assert_eq!(o.issuer.as_deref(), Some("https://auth.example"));
        let back = Value::Object(pinned.to_json());
        assert_eq!(back["oauth"]["issuer"], "https://auth.example");
        assert_eq!(back["oauth"]["tokenEndpoint"], "https://t.example/token?a=1");
        assert!(jwt(json!({"issuer":"http://127.0.0.1:8080"})).is_ok());
        assert!(jwt(json!({"issuer":"http://localhost:8080/realm"})).is_ok());
        let wanted = "must be an https URL (http only on this machine)";
        for (extra, message) in [
            (json!({}), format!("\"oauth.issuer\" {ISSUER_REQUIRED}")),
            (json!({"issuer":"  "}), format!("\"oauth.issuer\" {ISSUER_REQUIRED}")),
            (
                json!({"issuer":"http://auth.example"}),
                format!("\"oauth.issuer\" {wanted}: http://auth.example"),
            ),
            (
                json!({"issuer":"file:///etc/passwd"}),
                format!("\"oauth.issuer\" {wanted}: file:///etc/passwd has no host"),
            ),
            (
                json!({"issuer":"https://a.example?x=1"}),
                format!("\"oauth.issuer\" {wanted} without a query or fragment: https://a.example?x=1"),
            ),
            (
                json!({"issuer":"https://a.example","tokenEndpoint":"http://169.254.169.254/token"}),
                format!("\"oauth.tokenEndpoint\" {wanted}: http://169.254.169.254/token"),
            ),
        ] {
            assert_eq!(jwt(extra).err().unwrap_or_default(), format!("server \"s\": {message}"));
        }
        let other = json!({"url":"u","oauth":{"grant":"client_credentials","issuer":"https://a.example"}});
        assert_eq!(
            ServerDef::from_json("s", &other).err().unwrap_or_default(),
            "server \"s\": \"oauth.issuer\" is read only by oauth.grant \"jwt_bearer\""
        );
    }

    #[test]
    fn tool_filters_read_write_merge_and_name_bad_fields() {
        let d =
            def(json!({"command":"x","tools":{"include":[" read_* ","","search"],"exclude":["*_delete"]}}));
        assert_eq!(d.tools.include(), ["read_*", "search"]);
        assert_eq!(d.tools.exclude(), ["*_delete"]);
        assert!(d.tools.allows("read_file") && !d.tools.allows("read_delete") && !d.tools.allows("write"));
        assert_eq!(
            Value::Object(d.to_json())["tools"],
            json!({"include":["read_*","search"],"exclude":["*_delete"]})
        );
        assert!(def(json!({"command":"x"})).tools.is_empty());
        assert!(def(json!({"command":"x","tools":{"include":[]}})).tools.is_empty());
        assert_eq!(def(json!({"command":"x","tools":{"include":[]}})).to_json().get("tools"), None);
        // The user's own keys inside `tools` survive, with or without globs beside them.
        for given in [
            json!({"command":"x","tools":{"x-why":"audit","exclude":[" rm "]}}),
            json!({"command":"x","tools":{"x-why":"audit","include":[]}}),
        ] {
            let merged = def(given.clone()).merge_into(given.as_object().unwrap_or(&Map::new()));
            let tools = Value::Object(merged)["tools"].clone();
            assert_eq!(tools["x-why"], "audit", "{tools}");
            assert_eq!(tools.get("include"), None, "{tools}");
        }
        for (bad, message) in [
            (json!("read_*"), "\"tools\" must be an object"),
            (json!({"include":"read_*"}), "\"tools.include\" must be an array of strings"),
            (json!({"exclude":[1]}), "\"tools.exclude\" must be an array of strings"),
            (
                json!({"include":["ok"],"exclude":["[a"]}),
                "\"tools.exclude\" has a bad glob \"[a\": unclosed character class; missing ']'",
            ),
        ] {
            let err =
                ServerDef::from_json("s", &json!({"command":"x","tools":bad})).err().unwrap_or_default();
            assert_eq!(err, format!("server \"s\": {message}"));
        }
    }

    #[test]
    fn timeouts_read_and_default() {
        let d = def(json!({"command":"x","timeouts":{"callMs":1500}}));
        assert_eq!(d.timeouts.call, Duration::from_millis(1500));
        assert_eq!(d.timeouts.connect, Timeouts::default().connect);
    }

    #[test]
    fn to_json_omits_empty_fields_and_default_timeouts() {
        let d = def(json!({"command":"x","args":[],"env":{},"cwd":"","url":null}));
        assert_eq!(Value::Object(d.to_json()), json!({"type":"stdio","command":"x"}));
        let d = def(json!({"type":"sse","url":"u","timeouts":{"listMs":5}}));
        assert_eq!(Value::Object(d.to_json()), json!({"type":"sse","url":"u","timeouts":{"listMs":5}}));
    }

    #[test]
    fn merge_keeps_unknown_keys_in_place_and_normalises_known_ones() {
        let input = json!({"x-note":"keep","command":" npx ","args":["a"],"cwd":"  ","z":1});
        let input = input.as_object().cloned().unwrap_or_default();
        let d = def(Value::Object(input.clone()));
        let out = serde_json::to_string(&d.merge_into(&input)).unwrap_or_default();
        assert_eq!(out, r#"{"x-note":"keep","command":"npx","args":["a"],"z":1,"type":"stdio"}"#);
    }
}
