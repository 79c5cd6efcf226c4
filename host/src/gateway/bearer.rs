//! The one bearer-token check of `serve --http`, for `/mcp` and for the operator's endpoints
//! that are not probes (`/metrics`, `/status`): the same header, the same check, the same
//! refusal. Either one shared token (`--token-env`, compared in constant time: one-user
//! setups) or JWT access tokens from an OpenID issuer (`--auth oidc`, `oidc/`), where a valid
//! token becomes the request's [`Caller`](crate::serve::Caller), put in its extensions before rmcp
//! sees it.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq as _;
use tokio_util::sync::CancellationToken;

use super::oidc::{self, OidcOptions, Verifier};

/// How `serve --http` knows its callers ([`HttpOptions::auth`](super::HttpOptions::auth)).
#[derive(Clone, Default, PartialEq, Eq)]
pub enum HttpAuth {
    /// No check: loopback only.
    #[default]
    Open,
    /// One token every client sends (`--token-env`).
    Token(String),
    /// JWT access tokens from an issuer (`--auth oidc`).
    Oidc(OidcOptions),
}

impl std::fmt::Debug for HttpAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open => f.write_str("Open"),
            Self::Token(_) => f.write_str("Token(***)"),
            Self::Oidc(options) => f.debug_tuple("Oidc").field(options).finish(),
        }
    }
}

/// The check [`HttpAuth`] asks for, started.
#[derive(Clone)]
pub enum Bearer {
    Open,
    Token(Arc<str>),
    Oidc(Arc<Verifier>),
}

impl Bearer {
    /// The check for `auth`; with OIDC, the issuer's keys start being fetched (until `stop`).
    pub fn start(auth: &HttpAuth, stop: &CancellationToken) -> anyhow::Result<Self> {
        Ok(match auth {
            HttpAuth::Open => Self::Open,
            HttpAuth::Token(token) => Self::Token(token.as_str().into()),
            HttpAuth::Oidc(options) => Self::Oidc(Verifier::start(options.clone(), stop.child_token())?),
        })
    }

    /// Lets `request` in, or answers why not. With OIDC the request then carries its caller.
    pub async fn admit(&self, request: &mut Request) -> Result<(), Response> {
        match self {
            Self::Open => Ok(()),
            Self::Token(token) => match given(request.headers()) {
                Some(given) if bool::from(given.as_bytes().ct_eq(token.as_bytes())) => Ok(()),
                _ => Err(refused()),
            },
            Self::Oidc(verifier) => {
                let caller = verifier.verify(given(request.headers())).await;
                match caller {
                    Ok(caller) => {
                        request.extensions_mut().insert(caller);
                        Ok(())
                    }
                    Err(refusal) => Err(oidc::refused(verifier.options(), request.headers(), refusal)),
                }
            }
        }
    }

    /// Whether a valid token names its caller (OIDC): then callers differ, and the operator's
    /// endpoints ask the policy who operates. A shared token's holder, or anyone where there
    /// is no check, is the one operator.
    pub fn names_callers(&self) -> bool {
        matches!(self, Self::Oidc(_))
    }

    /// With OIDC, whether the issuer's keys are known yet (a replica that cannot check a token
    /// is not ready for callers); `None` for the other checks, which are always ready.
    pub fn keys_known(&self) -> Option<bool> {
        match self {
            Self::Oidc(verifier) => Some(verifier.keys_known()),
            _ => None,
        }
    }

    /// The routes the check adds: with OIDC, the protected-resource metadata.
    pub fn routes(&self) -> axum::Router {
        match self {
            Self::Oidc(verifier) => oidc::router(Arc::new(verifier.options().clone())),
            _ => axum::Router::new(),
        }
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case, RFC 9110 §11.1).
fn given(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The answer to a request without the shared token: 401 with `WWW-Authenticate: Bearer`.
fn refused() -> Response {
    let mut refused = (StatusCode::UNAUTHORIZED, "a bearer token is required\n").into_response();
    refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    refused
}
