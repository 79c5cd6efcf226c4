//! One request of rmcp's streamable HTTP client as a value: which of its six methods rmcp
//! called, with that method's arguments and limits, so a layer can send it (or send it again)
//! through the client below by the same method. Apart from the layers (`http_layer.rs`), which
//! build these and pass them down.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

/// The extra headers of a request, as rmcp passes them.
pub(crate) type Headers = HashMap<HeaderName, HeaderValue>;

/// One request of rmcp's streamable HTTP client, its arguments held so a layer can send it (or
/// send it again) with a token and headers of its own choosing.
pub(crate) trait Request: Clone + Send + Sync + 'static {
    /// What the request answers with.
    type Output: Send + 'static;
    /// The HTTP method (what a DPoP proof names).
    const METHOD: &'static str;
    /// Where it goes.
    fn uri(&self) -> &str;
    /// The MCP session it belongs to, if any.
    fn session_id(&self) -> Option<&str>;
    /// The JSON-RPC message it carries (a `POST`'s), for a layer that reads it.
    fn message(&self) -> Option<&ClientJsonRpcMessage> {
        None
    }
    /// Sends it through `client` with `auth_header` and `headers`, by the method rmcp called.
    fn send_via<C: StreamableHttpClient + Sync>(
        self,
        client: &C,
        auth_header: Option<String>,
        headers: Headers,
    ) -> impl Future<Output = Result<Self::Output, StreamableHttpError<C::Error>>> + Send;
}

/// A `POST` of one JSON-RPC message.
#[derive(Clone)]
pub(crate) struct Post {
    pub(super) uri: Arc<str>,
    pub(super) message: ClientJsonRpcMessage,
    pub(super) session_id: Option<Arc<str>>,
    pub(super) limits: PostLimits,
}

/// Which of the three POST methods rmcp called, with its limits.
#[derive(Clone, Copy)]
pub(super) enum PostLimits {
    None,
    MaxSseEvent(usize),
    Response(StreamableHttpResponseLimits),
}

/// The `DELETE` that ends a session.
#[derive(Clone)]
pub(crate) struct Delete {
    pub(super) uri: Arc<str>,
    pub(super) session_id: Arc<str>,
}

/// A `GET` of an event stream, with the event size limit when rmcp gave one.
#[derive(Clone)]
pub(crate) struct Get {
    pub(super) uri: Arc<str>,
    pub(super) session_id: Option<Arc<str>>,
    pub(super) last_event_id: Option<String>,
    pub(super) max_sse_event_size: Option<usize>,
}

impl Request for Post {
    type Output = StreamableHttpPostResponse;
    const METHOD: &'static str = "POST";

    fn uri(&self) -> &str {
        &self.uri
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn message(&self) -> Option<&ClientJsonRpcMessage> {
        Some(&self.message)
    }

    async fn send_via<C: StreamableHttpClient + Sync>(
        self,
        client: &C,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<Self::Output, StreamableHttpError<C::Error>> {
        let Post { uri, message, session_id, limits } = self;
        match limits {
            PostLimits::None => client.post_message(uri, message, session_id, auth_header, headers).await,
            PostLimits::MaxSseEvent(max) => {
                client
                    .post_message_with_max_sse_event_size(uri, message, session_id, auth_header, headers, max)
                    .await
            }
            PostLimits::Response(limits) => {
                client
                    .post_message_with_response_limits(uri, message, session_id, auth_header, headers, limits)
                    .await
            }
        }
    }
}

impl Request for Delete {
    type Output = ();
    const METHOD: &'static str = "DELETE";

    fn uri(&self) -> &str {
        &self.uri
    }

    fn session_id(&self) -> Option<&str> {
        Some(&self.session_id)
    }

    async fn send_via<C: StreamableHttpClient + Sync>(
        self,
        client: &C,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        client.delete_session(self.uri, self.session_id, auth_header, headers).await
    }
}

impl Request for Get {
    type Output = BoxedSseResponse;
    const METHOD: &'static str = "GET";

    fn uri(&self) -> &str {
        &self.uri
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    async fn send_via<C: StreamableHttpClient + Sync>(
        self,
        client: &C,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Result<BoxedSseResponse, StreamableHttpError<C::Error>> {
        let Get { uri, session_id, last_event_id, max_sse_event_size } = self;
        match max_sse_event_size {
            None => client.get_stream(uri, session_id, last_event_id, auth_header, headers).await,
            Some(max) => {
                client
                    .get_stream_with_max_sse_event_size(
                        uri,
                        session_id,
                        last_event_id,
                        auth_header,
                        headers,
                        max,
                    )
                    .await
            }
        }
    }
}
