//! Why telemetry could not start or report: an OTLP variable that names no protocol, an exporter
//! that cannot be built, a registry that cannot be rendered. Its own type so these failures do not
//! travel as bare text; the message names the variable or the step.

/// A telemetry failure, in the words users read.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ObserveError(pub String);

/// A helper's message (it names what failed already) becomes the error as it is.
impl From<String> for ObserveError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<&str> for ObserveError {
    fn from(message: &str) -> Self {
        Self(message.to_string())
    }
}

/// For the callers that keep the message as text.
impl From<ObserveError> for String {
    fn from(error: ObserveError) -> Self {
        error.0
    }
}

/// The message as users read it (tests compare it).
impl std::ops::Deref for ObserveError {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<&str> for ObserveError {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
