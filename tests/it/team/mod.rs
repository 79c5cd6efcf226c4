//! Issue 30, serving a team: identity, per-caller policy, bundles, limits and replicas.

pub mod bundles;
pub mod policy;
