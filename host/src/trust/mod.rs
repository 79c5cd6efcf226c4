//! Trust in what servers say (issue 28): offline, deterministic checks of a server's
//! definitions — its instructions and its tools' names, titles, descriptions and schema
//! descriptions — for text aimed at the model rather than the user. The rules are data
//! (`rules.json`); this module knows nothing of connections: the caller hands it the
//! definitions as listed.

pub mod audit;
mod checks;
mod confirm_rule;
mod matchers;
mod rules;

pub use checks::{Finding, ListedTool, ServerDefinitions, Span, scan};
pub(crate) use confirm_rule::{CONFIRM_RULE, confirm_reason};
pub use rules::{Rule, RulesError, Severity, rules};
