//! Secrets kept out of calls (issue 28 item 4): the pure half. A scanner of text for
//! secret-shaped values — gitleaks' maintained rules (`gitleaks.toml`, embedded, see
//! `gitleaks.NOTICE.md`; read by `patterns.rs`, applied by `scanner.rs`) and high-entropy
//! tokens (`entropy.rs`) — and the book of configured secrets, the values toolport expanded
//! from `${VAR}` into each server's definition (`configured.rs`); the walk of a server's JSON that finds them in every string, key and
//! text blob (`json_walk.rs`). What a hit means for a call
//! (redact, block) is decided at call time, in `runtime/calls/secret_guard.rs`.

mod configured;
mod entropy;
mod json_walk;
mod patterns;
mod scanner;

pub use configured::SecretBook;
pub use json_walk::{Found, mask_keys, redact_json, redact_object, redact_string};
pub use scanner::{Hit, redact, scan};
