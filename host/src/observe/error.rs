//! Why telemetry could not start or report: an OTLP variable that names no protocol, an exporter
//! that cannot be built, a registry that cannot be rendered. Its own type so these failures do not
//! travel as bare text; the message names the variable or the step.

/// A telemetry failure, in the words users read.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ObserveError(pub String);

crate::message_error::message_error!(ObserveError);
