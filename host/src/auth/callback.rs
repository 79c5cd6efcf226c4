//! The loopback redirect target of a sign-in (RFC 8252 §7.3): `http://127.0.0.1:PORT/callback`
//! on an ephemeral port, or the definition's `callbackPort` for a client registered with one
//! fixed redirect URI. It answers the browser with a short page and hands the full redirect
//! URL (code, state, iss, or error) to the waiting sign-in.
//!
//! Only a request carrying this sign-in's `state` counts: anything on this machine (another
//! user, a web page the person has open) can send a request to a loopback port, and without the
//! check a forged `?error=…` would end the sign-in with a message of the sender's choosing, and
//! a forged `?code=…` would make the real redirect arrive too late. Any other request is
//! answered 400 and the listener keeps waiting; the first request with the state wins.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};

use anyhow::{Context as _, Result};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Html;
use subtle::ConstantTimeEq as _;
use tokio::sync::{mpsc, oneshot};

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";

/// The page for the browser that brought this sign-in's redirect.
const RECEIVED: &str = "<!doctype html><meta charset=utf-8><title>toolport</title>\
     <p>toolport received the sign-in. You can close this tab and return to the terminal.</p>";
/// The page for any other request: it is not the sign-in toolport is waiting for.
const NOT_THIS_SIGN_IN: &str = "<!doctype html><meta charset=utf-8><title>toolport</title>\
     <p>This is not the sign-in toolport is waiting for (its state does not match). \
     toolport keeps waiting; finish the sign-in from the page it opened.</p>";

/// A bound callback listener; dropping it stops the server.
pub struct Callback {
    redirect_uri: String,
    urls: mpsc::Receiver<String>,
    /// The `state` of the authorization request, known only once the request is made (after
    /// binding: the request names this listener's address). Until then nothing is accepted.
    state: Arc<OnceLock<String>>,
    _stop: oneshot::Sender<()>,
}

/// What the request handler shares with [`Callback`].
#[derive(Clone)]
struct Shared {
    tx: mpsc::Sender<String>,
    base: String,
    state: Arc<OnceLock<String>>,
}

impl Callback {
    /// Binds `127.0.0.1:port` (0: any free port) and starts answering.
    pub async fn bind(port: Option<u16>) -> Result<Self> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port.unwrap_or(0)));
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| match port {
            Some(p) => format!("cannot listen for the sign-in redirect on port {p} (oauth.callbackPort)"),
            None => "cannot listen for the sign-in redirect on a loopback port".to_string(),
        })?;
        let port = listener.local_addr().context("cannot read the callback port")?.port();
        let (tx, urls) = mpsc::channel(1);
        let (stop, stopped) = oneshot::channel::<()>();
        let redirect_uri = format!("http://127.0.0.1:{port}{CALLBACK_PATH}");
        let state = Arc::new(OnceLock::new());
        let shared = Shared { tx, base: format!("http://127.0.0.1:{port}"), state: state.clone() };
        let app = axum::Router::new().route(CALLBACK_PATH, axum::routing::get(answer)).with_state(shared);
        tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = served.await {
                tracing::debug!("sign-in callback server: {e}");
            }
        });
        Ok(Self { redirect_uri, urls, state, _stop: stop })
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// From now on, requests carrying `state` (the authorization request's) are handed on;
    /// any other is refused. Set once: a second call keeps the first state.
    pub fn expect_state(&self, state: &str) {
        let _ = self.state.set(state.to_string());
    }

    /// The next redirect URL the browser brought with the expected state; `None` if the
    /// server stopped.
    pub async fn next(&mut self) -> Option<String> {
        self.urls.recv().await
    }
}

/// Whether `query` (a redirect's query string) carries exactly `expected` as its `state`,
/// compared in constant time (the state is the one secret a forger lacks).
pub fn has_state(query: &str, expected: &str) -> bool {
    let mut states = url::form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == "state");
    match (states.next(), states.next()) {
        (Some((_, state)), None) => bool::from(state.as_bytes().ct_eq(expected.as_bytes())),
        // None, or two: which one rmcp would read is not ours to guess.
        _ => false,
    }
}

async fn answer(State(shared): State<Shared>, uri: axum::http::Uri) -> (StatusCode, Html<&'static str>) {
    let expected = shared.state.get();
    if !expected.is_some_and(|state| has_state(uri.query().unwrap_or_default(), state)) {
        // Not the URL: a forged one may carry anything, a stale one a code.
        tracing::warn!(
            "the sign-in callback ignored a request without this sign-in's state; still waiting for the browser"
        );
        return (StatusCode::BAD_REQUEST, Html(NOT_THIS_SIGN_IN));
    }
    // `try_send`: a second request (a browser's retry) must not block or replace the first.
    let _ = shared.tx.try_send(format!("{}{uri}", shared.base));
    (StatusCode::OK, Html(RECEIVED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_one_expected_state_counts() {
        assert!(has_state("code=c&state=s3cr%2Ft&iss=x", "s3cr/t"));
        assert!(!has_state("code=c&state=other", "s3cr/t"));
        assert!(!has_state("error=access_denied", "s3cr/t"));
        assert!(!has_state("state=s3cr%2Ft&state=other", "s3cr/t"));
        assert!(!has_state("state=", "s3cr/t"));
        assert!(!has_state("", "s3cr/t"));
    }
}
