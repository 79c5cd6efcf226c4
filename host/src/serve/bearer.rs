//! The one bearer-token check of `serve --http`, for `/mcp` and for the operator's endpoints
//! that are not probes (`/metrics`, `/status`): the same header, the same constant-time
//! comparison, the same 401.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq as _;

/// Whether `headers` carry `Authorization: Bearer <token>`, compared in constant time.
pub fn carries(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else { return false };
    given.as_bytes().ct_eq(token.as_bytes()).into()
}

/// The answer to a request without the token: 401 with `WWW-Authenticate: Bearer`.
pub fn refused() -> Response {
    let mut refused = (StatusCode::UNAUTHORIZED, "a bearer token is required\n").into_response();
    refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    refused
}
