//! The issuer's public keys: fetched from its `jwks_uri`, kept by `kid`, refreshed every
//! [`REFRESH_EVERY`] (so a key the issuer withdrew stops working) and re-fetched when a token
//! names a `kid` not among them (a rotation), but at most once per [`REFETCH_AT_MOST_EVERY`]:
//! a flood of tokens with made-up `kid`s costs the issuer one request per interval, not one
//! each. Symmetric keys (`kty: oct`) are never kept: a shared secret would let whoever holds
//! it mint tokens, and an issuer does not publish one.

use std::collections::HashMap;
use std::str::FromStr as _;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::discovery;

/// How often the keys are fetched again while all is well: issuers rotate over days, and a
/// new key is fetched at once when a token names it; this bounds how long a withdrawn key
/// still verifies.
pub const REFRESH_EVERY: Duration = Duration::from_secs(300);
/// The least time between two fetches for an unknown `kid`: long enough that made-up `kid`s
/// cannot make serve hammer the issuer, short enough that a rotation is picked up at once in
/// practice (a new key's first token fetches it; only a bad `kid` just before delays it).
pub const REFETCH_AT_MOST_EVERY: Duration = Duration::from_secs(10);
/// The first wait before asking an issuer that failed again, doubled up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// How long one request to the issuer may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// One public key and the algorithms it may verify.
pub struct Key {
    pub decoding: DecodingKey,
    pub algorithms: Vec<Algorithm>,
}

/// What a token's `kid` finds.
pub enum Lookup {
    /// The key named, or with no `kid` every key: one of them must verify.
    Found(Vec<Arc<Key>>),
    /// No key has that `kid`, even after asking the issuer again (when that was allowed).
    Unknown,
    /// The keys were never fetched; why.
    NotYet(String),
}

#[derive(Default)]
struct Known {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys published without a `kid`.
    unnamed: Vec<Arc<Key>>,
    fetched: bool,
    /// Why the last fetch failed, while none ever succeeded.
    error: Option<String>,
}

#[derive(Default)]
struct Fetching {
    jwks_uri: Option<String>,
    last_refetch: Option<Instant>,
}

/// One issuer's keys.
pub struct Keys {
    issuer: String,
    client: reqwest::Client,
    known: RwLock<Known>,
    /// Held while fetching: concurrent requests for an unknown `kid` wait for one fetch.
    fetching: tokio::sync::Mutex<Fetching>,
}

impl Keys {
    /// No keys yet: [`Keys::keep_fresh`] fetches them.
    pub fn new(issuer: &str) -> anyhow::Result<Self> {
        // The process's one TLS configuration (`auth::tls`): the roots are read once.
        let client = crate::auth::tls::client_builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .context("cannot build the HTTP client for the issuer")?;
        Ok(Self {
            issuer: issuer.to_string(),
            client,
            known: RwLock::new(Known::default()),
            fetching: tokio::sync::Mutex::new(Fetching::default()),
        })
    }

    /// Fetches the keys now, then every [`REFRESH_EVERY`]; after a failure sooner, with a
    /// backoff. Until `stop`.
    pub async fn keep_fresh(self: Arc<Self>, stop: CancellationToken) {
        let mut backoff = RETRY_FIRST;
        loop {
            let wait = match self.refresh().await {
                Ok(count) => {
                    tracing::info!(issuer = %self.issuer, "the issuer's keys are known ({count})");
                    backoff = RETRY_FIRST;
                    REFRESH_EVERY
                }
                Err(e) => {
                    tracing::warn!(
                        "cannot fetch the keys of the issuer {}: {e:#}; trying again in {} s",
                        self.issuer,
                        backoff.as_secs()
                    );
                    let waited = backoff;
                    backoff = (backoff * 2).min(RETRY_MAX);
                    waited
                }
            };
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// Whether the keys were ever fetched: until then no token can be checked.
    pub fn known(&self) -> bool {
        self.known.read().unwrap_or_else(|poisoned| poisoned.into_inner()).fetched
    }

    /// The key(s) for a token's `kid`.
    pub async fn lookup(&self, kid: Option<&str>) -> Lookup {
        if let Some(found) = self.known_now(kid) {
            return found;
        }
        let Some(kid) = kid else { return Lookup::Unknown };
        let mut fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if let Some(found) = self.known_now(Some(kid)) {
            return found;
        }
        let now = Instant::now();
        if fetching.last_refetch.is_some_and(|last| now.duration_since(last) < REFETCH_AT_MOST_EVERY) {
            return Lookup::Unknown;
        }
        fetching.last_refetch = Some(now);
        if let Err(e) = self.fetch(&mut fetching).await {
            tracing::warn!("cannot fetch the keys of the issuer {} for a new key: {e:#}", self.issuer);
        }
        self.known_now(Some(kid)).unwrap_or(Lookup::Unknown)
    }

    /// What is known without asking: `None` when `kid` is unknown (and the keys were fetched).
    fn known_now(&self, kid: Option<&str>) -> Option<Lookup> {
        let known = self.known.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !known.fetched {
            let why = known.error.clone().unwrap_or_else(|| "they are being fetched".into());
            return Some(Lookup::NotYet(format!(
                "the keys of the issuer {} are not known yet: {why}",
                self.issuer
            )));
        }
        match kid {
            Some(kid) => known.by_kid.get(kid).map(|key| Lookup::Found(vec![key.clone()])),
            None => {
                let all: Vec<Arc<Key>> = known.by_kid.values().chain(&known.unnamed).cloned().collect();
                (!all.is_empty()).then_some(Lookup::Found(all))
            }
        }
    }

    /// Fetches the keys (one fetch at a time); how many there are.
    async fn refresh(&self) -> anyhow::Result<usize> {
        let mut fetching = self.fetching.lock().await;
        let fetched = self.fetch(&mut fetching).await;
        if let Err(e) = &fetched {
            let mut known = self.known.write().unwrap_or_else(|poisoned| poisoned.into_inner());
            if !known.fetched {
                known.error = Some(format!("{e:#}"));
            }
        }
        fetched
    }

    /// Discovers the `jwks_uri` (once; again after a failure) and replaces the keys with what
    /// it serves.
    async fn fetch(&self, fetching: &mut Fetching) -> anyhow::Result<usize> {
        let uri = match &fetching.jwks_uri {
            Some(uri) => uri.clone(),
            None => discovery::jwks_uri(&self.client, &self.issuer).await?,
        };
        fetching.jwks_uri = None;
        let jwks = discovery::get_json(&self.client, &uri).await?;
        let count = self.replace(&jwks).with_context(|| format!("{uri} is no key set"))?;
        fetching.jwks_uri = Some(uri);
        Ok(count)
    }

    /// Keeps the usable keys of the JWK set `jwks` instead of the old ones.
    pub fn replace(&self, jwks: &Value) -> anyhow::Result<usize> {
        let listed = jwks.get("keys").and_then(Value::as_array).context("no \"keys\" list")?;
        let mut by_kid = HashMap::new();
        let mut unnamed = Vec::new();
        for value in listed {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else { continue };
            let Some(key) = usable(&jwk) else { continue };
            match jwk.common.key_id {
                Some(kid) => {
                    by_kid.insert(kid, Arc::new(key));
                }
                None => unnamed.push(Arc::new(key)),
            }
        }
        let count = by_kid.len() + unnamed.len();
        let mut known = self.known.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        *known = Known { by_kid, unnamed, fetched: true, error: None };
        Ok(count)
    }
}

/// `jwk` as a key that verifies signatures, with the asymmetric algorithms it may verify: the
/// one its `alg` names, else those of its type. `None` for a symmetric key, a key meant for
/// encryption, or one that does not parse.
fn usable(jwk: &Jwk) -> Option<Key> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let by_type: Vec<Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => vec![
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(_) => vec![Algorithm::EdDSA],
        _ => return None,
    };
    let algorithms = match jwk.common.key_algorithm {
        Some(named) => {
            let named = Algorithm::from_str(&named.to_string()).ok()?;
            by_type.contains(&named).then(|| vec![named])?
        }
        None => by_type,
    };
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key { decoding, algorithms })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn symmetric_and_encryption_keys_are_not_kept() -> anyhow::Result<()> {
        let keys = Keys::new("https://issuer.example")?;
        let n = "sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw";
        let jwks = json!({"keys": [
            {"kty": "oct", "kid": "shared", "k": "c2VjcmV0"},
            {"kty": "RSA", "kid": "enc", "use": "enc", "n": n, "e": "AQAB"},
            {"kty": "RSA", "kid": "sig", "use": "sig", "alg": "RS256", "n": n, "e": "AQAB"},
            {"kty": "RSA", "kid": "hs", "alg": "HS256", "n": n, "e": "AQAB"},
            {"kty": "weird"},
        ]});
        assert_eq!(keys.replace(&jwks)?, 1);
        let known = keys.known.read().map_err(|_| anyhow::anyhow!("poisoned"))?;
        assert!(known.by_kid.contains_key("sig"));
        assert_eq!(known.by_kid.get("sig").map(|k| k.algorithms.clone()), Some(vec![Algorithm::RS256]));
        Ok(())
    }
}
