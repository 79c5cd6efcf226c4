//! Issue 30: one serve for a team.

pub mod replicas;
