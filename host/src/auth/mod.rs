//! OAuth for HTTP servers (rmcp's `auth` feature): where toolport keeps what a sign-in earns.

pub mod store;
