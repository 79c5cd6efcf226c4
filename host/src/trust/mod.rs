//! Trust in what servers say (issue 28): offline, deterministic checks of a server's
//! definitions — its instructions and its tools' names, titles, descriptions and schema
//! descriptions — for text aimed at the model rather than the user. The rules are data
//! (`rules.json`); this module knows nothing of connections: the caller hands it the
//! definitions as listed. `secrets/` is the scanner of call arguments and results for
//! secrets (the call guard in `runtime/calls/secret_guard.rs` applies it), and `audit` the
//! record of every decision.

pub mod audit;
mod checks;
mod matchers;
mod rules;
pub mod secrets;

pub use checks::{Finding, ListedTool, ServerDefinitions, Span, scan};
pub use rules::{Rule, RulesError, Severity, rules};
