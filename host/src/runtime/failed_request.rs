//! A request that failed, read two ways: one line for a person, and whether the connection is
//! gone (rather than the server saying no).

use rmcp::service::ServiceError;

use crate::cause::{AUTHORIZATION_REQUIRED, Deepest, deepest};

/// One line for a failed request: the server's own message for JSON-RPC errors, otherwise the
/// deepest cause.
pub fn service_error(error: &ServiceError) -> String {
    match service_cause(error) {
        Deepest::AuthorizationRequired => AUTHORIZATION_REQUIRED.to_string(),
        Deepest::Message(message) => message,
    }
}

/// [`service_error`], a missing sign-in (a 401 on the way) kept apart to match on.
pub fn service_cause(error: &ServiceError) -> Deepest {
    match error {
        // The server's own words, clipped where the error is built.
        ServiceError::McpError(data) => {
            Deepest::Message(crate::text::clip_foreign(&data.message).into_owned())
        }
        other => deepest(other),
    }
}

/// Whether the request failed because the connection is gone (rather than the server saying no).
pub fn is_transport_failure(error: &ServiceError) -> bool {
    matches!(error, ServiceError::TransportClosed | ServiceError::TransportSend(_))
}
