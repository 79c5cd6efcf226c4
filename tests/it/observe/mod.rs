//! Observing toolport (issue 29): what passes through it, as its operators see it.

mod metrics;
mod status;
