//! One access token checked: a JWT signed with a public-key algorithm (never `none`, never a
//! shared-secret `HS*`) by one of the issuer's keys, from the issuer (`iss`), for this server
//! (`aud` contains the audience, RFC 8707), within its time (`exp` required, `nbf` when
//! present, [`LEEWAY`] either way), naming a subject (`sub`). What is wrong is said in words
//! a person can act on, never with the token in them.

use std::str::FromStr as _;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Map, Value};

use super::keys::{Keys, Lookup};
use crate::serve::Caller;

/// The clock difference allowed between the issuer and serve, on `exp` and `nbf`: small, so
/// an expired token stops working soon after its time.
pub const LEEWAY: u64 = 30;

/// Why a request was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token: 401, pointing at the metadata.
    Missing,
    /// A token that does not pass, and why (never the token itself): 401 `invalid_token`.
    Invalid(String),
    /// The issuer's keys are not known yet, and why: 503.
    Unavailable(String),
}

/// The caller `token` names, if it passes every check.
pub async fn verify(token: &str, keys: &Keys, issuer: &str, audience: &str) -> Result<Caller, Refusal> {
    let invalid = |why: &str| Refusal::Invalid(why.to_string());
    let (alg, kid) = header_of(token).ok_or_else(|| invalid("the token is not a JWT"))?;
    let alg = match alg.as_str() {
        "none" => return Err(invalid("the token is unsigned (alg none)")),
        shared if shared.starts_with("HS") => {
            return Err(Refusal::Invalid(format!(
                "the token is signed with {shared}, a shared secret: only public-key signatures are accepted"
            )));
        }
        named => Algorithm::from_str(named)
            .map_err(|_| invalid("the token's signing algorithm is not supported"))?,
    };
    let candidates = match keys.lookup(kid.as_deref()).await {
        Lookup::Found(found) => found,
        Lookup::Unknown => return Err(invalid("the token is signed by a key the issuer does not publish")),
        Lookup::NotYet(why) => return Err(Refusal::Unavailable(why)),
    };
    let validation = validation(alg, issuer, audience);
    let mut matched = false;
    for key in candidates.iter().filter(|key| key.algorithms.contains(&alg)) {
        matched = true;
        match jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &validation) {
            Ok(data) => return caller(data.claims),
            Err(e) if matches!(e.kind(), ErrorKind::InvalidSignature) => continue,
            Err(e) => return Err(Refusal::Invalid(described(e.kind(), issuer, audience))),
        }
    }
    if !matched {
        return Err(invalid("the token's signing algorithm is not its key's"));
    }
    Err(invalid("the token's signature does not verify"))
}

/// What `jsonwebtoken` checks besides the signature.
fn validation(alg: Algorithm, issuer: &str, audience: &str) -> Validation {
    let mut validation = Validation::new(alg);
    validation.leeway = LEEWAY;
    validation.validate_exp = true;
    validation.validate_nbf = true;
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation
}

/// The header's `alg` and `kid`, read here rather than by `jsonwebtoken`, which cannot name
/// `none` (it fails to parse the header), so an unsigned token is told apart.
fn header_of(token: &str) -> Option<(String, Option<String>)> {
    let mut parts = token.split('.');
    let (header, _, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let decoded = URL_SAFE_NO_PAD.decode(header.trim_end_matches('=')).ok()?;
    let header: Map<String, Value> = serde_json::from_slice(&decoded).ok()?;
    let alg = header.get("alg")?.as_str()?.to_string();
    let kid = header.get("kid").and_then(Value::as_str).map(str::to_string);
    Some((alg, kid))
}

/// Why a signed token failed the other checks.
fn described(kind: &ErrorKind, issuer: &str, audience: &str) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidAudience => {
            format!("the token is not for this server: its aud does not name {audience}")
        }
        ErrorKind::InvalidIssuer => format!("the token is not from the issuer {issuer}"),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("the token's {claim} claim is malformed"),
        ErrorKind::InvalidAlgorithm => "the token's signing algorithm is not its key's".into(),
        _ => "the token is malformed".into(),
    }
}

/// The caller of verified `claims`.
fn caller(claims: Map<String, Value>) -> Result<Caller, Refusal> {
    let subject = match claims.get("sub").and_then(Value::as_str) {
        Some(sub) if !sub.is_empty() => sub.to_string(),
        _ => return Err(Refusal::Invalid("the token has no sub claim".into())),
    };
    let groups = match claims.get("groups") {
        Some(Value::Array(listed)) => listed.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(one)) => vec![one.clone()],
        _ => Vec::new(),
    };
    let client_id = ["client_id", "azp"]
        .iter()
        .find_map(|name| claims.get(*name).and_then(Value::as_str))
        .map(str::to_string);
    Ok(Caller { subject, groups, client_id, claims: Arc::new(claims) })
}

#[cfg(test)]
mod tests {
    use aws_lc_rs::rand::SystemRandom;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::*;

    const ISSUER: &str = "https://issuer.example";
    const AUDIENCE: &str = "https://gw.example/mcp";

    struct Signer {
        key: EncodingKey,
        jwk: Value,
    }

    fn signer(kid: &str) -> anyhow::Result<Signer> {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| anyhow::anyhow!("no key"))?;
        let key = EncodingKey::from_ec_der(pkcs8.as_ref());
        let mut jwk = serde_json::to_value(Jwk::from_encoding_key(&key, Algorithm::ES256)?)?;
        jwk["kid"] = json!(kid);
        Ok(Signer { key, jwk })
    }

    fn now() -> i64 {
        jsonwebtoken::get_current_timestamp() as i64
    }

    fn sign(signer: &Signer, kid: Option<&str>, claims: Value) -> anyhow::Result<String> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = kid.map(str::to_string);
        Ok(jsonwebtoken::encode(&header, &claims, &signer.key)?)
    }

    fn claims(extra: Value) -> Value {
        let mut claims =
            json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now() + 300, "nbf": now()});
        if let (Some(base), Some(extra)) = (claims.as_object_mut(), extra.as_object()) {
            base.extend(extra.clone());
        }
        claims
    }

    async fn check(keys: &Keys, token: &str) -> Result<Caller, Refusal> {
        verify(token, keys, ISSUER, AUDIENCE).await
    }

    fn invalid(why: &str) -> Result<Caller, Refusal> {
        Err(Refusal::Invalid(why.into()))
    }

    #[tokio::test]
    async fn a_valid_token_names_its_caller_and_a_bad_one_says_why() -> anyhow::Result<()> {
        let good = signer("k1")?;
        let keys = Keys::new(ISSUER)?;
        let unknown = check(&keys, &sign(&good, Some("k1"), claims(json!({})))?).await;
        assert!(matches!(unknown, Err(Refusal::Unavailable(_))), "{unknown:?}");
        keys.replace(&json!({"keys": [good.jwk]}))?;

        let token = sign(&good, Some("k1"), claims(json!({"groups": ["docs", 3], "azp": "cli"})))?;
        let caller = check(&keys, &token).await.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        assert_eq!((caller.subject.as_str(), caller.groups.clone()), ("alice", vec!["docs".to_string()]));
        assert_eq!(caller.client_id.as_deref(), Some("cli"));
        // Without a kid, every key is tried.
        assert!(check(&keys, &sign(&good, None, claims(json!({})))?).await.is_ok());

        let expired = sign(&good, Some("k1"), claims(json!({"exp": now() - 120})))?;
        assert_eq!(check(&keys, &expired).await, invalid("the token has expired"));
        let early = sign(&good, Some("k1"), claims(json!({"nbf": now() + 600})))?;
        assert_eq!(check(&keys, &early).await, invalid("the token is not valid yet (nbf)"));
        let other = sign(&good, Some("k1"), claims(json!({"aud": ["https://other.example/mcp"]})))?;
        assert_eq!(
            check(&keys, &other).await,
            invalid("the token is not for this server: its aud does not name https://gw.example/mcp")
        );
        let foreign = sign(&good, Some("k1"), claims(json!({"iss": "https://evil.example"})))?;
        assert_eq!(
            check(&keys, &foreign).await,
            invalid("the token is not from the issuer https://issuer.example")
        );
        let mut no_exp = claims(json!({}));
        no_exp.as_object_mut().map(|c| c.remove("exp"));
        assert_eq!(
            check(&keys, &sign(&good, Some("k1"), no_exp)?).await,
            invalid("the token has no exp claim")
        );
        let no_sub = sign(&good, Some("k1"), claims(json!({"sub": ""})))?;
        assert_eq!(check(&keys, &no_sub).await, invalid("the token has no sub claim"));

        let stranger = signer("k1")?;
        let forged = sign(&stranger, Some("k1"), claims(json!({})))?;
        assert_eq!(check(&keys, &forged).await, invalid("the token's signature does not verify"));
        assert_eq!(check(&keys, "not.a-token").await, invalid("the token is not a JWT"));
        Ok(())
    }

    #[tokio::test]
    async fn unsigned_and_shared_secret_tokens_are_refused_before_any_key() -> anyhow::Result<()> {
        let keys = Keys::new(ISSUER)?;
        let body = URL_SAFE_NO_PAD.encode(claims(json!({})).to_string());
        let none = format!("{}.{body}.", URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#));
        assert_eq!(check(&keys, &none).await, invalid("the token is unsigned (alg none)"));
        let hs = jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims(json!({})),
            &EncodingKey::from_secret(b"secret"),
        )?;
        assert_eq!(
            check(&keys, &hs).await,
            invalid(
                "the token is signed with HS256, a shared secret: only public-key signatures are accepted"
            )
        );
        Ok(())
    }
}
