//! Sampling (`sampling/createMessage`): a server asks the client's model to write something.
//! toolport has no model, so by default every request is refused with [`NO_MODEL`]; an
//! embedding host that has one supplies a [`Sampler`]. The capability is advertised either way,
//! so a server that needs sampling gets a clear reason instead of quietly hiding its tools.

use futures::future::BoxFuture;
use serde_json::Value;

use super::related::Caller;

/// The refusal every sampling request gets when the host supplies no [`Sampler`].
pub const NO_MODEL: &str = "this host has no model: toolport answers sampling/createMessage only when the \
    program embedding it supplies a sampler";

/// What an embedding host that has a model answers a server's `sampling/createMessage` with.
pub trait Sampler: Send + Sync + 'static {
    /// `request` is the request's params as JSON (`messages`, `systemPrompt`, `maxTokens`, …);
    /// the result must be a `CreateMessageResult` as JSON (`role`, `content`, `model`). An
    /// `Err` is sent to the server as the refusal's message. `caller`: whose call it came
    /// during, when the host named its callers (`CallContext::caller`) and it is known.
    fn create_message(
        &self,
        server: &str,
        caller: Option<Caller>,
        request: Value,
    ) -> BoxFuture<'_, Result<Value, String>>;
}
