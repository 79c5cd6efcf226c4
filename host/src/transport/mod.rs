//! Placeholder: native transports (issue 4).
