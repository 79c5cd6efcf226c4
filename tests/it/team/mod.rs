//! Issue 30's team serve: who is calling, what they may call, limits and replicas.

pub mod bundles;
pub mod oidc;
pub mod policy;
