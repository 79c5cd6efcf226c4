//! What a client needs to sign in (RFC 9728, the MCP authorization spec): the protected-resource
//! metadata at `/.well-known/oauth-protected-resource` and at its path-inserted forms
//! (`…/oauth-protected-resource/mcp`, and under it for any path of this server), naming this
//! server's resource URL and the issuer; and the 401 that points at it:
//! `WWW-Authenticate: Bearer resource_metadata="<url>"`, with `error="invalid_token"` and
//! `error_description` when a token was given and failed.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use url::Url;

use super::options::OidcOptions;
use super::token::Refusal;

/// The metadata's well-known path (RFC 9728 §3).
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
/// How long a client waits before asking again while the issuer's keys are not known.
const RETRY_AFTER_SECONDS: &str = "5";

/// The metadata document's routes.
pub fn router(options: Arc<OidcOptions>) -> axum::Router {
    axum::Router::new()
        .route(WELL_KNOWN, get(document))
        .route(&format!("{WELL_KNOWN}/{{*path}}"), get(document))
        .with_state(options)
}

async fn document(State(options): State<Arc<OidcOptions>>, headers: HeaderMap) -> Response {
    let options = options.as_ref();
    let body = json!({
        "resource": resource(options, &headers),
        "authorization_servers": [options.issuer],
        "bearer_methods_supported": ["header"],
    });
    let kind = HeaderValue::from_static("application/json");
    ([(header::CONTENT_TYPE, kind)], format!("{body}\n")).into_response()
}

/// This server's resource URL for a request with `headers` ([`OidcOptions::resource`]).
pub fn resource(options: &OidcOptions, headers: &HeaderMap) -> String {
    if let Some(fixed) = options.fixed_resource() {
        return fixed;
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    // The client's own word, put in a URL and a header: only what a host name may hold.
    let plain = !host.is_empty()
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
    format!("http://{}/mcp", if plain { host } else { "localhost" })
}

/// Where the metadata of `resource` is: the well-known path inserted before its path (RFC 9728
/// §3.1), `https://gw.example/mcp` → `https://gw.example/.well-known/oauth-protected-resource/mcp`.
pub fn metadata_url(resource: &str) -> String {
    match Url::parse(resource) {
        Ok(url) => {
            let path = url.path().trim_end_matches('/');
            format!("{}{WELL_KNOWN}{path}", url.origin().ascii_serialization())
        }
        Err(_) => WELL_KNOWN.to_string(),
    }
}

/// The answer to a request `refusal` keeps out.
pub fn refused(options: &OidcOptions, headers: &HeaderMap, refusal: Refusal) -> Response {
    let pointer = format!("resource_metadata=\"{}\"", quotable(&metadata_url(&resource(options, headers))));
    let (status, challenge, body) = match refusal {
        Refusal::Missing => {
            (StatusCode::UNAUTHORIZED, format!("Bearer {pointer}"), "a bearer token is required\n".into())
        }
        Refusal::Invalid(why) => (
            StatusCode::UNAUTHORIZED,
            format!("Bearer {pointer}, error=\"invalid_token\", error_description=\"{}\"", quotable(&why)),
            format!("the bearer token is refused: {why}\n"),
        ),
        Refusal::Unavailable(why) => {
            let mut response =
                (StatusCode::SERVICE_UNAVAILABLE, format!("{why}; try again\n")).into_response();
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_SECONDS));
            return response;
        }
    };
    let mut response = (status, body).into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// `text` fit for a quoted-string of a header: printable ASCII without `"` and `\`.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '?' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(audience: &str) -> OidcOptions {
        OidcOptions { issuer: "https://issuer.example".into(), audience: audience.into(), resource: None }
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path() {
        assert_eq!(
            metadata_url("https://gw.example/mcp"),
            "https://gw.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8931"),
            "http://127.0.0.1:8931/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn without_a_url_audience_the_resource_is_the_request_host() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("gw.internal:8931"));
        assert_eq!(resource(&options("api://toolport"), &headers), "http://gw.internal:8931/mcp");
        assert_eq!(resource(&options("https://gw.example/mcp"), &headers), "https://gw.example/mcp");
        headers.insert(header::HOST, HeaderValue::from_static("evil\"host"));
        assert_eq!(resource(&options("api://toolport"), &headers), "http://localhost/mcp");
    }

    #[test]
    fn a_bad_token_is_told_why_in_the_challenge() {
        let refused = refused(
            &options("https://gw.example/mcp"),
            &HeaderMap::new(),
            Refusal::Invalid("the token has expired".into()),
        );
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            refused.headers().get(header::WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()),
            Some(
                "Bearer resource_metadata=\"https://gw.example/.well-known/oauth-protected-resource/mcp\", \
                 error=\"invalid_token\", error_description=\"the token has expired\""
            )
        );
    }
}
