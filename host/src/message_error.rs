//! The conversions every message-only error type shares (`ConfigError`, `SandboxError`,
//! `SetupError`, `ObserveError`): a layer's failure that is one sentence for a person, typed so
//! it does not travel as bare text between layers, yet built from and compared with text where
//! the sentence is made (a private helper's message, a test's expected words). Declared once
//! here so the four types cannot drift apart.

/// Implements, for a `struct $name(pub String)`: `From<String>`, `From<&str>`, `From<$name> for
/// String`, `Deref<Target = str>` and comparison with `&str` and `String`.
macro_rules! message_error {
    ($name:ident) => {
        /// A helper's message (it names what failed already) becomes the error as it is.
        impl From<String> for $name {
            fn from(message: String) -> Self {
                Self(message)
            }
        }

        impl From<&str> for $name {
            fn from(message: &str) -> Self {
                Self(message.to_string())
            }
        }

        /// For the callers that keep the message as text.
        impl From<$name> for String {
            fn from(error: $name) -> Self {
                error.0
            }
        }

        /// The message as users read it (tests compare it, callers add to it).
        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.0 == *other
            }
        }
    };
}

pub(crate) use message_error;
