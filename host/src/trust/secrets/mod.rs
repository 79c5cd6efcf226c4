//! Secrets kept out of calls (issue 28 item 4): the pure half. A scanner of text for
//! secret-shaped values — gitleaks' maintained rules (`gitleaks.toml`, embedded, see
//! `gitleaks.NOTICE.md`; read by `patterns.rs`, applied by `scanner.rs`) and high-entropy
//! tokens (`entropy.rs`) — and the book of configured secrets, the values toolport expanded
//! from `${VAR}` into each server's definition (`configured.rs`). What a hit means for a call
//! (redact, block) is decided at call time, in `runtime/calls/secret_guard.rs`.

mod configured;
mod entropy;
mod patterns;
mod scanner;

pub use configured::SecretBook;
pub use scanner::{redact, scan};
