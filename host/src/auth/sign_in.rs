//! The authorization-code sign-in (OAuth 2.1 with PKCE S256) that `toolport mcp login`, the
//! session's `/mcp login` and a scope step-up run: discovery seeded by the server's own 401
//! challenge, a client identity chosen in the spec's order, the person's browser (or a pasted
//! redirect), the code exchanged, and the tokens stored under the server url and the issuer.
//! rmcp does the protocol (RFC 9728, RFC 8414 with the OpenID and 2025-03-26 fallbacks,
//! RFC 8707 resource checks, RFC 9207 `iss`, PKCE, state) over toolport's own OAuth client,
//! which adds the DPoP proofs of a server that binds its tokens (`dpop`); this module is the
//! person's side.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use rmcp::transport::auth::{AuthorizationManager, AuthorizationRequest, AuthorizationSession};
use tokio::io::AsyncBufReadExt as _;
use url::Url;

use super::callback::Callback;
use super::dpop::token_client::TokenClient;
use super::dpop::{self, ProofKey};
use super::store::CredentialsFile;
use crate::browser::{self, Shown};
use crate::config::{Grant, OAuthDef, ServerDef};
use crate::observe::{Exchange, Observer};
use crate::text::{clip_foreign, escape_line};

/// How long a sign-in waits for the browser's redirect (or the pasted address) before giving
/// up: long enough to type a password and pass a second factor.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// The client name toolport registers under (dynamic client registration).
const CLIENT_NAME: &str = "toolport";

/// Where a pasted redirect address comes from: the lines a person types (the binary gives
/// its stdin). The library reads them only while a sign-in waits.
pub type PastedLines = Box<dyn tokio::io::AsyncBufRead + Send + Unpin>;

/// How the person completes the sign-in.
pub enum Completion {
    /// The browser opens (or the URL is printed) and comes back to the loopback callback.
    Browser,
    /// `--no-browser`: the URL is printed and the final redirect address is pasted, one line
    /// read from these (the loopback callback still listens, for a browser on this same
    /// machine).
    Paste(PastedLines),
}

impl std::fmt::Debug for Completion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Browser => "Browser",
            Self::Paste(_) => "Paste",
        })
    }
}

/// What a finished sign-in obtained, for the person's confirmation line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The authorization server that issued the tokens.
    pub issuer: Option<String>,
    /// Scopes granted (as the token response or the request said).
    pub scopes: Vec<String>,
}

/// Why a sign-in is run, which decides the scopes asked for.
#[derive(Debug, Clone, Default)]
pub struct Reason {
    /// The `WWW-Authenticate` value of the server's 401 or 403, when there was one.
    pub challenge: Option<String>,
    /// A step-up: the scopes to ask for on top of what was granted.
    pub more_scopes: Vec<String>,
}

/// Why a person cannot sign in to `def`, in the words `mcp login` and `/mcp login` both say;
/// `None` when they can. Read before expanding `def`: a variable a machine grant or a header
/// needs is not the login's business.
pub fn no_login(def: &ServerDef) -> Option<String> {
    let name = &def.name;
    if let Some(why) = not_remote(def) {
        return Some(why);
    }
    if let Some(grant) = def.oauth.as_ref().map(|o| o.grant).filter(|g| *g != Grant::AuthorizationCode) {
        return Some(format!(
            "{name} signs in by itself (oauth.grant is {}): there is nothing to log in to",
            grant.as_str()
        ));
    }
    if def.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("authorization")) {
        return Some(format!(
            "{name} sends its own Authorization header, which toolport uses instead of OAuth: remove the header to sign in"
        ));
    }
    None
}

/// Why `def` has no sign-in to log in to or out of: a local (stdio) server; `None` for a
/// remote one.
pub fn not_remote(def: &ServerDef) -> Option<String> {
    let local = def.url.is_none() || def.transport.as_deref() == Some("stdio");
    local.then(|| format!("{} is not a remote server: only http and sse servers sign in", def.name))
}

/// `mcp login` and `/mcp login` once the server was asked for its `challenge` (what
/// `transport::login` does first). `def` is already expanded and passed [`no_login`].
pub async fn login(
    observer: &Observer,
    def: &ServerDef,
    file: &CredentialsFile,
    completion: Completion,
    challenge: Option<String>,
) -> Result<SignedIn> {
    // Scopes a request was refused for where nobody could sign in (`serve`, `call`, …).
    let url = def.url.clone().unwrap_or_default();
    let more_scopes = file.wanted_scopes(&url)?;
    let signing_in = sign_in(observer, def, file, completion, Reason { challenge, more_scopes });
    let signed_in = super::sign_in_span::traced(&def.name, "authorization_code", signing_in).await?;
    if let Err(e) = file.wanted_scopes_asked(&url) {
        tracing::warn!(server = %def.name, "{e}");
    }
    Ok(signed_in)
}

/// Runs the sign-in for `def` (already `${VAR}`-expanded; a network transport with a url).
/// Messages for the person go to stderr; nothing secret is printed.
pub async fn sign_in(
    observer: &Observer,
    def: &ServerDef,
    file: &CredentialsFile,
    completion: Completion,
    reason: Reason,
) -> Result<SignedIn> {
    // Observed (the audit log, the metrics) however it ends; never the token or the code.
    let started = std::time::Instant::now();
    let signed_in = sign_in_once(observer, def, file, completion, reason).await;
    let error = signed_in.is_err().then_some("sign-in-failed");
    observer.finished(&Exchange::sign_in(&def.name, started.elapsed(), error));
    signed_in
}

async fn sign_in_once(
    observer: &Observer,
    def: &ServerDef,
    file: &CredentialsFile,
    completion: Completion,
    reason: Reason,
) -> Result<SignedIn> {
    let url = def.url.as_deref().ok_or_else(|| anyhow!("server {} has no url to sign in to", def.name))?;
    let oauth = def.oauth.clone().unwrap_or_default();
    let server = Url::parse(url).context("the server url is not usable")?;
    let client = TokenClient::new(&server)?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(url, client.clone())
        .await
        .context("the server url is not usable")?;
    manager.set_credential_store(file.for_server(url));
    let resolution = manager
        .resolve_metadata_from_challenge(reason.challenge.as_deref())
        .await
        .context("cannot discover how this server signs in")?;
    if !resolution.source.is_discovered() {
        // The 2025-03-26 fallback endpoints are a guess; only a server that refused us earns it.
        if reason.challenge.is_none() {
            bail!("{} answered without asking for a sign-in and publishes no OAuth metadata", def.name);
        }
        tracing::info!(server = %def.name, "no OAuth metadata published; using the 2025-03-26 default endpoints");
    }
    let metadata = resolution.metadata;
    let issuer = metadata.issuer.clone();
    let takes_metadata_documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    manager.set_metadata(metadata.clone());
    let key = dpop::wanted(&metadata, reason.challenge.as_deref())
        .then(ProofKey::generate)
        .transpose()?
        .map(Arc::new);
    if let Some(key) = &key {
        client.bind(key.clone(), &metadata.token_endpoint);
    }

    let mut callback = Callback::bind(oauth.callback_port).await?;
    let redirect = callback.redirect_uri().to_string();
    let mut request = AuthorizationRequest::new(&redirect).with_client_name(CLIENT_NAME);
    request = match scopes(&oauth, &reason, file, url)? {
        Some(scopes) => request.with_scopes(scopes),
        // The challenge's `scope`, else the resource's `scopes_supported`, else none.
        None => request.with_initial_scope_selection(),
    };
    request = match identity(&oauth, takes_metadata_documents) {
        Identity::Registered { id, secret } => with_client(request, id, secret),
        Identity::MetadataDocument(document) => request.with_client_metadata_url(document),
        Identity::Register => {
            let scopes = if request.scopes.is_empty() {
                manager.select_initial_scopes(&[]).await
            } else {
                request.scopes.clone()
            };
            let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            let client = manager
                .register_client(CLIENT_NAME, &redirect, &scope_refs)
                .await
                .context("dynamic client registration failed")?;
            // Kept so a later process can refresh as this (confidential) client.
            if let Some(secret) = &client.client_secret {
                file.set_client_secret(url, issuer.as_deref(), &client.client_id, secret)?;
            }
            with_client(request, client.client_id, client.client_secret)
        }
    };
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, e)| anyhow!(e))?;

    let page = session.get_authorization_url();
    // The page is the authorization server's word: a `file:` or `vscode:` URL, or plain http to
    // another machine, is no sign-in page, whether opened or pasted.
    if let Err(why) = browser::openable(page) {
        bail!("the authorization server's sign-in page is not one toolport opens: {why}");
    }
    // The state rmcp put in the request: the one thing a forged redirect cannot know.
    let state = Url::parse(page)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
        .ok_or_else(|| anyhow!("the authorization request carries no state"))?;
    callback.expect_state(&state);
    show(observer, &def.name, page, &completion, &redirect);
    let answer = tokio::time::timeout(SIGN_IN_TIMEOUT, wait(observer, &mut callback, completion, &state))
        .await
        .map_err(|_| {
            anyhow!(
                "no sign-in after {} s; run `toolport mcp login {}` again (--no-browser to paste the address instead)",
                SIGN_IN_TIMEOUT.as_secs(),
                def.name
            )
        })??;
    session
        .handle_callback_with_issuer(&answer.code, &answer.state, answer.issuer.as_deref())
        .await
        .map_err(|e| anyhow!(e))?;
    file.set_metadata(url, issuer.as_deref(), &metadata)?;
    let status = file.status(url)?;
    let bound = status.as_ref().is_some_and(|s| s.bound);
    if key.is_some() && !bound {
        tracing::info!(server = %def.name, "the authorization server answered the DPoP proof with a bearer token");
    }
    // A new key per sign-in; none kept beside a bearer token, whatever an older sign-in left.
    file.set_dpop_key(url, issuer.as_deref(), key.as_deref().filter(|_| bound))?;
    let scopes = status.map(|s| s.scopes).unwrap_or_default();
    Ok(SignedIn { issuer, scopes })
}

/// The scopes to ask for explicitly, or `None` to let discovery choose: the definition's
/// `oauth.scopes` first; for a step-up, what was granted plus what the server now asks for.
fn scopes(
    oauth: &OAuthDef,
    reason: &Reason,
    file: &CredentialsFile,
    url: &str,
) -> Result<Option<Vec<String>>> {
    let mut scopes = oauth.scopes.clone().unwrap_or_default();
    if !reason.more_scopes.is_empty() {
        if scopes.is_empty() {
            scopes = file.status(url)?.map(|s| s.scopes).unwrap_or_default();
        }
        for scope in &reason.more_scopes {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
    }
    Ok((!scopes.is_empty()).then_some(scopes))
}

/// Who toolport is to the authorization server, in the spec's order.
enum Identity {
    /// A client registered beforehand (the definition's `clientId`).
    Registered { id: String, secret: Option<String> },
    /// A client ID metadata document the server accepts (SEP-991).
    MetadataDocument(String),
    /// Dynamic client registration.
    Register,
}

fn identity(oauth: &OAuthDef, takes_metadata_documents: bool) -> Identity {
    match (&oauth.client_id, &oauth.client_metadata_url) {
        (Some(id), _) => Identity::Registered { id: id.clone(), secret: oauth.client_secret.clone() },
        (None, Some(document)) if takes_metadata_documents => Identity::MetadataDocument(document.clone()),
        _ => Identity::Register,
    }
}

fn with_client(request: AuthorizationRequest, id: String, secret: Option<String>) -> AuthorizationRequest {
    let request = request.with_preregistered_client(id);
    match secret {
        Some(secret) => request.with_client_secret(secret),
        None => request,
    }
}

/// Puts the authorization URL in front of the person (stderr: stdout may be a protocol).
fn show(observer: &Observer, server: &str, url: &str, completion: &Completion, redirect: &str) {
    match completion {
        Completion::Paste(_) => {
            observer
                .tell(format_args!("To sign in to {server}, open this address in a browser:\n\n  {url}\n"));
            observer.tell(format_args!(
                "After signing in, the browser goes to an address starting with {redirect} \
                 (it may fail to load). Paste that whole address here and press Enter:"
            ));
        }
        Completion::Browser => match browser::open(url) {
            Shown::Opened(program) => {
                observer
                    .tell(format_args!("Signing in to {server}: opened the sign-in page with {program}."));
                observer.tell(format_args!("If it did not open, visit:\n\n  {url}\n"));
            }
            Shown::Printed => {
                observer.tell(format_args!(
                    "To sign in to {server}, open this address in a browser:\n\n  {url}\n"
                ));
                observer.tell(format_args!(
                    "(waiting for the browser to come back to {redirect}; use --no-browser to paste instead)"
                ));
            }
            // Checked before `show` (`browser::openable`): not reached.
            Shown::Refused(_) => {}
        },
    }
}

/// The authorization response of this sign-in, from the callback or (in paste mode) the pasted lines,
/// whichever brings one first. The callback hands on only requests with `state`; a pasted
/// address with another state (an old tab's) is said and the wait goes on.
async fn wait(
    observer: &Observer,
    callback: &mut Callback,
    completion: Completion,
    state: &str,
) -> Result<Answer> {
    let mut pasted = match completion {
        Completion::Paste(lines) => Some(lines.lines()),
        Completion::Browser => None,
    };
    loop {
        let address = tokio::select! {
            url = callback.next() => url.ok_or_else(|| anyhow!("the sign-in callback stopped"))?,
            line = next_pasted(&mut pasted) => line?,
        };
        match Answer::parse(&address, state)? {
            Some(answer) => return Ok(answer),
            None => observer.tell(format_args!(
                "That address belongs to another sign-in (its state is not this one's). \
                 Paste the address this sign-in's page sent the browser to:"
            )),
        }
    }
}

/// The next non-empty pasted line; never, when nothing is pasted (browser mode). Cancel-safe
/// (`Lines::next_line` is), so a callback winning the race loses no typed line.
async fn next_pasted(lines: &mut Option<tokio::io::Lines<PastedLines>>) -> Result<String> {
    let Some(lines) = lines else { return std::future::pending().await };
    loop {
        match lines.next_line().await.context("cannot read the pasted address")? {
            Some(line) if line.trim().is_empty() => continue,
            Some(line) => return Ok(line.trim().to_string()),
            None => bail!("the input ended before an address was pasted"),
        }
    }
}

/// The authorization response carried by the redirect address.
#[derive(Debug)]
struct Answer {
    code: String,
    state: String,
    issuer: Option<String>,
}

impl Answer {
    /// Reads `code`, `state` and `iss` of an address carrying `expected` as its state; `None`
    /// for an address of another sign-in (nothing else in it is believed, not even an error).
    /// An `error` the authorization server sent is the message, escaped to one line and
    /// clipped: its text is whoever made the redirect's.
    fn parse(address: &str, expected: &str) -> Result<Option<Self>> {
        let url = Url::parse(address).map_err(|_| {
            anyhow!("that is not an address: paste the whole address the browser was sent to (it starts with http://127.0.0.1:)")
        })?;
        if !super::callback::has_state(url.query().unwrap_or_default(), expected) {
            return Ok(None);
        }
        let param = |key: &str| url.query_pairs().find(|(k, _)| k == key).map(|(_, v)| v.into_owned());
        let shown = |text: String| escape_line(&clip_foreign(&text)).into_owned();
        if let Some(error) = param("error") {
            let detail = param("error_description").map(|d| format!(" ({})", shown(d))).unwrap_or_default();
            bail!("the authorization server refused the sign-in: {}{detail}", shown(error));
        }
        let code = param("code").ok_or_else(|| anyhow!("the address carries no authorization code"))?;
        Ok(Some(Self { code, state: expected.to_string(), issuer: param("iss") }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_is_read_and_refusals_are_the_message() {
        let parse = |address: &str| Answer::parse(address, "s").map_err(|e| e.to_string());
        let a = parse("http://127.0.0.1:5/callback?code=c&state=s&iss=https%3A%2F%2Fas");
        let a = a.map(|a| a.map(|a| (a.code, a.state, a.issuer)));
        assert_eq!(a, Ok(Some(("c".into(), "s".into(), Some("https://as".into())))));
        let refused = parse("http://127.0.0.1:5/callback?error=access_denied&error_description=no&state=s");
        assert_eq!(
            refused.map(|_| ()),
            Err("the authorization server refused the sign-in: access_denied (no)".to_string())
        );
        assert!(parse("4/0Ab-code").is_err());
        assert!(parse("http://127.0.0.1:5/callback?state=s").is_err());
    }

    #[test]
    fn an_address_of_another_sign_in_is_not_believed_and_a_refusal_is_one_line() {
        let parse = |address: &str| Answer::parse(address, "s").map_err(|e| e.to_string());
        for other in [
            "http://127.0.0.1:5/callback?error=access_denied&error_description=x%0AINFO%20forged",
            "http://127.0.0.1:5/callback?error=access_denied&state=t",
            "http://127.0.0.1:5/callback?code=c&state=t",
        ] {
            assert!(matches!(parse(other), Ok(None)), "{other}");
        }
        let refused = parse(
            "http://127.0.0.1:5/callback?state=s&error=bad%1B%5B2J&error_description=x%0D%0AINFO%20forged",
        );
        assert_eq!(
            refused.map(|_| ()),
            Err("the authorization server refused the sign-in: bad\\u{1b}[2J (x\\u{d}\\u{a}INFO forged)"
                .to_string())
        );
    }

    #[test]
    fn identity_follows_the_specs_order() {
        let mut o = OAuthDef { client_metadata_url: Some("https://c/m.json".into()), ..OAuthDef::default() };
        assert!(matches!(identity(&o, true), Identity::MetadataDocument(_)));
        assert!(matches!(identity(&o, false), Identity::Register));
        o.client_id = Some("pre".into());
        assert!(matches!(identity(&o, true), Identity::Registered { .. }));
    }
}
