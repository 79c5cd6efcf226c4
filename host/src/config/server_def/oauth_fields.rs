//! A server's `oauth: {…}` read from JSON and written back: the grant, the client, the
//! `jwt_bearer` grant's pinned authorization server (checked here, as written) and the
//! enterprise grant's identity provider.

use serde_json::{Map, Value};

use super::oauth_def::{Grant, IdpDef, OAuthDef};
use crate::config::ConfigError;
use crate::config::fields::{Fields, Trim};
use crate::config::store_keys::OAUTH;
use crate::config::store_keys::oauth::{self as key, idp as idp_key};

/// What `oauth.grant` may be, as its message says it.
const GRANTS: &str = "\"authorization_code\", \"client_credentials\", \"jwt_bearer\" or \"enterprise\"";

/// `oauth: {…}`, every field optional.
pub(super) fn oauth(fields: &Fields<'_>) -> Result<Option<OAuthDef>, ConfigError> {
    let Some(o) = fields.object(OAUTH)? else { return Ok(None) };
    let grant = match o.string(key::GRANT)?.as_deref() {
        None => Grant::default(),
        Some(text) => Grant::parse(text).ok_or_else(|| o.err(key::GRANT, GRANTS))?,
    };
    let callback_port = match o.positive(key::CALLBACK_PORT, "")? {
        None => None,
        Some(p) => Some(u16::try_from(p).map_err(|_| o.err(key::CALLBACK_PORT, "a port number (1-65535)"))?),
    };
    let scopes =
        o.strings(key::SCOPES, Trim::Yes)?.map(|s| s.into_iter().filter(|s| !s.is_empty()).collect());
    let def = OAuthDef {
        client_id: o.string(key::CLIENT_ID)?,
        client_secret: o.string(key::CLIENT_SECRET)?,
        client_metadata_url: o.string(key::CLIENT_METADATA_URL)?,
        scopes,
        callback_port,
        grant,
        private_key: o.string(key::PRIVATE_KEY)?,
        private_key_jwt: o.string(key::PRIVATE_KEY_JWT)?,
        assertion: o.string(key::ASSERTION)?,
        assertion_file: o.string(key::ASSERTION_FILE)?,
        issuer: o.string(key::ISSUER)?,
        token_endpoint: o.string(key::TOKEN_ENDPOINT)?,
        idp: match o.object(key::IDP)? {
            None => None,
            Some(i) => Some(IdpDef {
                issuer: i.string(idp_key::ISSUER)?,
                token_endpoint: i.string(idp_key::TOKEN_ENDPOINT)?,
                client_id: i.string(idp_key::CLIENT_ID)?,
                client_secret: i.string(idp_key::CLIENT_SECRET)?,
                id_token: i.string(idp_key::ID_TOKEN)?,
                id_token_file: i.string(idp_key::ID_TOKEN_FILE)?,
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
fn pinned_issuer(o: &Fields<'_>, def: &OAuthDef) -> Result<(), ConfigError> {
    let pins = [(key::ISSUER, &def.issuer), (key::TOKEN_ENDPOINT, &def.token_endpoint)];
    if def.grant != Grant::JwtBearer {
        return match pins.iter().find(|(_, value)| value.is_some()) {
            Some((field, _)) => Err(o.says(field, "is read only by oauth.grant \"jwt_bearer\"")),
            None => Ok(()),
        };
    }
    if def.issuer.is_none() {
        return Err(o.says(key::ISSUER, ISSUER_REQUIRED));
    }
    for (field, value) in pins {
        if let Some(text) = value {
            web_address(text, field == key::ISSUER).map_err(|why| o.says(field, &why))?;
        }
    }
    Ok(())
}

/// Why `text` is not an address a token may be sent to: not an absolute `https` URL with a host
/// (or `http` to this machine), or with a fragment, or for an issuer a query (RFC 8414 §2).
fn web_address(text: &str, issuer: bool) -> Result<(), ConfigError> {
    const WANTED: &str = "an https URL (http only on this machine)";
    let url = url::Url::parse(text).map_err(|e| format!("must be {WANTED}: {text} ({e})"))?;
    let local = match url.host() {
        None => return Err(ConfigError(format!("must be {WANTED}: {text} has no host"))),
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
        _ => return Err(ConfigError(format!("must be {WANTED}: {text}"))),
    }
    if url.fragment().is_some() || (issuer && url.query().is_some()) {
        let what = if issuer { "a query or fragment" } else { "a fragment" };
        return Err(ConfigError(format!("must be {WANTED} without {what}: {text}")));
    }
    Ok(())
}

pub(super) fn oauth_json(o: &OAuthDef) -> Map<String, Value> {
    let mut m = Map::new();
    let strings = [
        (key::CLIENT_ID, &o.client_id),
        (key::CLIENT_SECRET, &o.client_secret),
        (key::CLIENT_METADATA_URL, &o.client_metadata_url),
    ];
    for (key, value) in strings {
        if let Some(v) = value {
            m.insert(key.into(), Value::String(v.clone()));
        }
    }
    if let Some(scopes) = &o.scopes {
        m.insert(key::SCOPES.into(), scopes.iter().cloned().map(Value::String).collect());
    }
    if let Some(port) = o.callback_port {
        m.insert(key::CALLBACK_PORT.into(), Value::from(port));
    }
    if o.grant != Grant::default() {
        m.insert(key::GRANT.into(), Value::String(o.grant.as_str().into()));
    }
    let rest = [
        (key::PRIVATE_KEY, &o.private_key),
        (key::PRIVATE_KEY_JWT, &o.private_key_jwt),
        (key::ASSERTION, &o.assertion),
        (key::ASSERTION_FILE, &o.assertion_file),
        (key::ISSUER, &o.issuer),
        (key::TOKEN_ENDPOINT, &o.token_endpoint),
    ];
    for (key, value) in rest {
        if let Some(v) = value {
            m.insert(key.into(), Value::String(v.clone()));
        }
    }
    if let Some(idp) = &o.idp {
        let fields = [
            (idp_key::ISSUER, &idp.issuer),
            (idp_key::TOKEN_ENDPOINT, &idp.token_endpoint),
            (idp_key::CLIENT_ID, &idp.client_id),
            (idp_key::CLIENT_SECRET, &idp.client_secret),
            (idp_key::ID_TOKEN, &idp.id_token),
            (idp_key::ID_TOKEN_FILE, &idp.id_token_file),
        ];
        let i: Map<String, Value> = fields
            .into_iter()
            .filter_map(|(k, v)| v.clone().map(|v| (k.to_string(), Value::String(v))))
            .collect();
        m.insert(key::IDP.into(), Value::Object(i));
    }
    m
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::config::server_def::model::ServerDef;

    fn def(v: Value) -> ServerDef {
        ServerDef::from_json("s", &v).unwrap_or_else(|e| panic!("{e}"))
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
}
