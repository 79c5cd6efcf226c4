//! DPoP (RFC 9449; the MCP extension SEP-1932): tokens bound to a key only toolport holds, so a
//! token that leaks from a log or a proxy is worth nothing without it.
//!
//! A sign-in uses DPoP when the authorization server lists `ES256` in
//! `dpop_signing_alg_values_supported`, or the server's challenge uses the `DPoP` scheme
//! ([`wanted`]). It then generates a P-256 key ([`ProofKey`]), proves it on the token request
//! ([`token_client`]), and when the answer is a `DPoP` token keeps the key beside it in
//! `credentials.json` (a key per sign-in; `mcp logout` removes both). Every MCP request then
//! carries `Authorization: DPoP <token>` and a fresh proof of the method, the URL and the token
//! ([`requests`]). A server that asks for a nonce (`use_dpop_nonce`) gets one more try with it,
//! at the token endpoint and at the MCP server alike.
//!
//! rmcp 3.11 has no DPoP: the proofs are JWTs made with `jsonwebtoken` (the copy rmcp's
//! `private_key_jwt` uses), the key comes from `aws-lc-rs`.

pub mod requests;
pub mod token_client;

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, anyhow};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::transport::auth::AuthorizationMetadata;
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use url::Url;

/// The one algorithm toolport signs proofs with: the one every DPoP server accepts.
const ALG: &str = "ES256";

/// The `typ` of a DPoP proof (RFC 9449 §4.2).
const PROOF_TYPE: &str = "dpop+jwt";

/// The scheme a DPoP-bound token is presented with (RFC 9449 §7.1).
pub const SCHEME: &str = "DPoP";

/// The header that carries a proof, and the one a server's nonce comes in.
pub const PROOF_HEADER: &str = "dpop";
pub const NONCE_HEADER: &str = "dpop-nonce";

/// The error a server answers when a proof lacks its nonce (RFC 9449 §8, §9).
pub const USE_NONCE: &str = "use_dpop_nonce";

/// A sign-in's private key. No `Debug` of the key itself: it is a credential like the token.
pub struct ProofKey {
    pkcs8: Vec<u8>,
    signing: EncodingKey,
    /// The public half, as it goes in every proof's header.
    jwk: Jwk,
}

impl std::fmt::Debug for ProofKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProofKey(ES256, ***)")
    }
}

/// What a proof claims (RFC 9449 §4.2).
#[derive(Serialize)]
struct Claims<'a> {
    jti: String,
    htm: &'a str,
    htu: String,
    iat: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ath: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nonce: Option<&'a str>,
}

impl ProofKey {
    /// A new P-256 key, for one sign-in.
    pub fn generate() -> Result<Self> {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .map_err(|_| anyhow!("cannot generate a DPoP key"))?;
        Self::from_pkcs8(pkcs8.as_ref().to_vec())
    }

    fn from_pkcs8(pkcs8: Vec<u8>) -> Result<Self> {
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8)
            .map_err(|_| anyhow!("not a P-256 private key"))?;
        let signing = EncodingKey::from_ec_der(&pkcs8);
        let jwk = Jwk::from_encoding_key(&signing, Algorithm::ES256).context("cannot read the public key")?;
        Ok(Self { pkcs8, signing, jwk })
    }

    /// The key as `credentials.json` keeps it: `{"alg": "ES256", "pkcs8": "<base64url>"}`.
    pub fn to_stored(&self) -> Value {
        json!({"alg": ALG, "pkcs8": URL_SAFE_NO_PAD.encode(&self.pkcs8)})
    }

    /// The key [`ProofKey::to_stored`] wrote; the error says what is wrong, never the key.
    pub fn from_stored(value: &Value) -> Result<Self> {
        if value.get("alg").and_then(Value::as_str) != Some(ALG) {
            return Err(anyhow!("\"alg\" must be \"{ALG}\""));
        }
        let pkcs8 = value
            .get("pkcs8")
            .and_then(Value::as_str)
            .and_then(|text| URL_SAFE_NO_PAD.decode(text).ok())
            .ok_or_else(|| anyhow!("\"pkcs8\" must be a base64url PKCS #8 key"))?;
        Self::from_pkcs8(pkcs8)
    }

    /// A fresh proof for one request: `method` to `url` (its query and fragment left out, as
    /// RFC 9449 says), bound to `token` when one is presented with it (`ath`), with the
    /// server's `nonce` when it gave one.
    pub fn proof(&self, method: &str, url: &str, token: Option<&str>, nonce: Option<&str>) -> Result<String> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some(PROOF_TYPE.into());
        header.jwk = Some(self.jwk.clone());
        let mut jti = [0u8; 16];
        getrandom::fill(&mut jti).map_err(|e| anyhow!("no randomness for a DPoP proof: {e}"))?;
        let iat = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default();
        let claims = Claims {
            jti: URL_SAFE_NO_PAD.encode(jti),
            htm: method,
            htu: without_query(url),
            iat,
            ath: token.map(|t| URL_SAFE_NO_PAD.encode(Sha256::digest(t.as_bytes()))),
            nonce,
        };
        jsonwebtoken::encode(&header, &claims, &self.signing).context("cannot sign the DPoP proof")
    }
}

/// `url` without query and fragment: a proof's `htu` (RFC 9449 §4.2), and how endpoints are
/// compared.
fn without_query(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut url) => {
            url.set_query(None);
            url.set_fragment(None);
            url.into()
        }
        Err(_) => url.to_string(),
    }
}

/// Whether a sign-in at the authorization server of `metadata` binds its tokens to a key: the
/// server lists `ES256` among its DPoP algorithms, or lists none and the resource's challenge
/// asked for the `DPoP` scheme. A server listing only other algorithms gets a bearer sign-in.
pub fn wanted(metadata: &AuthorizationMetadata, challenge: Option<&str>) -> bool {
    match metadata.additional_fields.get("dpop_signing_alg_values_supported") {
        Some(Value::Array(algs)) => algs.iter().any(|a| a.as_str() == Some(ALG)),
        _ => challenge.is_some_and(|c| scheme_of(c).eq_ignore_ascii_case(SCHEME)),
    }
}

/// The auth scheme a `WWW-Authenticate` value starts with.
fn scheme_of(challenge: &str) -> &str {
    challenge.trim_start().split([' ', ',']).next().unwrap_or_default()
}

/// Whether a challenge or an OAuth error body says "use a nonce".
pub fn asks_for_nonce(text: &str) -> bool {
    text.contains(USE_NONCE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(jwt: &str, index: usize) -> Value {
        let text = jwt.split('.').nth(index).unwrap_or_default();
        let bytes = URL_SAFE_NO_PAD.decode(text).unwrap_or_default();
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    }

    #[test]
    fn a_proof_names_the_request_and_carries_only_the_public_key() -> Result<()> {
        let key = ProofKey::generate()?;
        let proof = key.proof("POST", "https://mcp.example.com/mcp?x=1#f", Some("tok"), Some("n1"))?;
        let (header, claims) = (part(&proof, 0), part(&proof, 1));
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert!(header["jwk"].get("d").is_none(), "{header}");
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example.com/mcp");
        assert_eq!(claims["nonce"], "n1");
        // base64url(SHA-256("tok")), RFC 9449 §4.2.
        assert_eq!(claims["ath"], URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")));
        let again = key.proof("POST", "https://mcp.example.com/mcp", None, None)?;
        assert_ne!(part(&again, 1)["jti"], claims["jti"]);
        assert!(part(&again, 1).get("ath").is_none());
        assert!(part(&again, 1).get("nonce").is_none());
        Ok(())
    }

    #[test]
    fn a_proof_verifies_with_the_key_in_its_header() -> Result<()> {
        let key = ProofKey::generate()?;
        let proof = key.proof("GET", "https://mcp.example.com/mcp", None, None)?;
        let header = jsonwebtoken::decode_header(&proof)?;
        let jwk = header.jwk.ok_or_else(|| anyhow!("no jwk"))?;
        let decoding = jsonwebtoken::DecodingKey::from_jwk(&jwk)?;
        let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<Value>(&proof, &decoding, &validation)?.claims;
        assert_eq!(claims["htm"], "GET");
        // Another key's proof does not pass for this one.
        let other = ProofKey::generate()?.proof("GET", "https://mcp.example.com/mcp", None, None)?;
        assert!(jsonwebtoken::decode::<Value>(&other, &decoding, &validation).is_err());
        Ok(())
    }

    #[test]
    fn the_stored_key_is_the_same_key_and_a_bad_one_is_named_not_shown() -> Result<()> {
        let key = ProofKey::generate()?;
        let back = ProofKey::from_stored(&key.to_stored())?;
        assert_eq!(serde_json::to_value(&back.jwk)?, serde_json::to_value(&key.jwk)?);
        assert!(!format!("{back:?}").contains(&URL_SAFE_NO_PAD.encode(&key.pkcs8)));
        let err = ProofKey::from_stored(&json!({"alg": "ES256", "pkcs8": "AAAA"})).err();
        assert_eq!(err.map(|e| e.to_string()).as_deref(), Some("not a P-256 private key"));
        let err = ProofKey::from_stored(&json!({"alg": "RS256", "pkcs8": "AAAA"})).err();
        assert_eq!(err.map(|e| e.to_string()).as_deref(), Some("\"alg\" must be \"ES256\""));
        Ok(())
    }

    #[test]
    fn dpop_is_used_where_the_server_offers_es256_or_asks_for_the_scheme() {
        let with = |algs: Option<Value>| {
            let mut m = AuthorizationMetadata::default();
            if let Some(algs) = algs {
                m.additional_fields.insert("dpop_signing_alg_values_supported".into(), algs);
            }
            m
        };
        assert!(wanted(&with(Some(json!(["RS256", "ES256"]))), None));
        assert!(!wanted(&with(Some(json!(["RS256"]))), Some("DPoP algs=\"RS256\"")));
        assert!(!wanted(&with(None), Some("Bearer resource_metadata=\"x\"")));
        assert!(wanted(&with(None), Some("DPoP resource_metadata=\"x\"")));
        assert!(!wanted(&with(None), None));
    }
}
