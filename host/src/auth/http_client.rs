//! The HTTP client under a streamable HTTP server's transport once OAuth is in play: a stored
//! sign-in's token ([`StoredToken`]: one silent refresh on a rejected token), a machine grant's
//! (rmcp's `AuthClient`, or a token for the whole connection) over our auditing client, plus
//! the step-up rmcp leaves to its caller: a `403 insufficient_scope` runs the
//! sign-in again for the larger scope and retries the request, at most
//! [`MAX_SCOPE_STEP_UPS`] times per connection, so a server that keeps asking cannot loop.
//! Only where a person is at hand ([`CredentialsFile::signs_in_here`]): elsewhere the scope is
//! kept for the next `toolport mcp login` and the request fails saying to run it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError};

use super::dpop::requests::Proofs;
use super::sign_in::{self, Completion, Reason};
use super::sign_in_span::traced;
use super::store::CredentialsFile;
use super::stored_token::StoredToken;
use super::{machine, workload};
use crate::config::{Grant, ServerDef};
use crate::http_layer::{Headers, HttpLayer, Layered, Request};
use crate::observe::Observer;

/// Sign-ins one connection may run for a larger scope; with the first sign-in, a server
/// sees at most three authorization requests for one task.
pub const MAX_SCOPE_STEP_UPS: u32 = 2;

type HttpError<C> = StreamableHttpError<<C as StreamableHttpClient>::Error>;

/// What requests go out through: plain, or with OAuth tokens.
#[derive(Clone)]
enum Via<C> {
    Plain(C),
    /// A stored sign-in's token.
    Stored(Arc<StoredToken<C>>),
    /// rmcp's token handling (a client-credentials grant) over the layer that binds DPoP
    /// tokens to their key.
    Signed(AuthClient<Layered<Proofs<C>>>),
}

impl<C: StreamableHttpClient + Sync> Via<C> {
    /// Sends one request through whichever client the connection uses now.
    async fn send<R: Request>(
        &self,
        request: R,
        token: Option<String>,
        headers: Headers,
    ) -> Result<R::Output, HttpError<C>> {
        match self {
            Via::Plain(c) => request.send_via(c, token, headers).await,
            Via::Stored(s) => s.send(request, token, headers).await,
            Via::Signed(c) => request.send_via(c, token, headers).await,
        }
    }
}

/// A streamable HTTP client that signs requests when the server needs it. Clones share the
/// tokens and the step-up count (rmcp clones its client per request).
#[derive(Clone)]
pub struct OAuthHttp<C> {
    plain: C,
    route: Arc<Mutex<Route<C>>>,
    step_up: Option<Arc<StepUp>>,
    /// A machine grant's definition, to fetch a new token when the server refuses the old one
    /// (client credentials have no refresh token; a workload token is simply fetched again).
    machine: Option<Arc<ServerDef>>,
    /// Where its sign-ins are recorded and their addresses told.
    observer: Observer,
}

/// How the next request goes out.
#[derive(Clone)]
struct Route<C> {
    via: Via<C>,
    /// A token for the whole connection (`jwt_bearer`, `enterprise`), sent as is.
    bearer: Option<String>,
}

/// What a step-up needs: the definition and where its tokens live.
struct StepUp {
    def: ServerDef,
    file: CredentialsFile,
    done: AtomicU32,
}

impl<C: StreamableHttpClient + Clone + Send + Sync + 'static> OAuthHttp<C> {
    /// The client for `def` (already expanded): signed with a machine grant's token, or with
    /// stored tokens, or plain (a 401 then says to run `toolport mcp login`). A definition
    /// that sets its own `Authorization` header is left alone: the header is the credential.
    pub async fn new(
        def: &ServerDef,
        file: Option<&CredentialsFile>,
        observer: &Observer,
        plain: C,
    ) -> Result<Layered<Self>, String> {
        let own_header = def.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
        let grant = def.oauth.as_ref().map(|o| o.grant).filter(|_| !own_header);
        let machine = grant.filter(|g| *g != Grant::AuthorizationCode).map(|_| Arc::new(def.clone()));
        let route = match (&machine, file, def.url.as_deref()) {
            _ if own_header => Route { via: Via::Plain(plain.clone()), bearer: None },
            (Some(def), _, _) => machine_route(def, observer, &plain).await?,
            (None, Some(file), Some(url)) => Route { via: stored(def, file, url, &plain)?, bearer: None },
            (None, _, _) => Route { via: Via::Plain(plain.clone()), bearer: None },
        };
        let step_up = match (own_header || machine.is_some(), file) {
            (false, Some(file)) => {
                Some(Arc::new(StepUp { def: def.clone(), file: file.clone(), done: AtomicU32::new(0) }))
            }
            _ => None,
        };
        let observer = observer.clone();
        Ok(Layered(Self { plain, route: Arc::new(Mutex::new(route)), step_up, machine, observer }))
    }

    /// Who sends the next request, and the `Authorization` token it carries when ours.
    fn route(&self, auth_header: &Option<String>) -> (Via<C>, Option<String>) {
        let route = self.route.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        (route.via, auth_header.clone().or(route.bearer))
    }

    /// Sends a POST with `send`, again after each step-up it earns, and once more with a new
    /// machine token when the server refused the old one.
    async fn post<T, F, Fut>(&self, auth_header: &Option<String>, send: F) -> Result<T, HttpError<C>>
    where
        F: Fn(Via<C>, Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError<C>>>,
    {
        let mut renewed = false;
        loop {
            let (via, token) = self.route(auth_header);
            match send(via, token).await {
                Err(e) if self.step_up(&e).await => continue,
                Err(StreamableHttpError::AuthRequired(e)) if !renewed && self.renew().await => {
                    tracing::debug!("token refused ({e}); sending again with a new one");
                    renewed = true;
                }
                other => return other,
            }
        }
    }

    /// A machine grant's new token in place of the refused one; `false` when there is no
    /// machine grant or no new token.
    async fn renew(&self) -> bool {
        let Some(def) = &self.machine else { return false };
        match machine_route(def, &self.observer, &self.plain).await {
            Ok(route) => {
                *self.route.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = route;
                true
            }
            Err(e) => {
                tracing::warn!(server = %def.name, "cannot renew the token: {e}");
                false
            }
        }
    }

    /// After a `403 insufficient_scope` on a signed request: sign in again for the larger
    /// scope and switch to the new tokens. `false` when no step-up is possible or allowed.
    async fn step_up(&self, error: &HttpError<C>) -> bool {
        let (Some(step), StreamableHttpError::InsufficientScope(scope)) = (&self.step_up, error) else {
            return false;
        };
        // Unsigned, the refusal says "sign in" like a 401 does: no browser opens unasked.
        let signed = matches!(
            self.route.lock().unwrap_or_else(std::sync::PoisonError::into_inner).via,
            Via::Stored(_) | Via::Signed(_)
        );
        if !signed {
            return false;
        }
        if step.done.fetch_add(1, Ordering::SeqCst) >= MAX_SCOPE_STEP_UPS {
            tracing::warn!(server = %step.def.name, "the server asks for more scope again; giving up after {MAX_SCOPE_STEP_UPS} step-ups");
            return false;
        }
        let more_scopes: Vec<String> = scope
            .get_required_scope()
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        if !step.file.signs_in_here() {
            // Nobody to look at a browser: the scope waits for the next `mcp login`, and the
            // request fails as "authorization required", which names that command.
            keep_wanted(step, more_scopes).await;
            return false;
        }
        let reason = Reason { challenge: Some(scope.www_authenticate_header.clone()), more_scopes };
        tracing::info!(server = %step.def.name, "the server needs more scope; signing in again");
        let signing_in = sign_in::sign_in(&self.observer, &step.def, &step.file, Completion::Browser, reason);
        if let Err(e) = traced(&step.def.name, "authorization_code", signing_in).await {
            tracing::warn!(server = %step.def.name, "step-up sign-in failed: {e:#}");
            return false;
        }
        let Some(url) = step.def.url.as_deref() else { return false };
        match stored(&step.def, &step.file, url, &self.plain) {
            Ok(via @ Via::Stored(_)) => {
                *self.route.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Route { via, bearer: None };
                true
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(server = %step.def.name, "{e}");
                false
            }
        }
    }
}

/// Keeps `scopes` for the next `mcp login` of `step`'s server (a failure only costs that login
/// the larger scope, so it is logged, not raised).
async fn keep_wanted(step: &StepUp, scopes: Vec<String>) {
    let (Some(url), file) = (step.def.url.clone(), step.file.clone()) else { return };
    tracing::warn!(
        server = %step.def.name,
        "the server needs more scope ({}); run toolport mcp login {} (no sign-in starts by itself here)",
        scopes.join(" "),
        step.def.name
    );
    let kept = tokio::task::spawn_blocking(move || file.want_scopes(&url, &scopes)).await;
    match kept {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::warn!(server = %step.def.name, "cannot keep the scope for the next login: {e}")
        }
        Err(e) => tracing::warn!(server = %step.def.name, "cannot keep the scope for the next login: {e}"),
    }
}

/// A fresh token for a machine grant (`def.oauth.grant` is not the authorization code).
async fn machine_route<C: StreamableHttpClient + Clone + Send + Sync + 'static>(
    def: &ServerDef,
    observer: &Observer,
    plain: &C,
) -> Result<Route<C>, String> {
    let grant = def.oauth.as_ref().map(|o| o.grant);
    let fail = |e: anyhow::Error| format!("{e:#}");
    Ok(match grant {
        Some(Grant::JwtBearer) => {
            let token = traced(&def.name, "jwt_bearer", workload::token(def)).await.map_err(fail)?;
            Route { via: Via::Plain(plain.clone()), bearer: Some(token) }
        }
        Some(Grant::Enterprise) => Route {
            via: Via::Plain(plain.clone()),
            bearer: Some(
                traced(&def.name, "enterprise", machine::enterprise_token(observer, def))
                    .await
                    .map_err(fail)?,
            ),
        },
        _ => {
            let manager = traced(&def.name, "client_credentials", machine::authorize(observer, def))
                .await
                .map_err(fail)?;
            Route { via: Via::Signed(AuthClient::new(Proofs::bearer(plain.clone()), manager)), bearer: None }
        }
    })
}

/// How the requests to `url` go out with its stored sign-in: signed with the stored token, or
/// plain when nothing is stored (a 401 then says to run `toolport mcp login`).
fn stored<C: StreamableHttpClient + Clone + Send + Sync + 'static>(
    def: &ServerDef,
    file: &CredentialsFile,
    url: &str,
    plain: &C,
) -> Result<Via<C>, String> {
    Ok(match StoredToken::new(def, file, url, plain)? {
        Some(signed) => Via::Stored(Arc::new(signed)),
        None => Via::Plain(plain.clone()),
    })
}

impl<C: StreamableHttpClient + Clone + Send + Sync + 'static> HttpLayer for OAuthHttp<C> {
    type Error = C::Error;

    /// A POST goes through `post` (again after a step-up or with a new machine token); the
    /// others once, through the client the connection uses now.
    async fn send<R: Request>(
        &self,
        request: R,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<R::Output, HttpError<C>> {
        if R::METHOD != "POST" {
            let (via, token) = self.route(&auth_header);
            return via.send(request, token, headers).await;
        }
        self.post(&auth_header, |via, token| {
            let (request, headers) = (request.clone(), headers.clone());
            async move { via.send(request, token, headers).await }
        })
        .await
    }
}
