//! Why a server could not be connected, as a type the runtime matches on (was it a missing
//! sign-in, did the connection drop, did it time out) instead of comparing texts. Its
//! `Display` is the one line a server's row and `toolport mcp list` show, and the only place
//! a missing sign-in's fix is named ([`crate::auth::fix_for`]).

use std::fmt;
use std::time::Duration;

use crate::cause::{AUTHORIZATION_REQUIRED, Deepest};
use crate::config::{Grant, ServerDef};
use crate::status::CONNECT_TIMED_OUT;

/// A failed connect (or the first `tools/list` after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectError {
    /// A 401, or a 403 no step-up could answer: the fix is a sign-in, or for a machine grant,
    /// what was refused.
    AuthorizationRequired {
        /// The server's name, for the login command.
        server: String,
        /// The definition's OAuth grant, when it names one.
        grant: Option<Grant>,
    },
    /// The sandbox refused the server something (its first refusal, with the grant that
    /// allows it), then maybe how the start ended.
    Refused {
        /// The refusal as the host recorded it.
        refusal: String,
        /// How the start failed after it, if that says more.
        then: Option<Box<ConnectError>>,
    },
    /// The server's process exited (status and stderr) or its connection closed, in the
    /// transport's words.
    Exited(String),
    /// No handshake within the connect timeout.
    TimedOut {
        /// The connect timeout.
        after: Duration,
    },
    /// The first `tools/list` took longer than the list timeout.
    ListTimedOut {
        /// The list timeout.
        after: Duration,
    },
    /// Any other failure: the definition could not be used, the process could not start, the
    /// transport failed, the server answered with an error. Its deepest cause, one line.
    Failed(String),
    /// `error` and what explains it, appended: what a stdio server printed that is not
    /// JSON-RPC, a package runner's slow first start and its fix.
    Noted {
        /// The failure.
        error: Box<ConnectError>,
        /// The explanation, with its leading separator (`; the server printed …`).
        note: String,
    },
}

impl ConnectError {
    /// The missing sign-in of `def`.
    pub fn authorization_required(def: &ServerDef) -> Self {
        Self::AuthorizationRequired { server: def.name.clone(), grant: crate::auth::grant(def) }
    }

    /// `error`'s deepest cause ([`crate::cause::deepest_cause`]), a missing sign-in as such.
    pub fn from_cause(error: &(dyn std::error::Error + 'static), def: &ServerDef) -> Self {
        match crate::cause::deepest(error) {
            Deepest::AuthorizationRequired => Self::authorization_required(def),
            Deepest::Message(message) => Self::Failed(message),
        }
    }

    /// Whether the server wants a sign-in (its reason needs no wait for the connection's end).
    pub fn is_authorization_required(&self) -> bool {
        match self {
            Self::AuthorizationRequired { .. } => true,
            Self::Noted { error, .. } => error.is_authorization_required(),
            _ => false,
        }
    }

    /// Whether the connect timeout ran out.
    pub fn is_timeout(&self) -> bool {
        match self {
            Self::TimedOut { .. } => true,
            Self::Noted { error, .. } => error.is_timeout(),
            _ => false,
        }
    }

    /// This error with `note` appended (with its own separator); unchanged when there is none.
    pub fn noted(self, note: Option<String>) -> Self {
        match note {
            Some(note) => Self::Noted { error: Box::new(self), note },
            None => self,
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AuthorizationRequired { server, grant } => {
                f.write_str(&crate::auth::fix_for(AUTHORIZATION_REQUIRED.to_string(), server, *grant))
            }
            Self::Refused { refusal, then: Some(then) } => write!(f, "{refusal}; {then}"),
            Self::Refused { refusal, then: None } => f.write_str(refusal),
            Self::Exited(reason) | Self::Failed(reason) => f.write_str(reason),
            Self::TimedOut { after } => write!(f, "{CONNECT_TIMED_OUT}{} ms", after.as_millis()),
            Self::ListTimedOut { after } => write!(f, "tools/list timed out after {} ms", after.as_millis()),
            Self::Noted { error, note } => write!(f, "{error}{note}"),
        }
    }
}

impl std::error::Error for ConnectError {}

/// A transport helper's message (it names what failed already) is a [`ConnectError::Failed`].
impl From<String> for ConnectError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

impl From<&str> for ConnectError {
    fn from(message: &str) -> Self {
        Self::Failed(message.to_string())
    }
}

/// For the callers that keep the message as text.
impl From<ConnectError> for String {
    fn from(error: ConnectError) -> Self {
        error.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn says_what_users_read() {
        let def = ServerDef { name: "docs".into(), ..ServerDef::default() };
        assert_eq!(
            ConnectError::authorization_required(&def).to_string(),
            "authorization required: run toolport mcp login docs"
        );
        let timed_out = ConnectError::TimedOut { after: Duration::from_millis(30_000) };
        assert!(timed_out.is_timeout());
        assert_eq!(timed_out.to_string(), "connect timed out after 30000 ms");
        let refused = ConnectError::Refused {
            refusal: "not granted: x".into(),
            then: Some(Box::new(ConnectError::Exited("process exited with status 1".into()))),
        };
        assert_eq!(refused.to_string(), "not granted: x; process exited with status 1");
        let noted = ConnectError::Failed("closed".into()).noted(Some("; the server printed".into()));
        assert_eq!(noted.to_string(), "closed; the server printed");
    }
}
