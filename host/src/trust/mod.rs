//! Trust in what servers say (issue 28): offline, deterministic checks of a server's
//! definitions — its instructions, its tools' names, titles, descriptions and schemas, its
//! prompts and resources, each read as a model reads it (issue 44) — for text aimed at the
//! model rather than the user, and the pins of those definitions (`.toolport/tools.lock`)
//! that hold a tool whose definition changed after it was trusted. The rules are data
//! (`rules.json`); the checks and the pins know nothing of connections or files: the caller
//! hands them the definitions as listed and the lock's text.
//! `secrets/` is the scanner of call arguments and results for secrets (the call guard in
//! `runtime/calls/secret_guard.rs` applies it), and `audit` the record of every decision.

pub mod audit;
mod checks;
mod confirm_rule;
mod definitions;
mod lookalike;
mod matchers;
mod normalise;
mod pins;
mod rules;
pub mod secrets;
mod word_diff;

pub use checks::{Finding, Span, scan};
pub(crate) use confirm_rule::{CONFIRM_RULE, confirm_reason};
pub use definitions::{ListedTool, ServerDefinitions};
pub use lookalike::PinnedNames;
pub use pins::{HoldReason, InstructionsVerdict, Lock, Pin, Verdict, instructions_verdict, verdict};
pub use rules::{Rule, RulesError, Severity, rules};
pub use word_diff::{fields as diff_fields, text as diff_text};
