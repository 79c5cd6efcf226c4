//! One line for a failed connection or request: the innermost cause, not the wrappers' prose.
//! Below both `auth` and `transport`, which each name failures this way.

use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpError,
};

use crate::redact::redact_urls;
use crate::text::clip_foreign;

/// What a server's row says while it waits for a sign-in (reference line of issue 14).
pub const AUTHORIZATION_REQUIRED: &str = "authorization required";

/// The innermost error's message: what actually went wrong, without the wrappers' prose.
/// rmcp does not link two of its wrappers as `source()` (the transport error inside an
/// initialize error, the HTTP client's error inside its own), so those hops are taken by hand.
pub fn deepest_cause(error: &(dyn std::error::Error + 'static)) -> String {
    match deepest(error) {
        Deepest::AuthorizationRequired => AUTHORIZATION_REQUIRED.to_string(),
        Deepest::Message(message) => message,
    }
}

/// What [`deepest`] found at the bottom of an error's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deepest {
    /// A 401, or a 403 no step-up could answer: a state with a fix, not the server's prose.
    AuthorizationRequired,
    /// The innermost error's message, clipped and with URLs redacted.
    Message(String),
}

/// [`deepest_cause`], a missing sign-in kept apart so callers can match on it.
pub fn deepest(error: &(dyn std::error::Error + 'static)) -> Deepest {
    let mut current = error;
    loop {
        // A 401 (or a 403 no step-up could answer) is not the server's prose but a state with
        // a fix: said the same way everywhere, and never with the challenge's text.
        if current.downcast_ref::<AuthRequiredError>().is_some()
            || current.downcast_ref::<InsufficientScopeError>().is_some()
        {
            return Deepest::AuthorizationRequired;
        }
        let next: Option<&(dyn std::error::Error + 'static)> =
            if let Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) =
                current.downcast_ref()
            {
                Some(error)
            } else if let Some(StreamableHttpError::Client(inner)) =
                current.downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(inner)
            } else {
                current.source()
            };
        match next {
            Some(next) => current = next,
            None => break,
        }
    }
    let text = current.to_string();
    let text = if text.trim().is_empty() { error.to_string() } else { text };
    // A server or a proxy wrote this text; it becomes a row's error, so it is clipped here.
    // reqwest quotes the whole URL, which may carry an expanded `${TOKEN}`: redacted here.
    Deepest::Message(redact_urls(&clip_foreign(&text)).into_owned())
}
