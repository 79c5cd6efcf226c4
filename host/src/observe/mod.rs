//! What passes through toolport, made visible to the people who run it: the audit log of every
//! call, read and sign-in (`audit_log`), metrics (`metrics`: OpenTelemetry instruments, read by
//! OTLP and by `serve --http --metrics` as Prometheus text) and traces (spans bridged from
//! `tracing` to OpenTelemetry; `otlp_env` says whether and how to export).
//!
//! Just above `config`, whose workspace `audit` setting each exchange carries, and below
//! everything that observes: the runtime, the hosts and `auth` hand it what happened
//! ([`Exchange`]) and it never reaches back. Values never enter it unless the operator asked
//! for them (`audit.values`).

pub mod audit_log;
pub mod call_context;
mod error;
mod exchange;
pub mod metrics;
mod observer;
pub mod otlp_env;
pub mod traces;
mod writer;

pub use call_context::{CallContext, Caller};
pub use error::ObserveError;
pub use exchange::{Exchange, GuardStep, Kind, Outcome, json_size};
pub use observer::{AuditTrail, Observer};
