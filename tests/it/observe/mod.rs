//! Observing toolport (issue 29): what passes through it, as its operators see it — the audit
//! log of every call, read, prompt and sign-in, the metrics, and the live status.

mod audit;
mod metrics;
mod status;
