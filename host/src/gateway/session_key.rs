//! The key replicas of `serve --http` share (`--session-key-env VAR`), and the one thing done
//! with it: sealing a value a client carries back to us (a session id) so that any replica can
//! open it and nobody else can forge or alter it. AES-256-GCM from `aws-lc-rs` (already the
//! crate's JOSE backend), the key derived from the variable's value with HKDF-SHA256, so any
//! passphrase-like value of enough length becomes a uniform 256-bit key.

use std::fmt;
use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use aws_lc_rs::hkdf::{HKDF_SHA256, Salt};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The shortest value accepted: 32 characters of `openssl rand -base64 32` carry 192 bits and
/// more, and anything shorter is likely a placeholder typed by hand.
pub const MIN_SECRET_CHARS: usize = 32;
/// HKDF's salt: names this use, so the same secret used elsewhere gives another key.
const SALT: &[u8] = b"toolport serve sealed values v1";
/// What a sealed value starts with: the format's version, so a later format can be told apart.
const PREFIX: &str = "tp1.";

/// What a sealed value is for, bound into it (the AEAD's associated data): a value sealed for
/// one purpose does not open as another.
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    /// A 2025-11-25 session id (`sealed_sessions.rs`). Its second form, which names its caller
    /// and expiry: an id of the first form (from a replica not yet upgraded) does not open, so
    /// no replica takes up a session without those checks.
    Session,
}

impl Purpose {
    fn aad(self) -> &'static [u8] {
        match self {
            Purpose::Session => b"session/2",
        }
    }
}

/// The shared key, derived; its value is never printed.
#[derive(Clone)]
pub struct SessionKey {
    key: Arc<LessSafeKey>,
}

impl fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionKey(***)")
    }
}

/// Why a secret cannot be a session key.
#[derive(Debug, thiserror::Error)]
pub enum SessionKeyError {
    /// Fewer than [`MIN_SECRET_CHARS`] characters.
    #[error(
        "the session key is {0} characters; it needs at least {MIN_SECRET_CHARS} (make one with \
         `openssl rand -base64 32`, and give every replica the same)"
    )]
    Short(usize),
    /// The cryptographic library refused (not expected).
    #[error("cannot derive the session key")]
    Derive,
}

impl SessionKey {
    /// The key derived from `secret`, the value every replica is given.
    pub fn from_secret(secret: &str) -> Result<Self, SessionKeyError> {
        let chars = secret.chars().count();
        if chars < MIN_SECRET_CHARS {
            return Err(SessionKeyError::Short(chars));
        }
        let prk = Salt::new(HKDF_SHA256, SALT).extract(secret.as_bytes());
        let okm = prk.expand(&[b"aes-256-gcm"], &AES_256_GCM).map_err(|_| SessionKeyError::Derive)?;
        let key = LessSafeKey::new(UnboundKey::from(okm));
        Ok(Self { key: Arc::new(key) })
    }

    /// `plain` sealed for `purpose`: `tp1.` and base64url of a random nonce, the ciphertext and
    /// its tag. Random 96-bit nonces are safe for far more values than a gateway seals before
    /// its key is rotated. `None` only when the system has no randomness.
    pub fn seal(&self, purpose: Purpose, plain: &[u8]) -> Option<String> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).ok()?;
        let mut sealed = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(purpose.aad()),
                &mut sealed,
            )
            .ok()?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Some(format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(out)))
    }

    /// What [`SessionKey::seal`] sealed for `purpose`; `None` for anything else (another key,
    /// another purpose, one bit changed, not a sealed value at all).
    pub fn open(&self, purpose: Purpose, sealed: &str) -> Option<Vec<u8>> {
        let bytes = URL_SAFE_NO_PAD.decode(sealed.strip_prefix(PREFIX)?).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, rest) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut rest = rest.to_vec();
        let plain = self.key.open_in_place(nonce, Aad::from(purpose.aad()), &mut rest).ok()?;
        Some(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn key(secret: &str) -> SessionKey {
        SessionKey::from_secret(secret).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_sealed_value_opens_with_the_same_secret_only() {
        let sealed = key(SECRET).seal(Purpose::Session, b"hello").unwrap_or_default();
        assert!(sealed.starts_with("tp1."), "{sealed}");
        assert_eq!(key(SECRET).open(Purpose::Session, &sealed).as_deref(), Some(&b"hello"[..]));
        let other = format!("{SECRET}!");
        assert_eq!(key(&other).open(Purpose::Session, &sealed), None);
    }

    #[test]
    fn a_changed_or_foreign_value_does_not_open() {
        let key = key(SECRET);
        let sealed = key.seal(Purpose::Session, b"hello").unwrap_or_default();
        let mut tampered = sealed.clone().into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).unwrap_or_default();
        assert_eq!(key.open(Purpose::Session, &tampered), None);
        assert_eq!(key.open(Purpose::Session, "tp1."), None);
        assert_eq!(key.open(Purpose::Session, "3f1c2a9e-uuid"), None);
        assert_ne!(key.seal(Purpose::Session, b"hello"), Some(sealed), "each seal has its own nonce");
    }

    #[test]
    fn a_short_secret_is_refused_saying_how_to_make_one() {
        let Err(e) = SessionKey::from_secret("hunter2") else { panic!("accepted") };
        assert_eq!(
            e.to_string(),
            "the session key is 7 characters; it needs at least 32 (make one with `openssl rand \
             -base64 32`, and give every replica the same)"
        );
        assert_eq!(format!("{:?}", key(SECRET)), "SessionKey(***)");
    }
}
