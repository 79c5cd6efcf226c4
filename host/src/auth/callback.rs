//! The loopback redirect target of a sign-in (RFC 8252 §7.3): `http://127.0.0.1:PORT/callback`
//! on an ephemeral port, or the definition's `callbackPort` for a client registered with one
//! fixed redirect URI. It answers the browser with a short page and hands the full redirect
//! URL (code, state, iss, or error) to the waiting sign-in; the first request to the path wins.

use std::net::{Ipv4Addr, SocketAddr};

use anyhow::{Context as _, Result};
use axum::extract::State;
use axum::response::Html;
use tokio::sync::{mpsc, oneshot};

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";

/// A bound callback listener; dropping it stops the server.
pub struct Callback {
    redirect_uri: String,
    urls: mpsc::Receiver<String>,
    _stop: oneshot::Sender<()>,
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
        let base = format!("http://127.0.0.1:{port}");
        let app = axum::Router::new().route(CALLBACK_PATH, axum::routing::get(answer)).with_state((tx, base));
        tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = served.await {
                tracing::debug!("sign-in callback server: {e}");
            }
        });
        Ok(Self { redirect_uri, urls, _stop: stop })
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The next redirect URL the browser brought; `None` if the server stopped.
    pub async fn next(&mut self) -> Option<String> {
        self.urls.recv().await
    }
}

async fn answer(
    State((tx, base)): State<(mpsc::Sender<String>, String)>,
    uri: axum::http::Uri,
) -> Html<&'static str> {
    // `try_send`: a second request (a browser's retry) must not block or replace the first.
    let _ = tx.try_send(format!("{base}{uri}"));
    Html(
        "<!doctype html><meta charset=utf-8><title>toolport</title>\
         <p>toolport received the sign-in. You can close this tab and return to the terminal.</p>",
    )
}
