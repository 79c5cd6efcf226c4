//! Observing toolport (issue 29): what passes through it, as its operators see it — the audit
//! log of every call, read, prompt and sign-in, the metrics, the live status, and OpenTelemetry
//! spans over OTLP with trace context passed in and out.

mod audit;
mod dead_collector;
mod metrics;
mod status;
mod traces;
