//! Issue 30, one serve for a team: who is calling, what they may call, how often, and how it is
//! deployed.

pub mod bundles;
pub mod deploy;
pub mod limits;
pub mod names;
pub mod oidc;
pub mod operator;
pub mod policy;
pub mod replicas;
pub mod service_identity;
pub mod sessions;
