//! Fixtures the test groups share, one module per group it was made for: a temporary home and
//! the built binary (`common`), real peers installed once (`peers`), and the ways to drive
//! each entry point and each kind of misbehaving server or component; a folder even root
//! cannot write to (`immutable`).

pub(crate) mod acp;
pub(crate) mod auth;
pub(crate) mod common;
pub(crate) mod component;
pub(crate) mod faults;
pub(crate) mod immutable;
pub(crate) mod issuer;
pub(crate) mod operator;
pub(crate) mod peers;
pub(crate) mod runtime;
pub(crate) mod serve;
pub(crate) mod session;
pub(crate) mod transport;
pub(crate) mod wasm;
