//! One streamable HTTP client over another, written once. rmcp's `StreamableHttpClient` has six
//! methods (three POSTs, a DELETE, two GETs) and toolport stacks three layers of its own on
//! reqwest's: the `x-mcp-header` audit (`transport/http_audit.rs`), DPoP proofs
//! (`auth/dpop/requests.rs`) and OAuth's tokens with their step-up (`auth/http_client.rs`).
//! Each changes how any request goes out, or what comes back, the same way for all six; so a
//! layer is an [`HttpLayer`] — one `send` for every request, and hooks on the answers that
//! default to passing them through — and [`Layered`] is the one `StreamableHttpClient` over
//! any layer. Each method becomes a [`Request`] that calls the same method on the client
//! below, so the limits rmcp passes reach reqwest through whichever method rmcp chose.
//!
//! A leaf below `auth` and `transport`, which both use it: it imports no other module. What
//! one request is lives in `request.rs`; the trace context a request's `_meta` carries is put
//! in its headers by transport's bottom layer (`transport/trace_headers.rs`), which knows
//! whether traces are on.

mod request;

pub(crate) use request::{Headers, Request};

use std::sync::Arc;

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

/// A layer of the client: how every request goes out, and what it does to the answers.
pub(crate) trait HttpLayer: Clone + Send + Sync + 'static {
    /// The error of the client at the bottom.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Sends `request` with the token and headers rmcp gave: through the client below, as they
    /// are or changed, once or again.
    fn send<R: Request>(
        &self,
        request: R,
        auth_header: Option<String>,
        headers: Headers,
    ) -> impl Future<Output = Result<R::Output, StreamableHttpError<Self::Error>>> + Send;

    /// A POST's answer on its way up to rmcp.
    fn answered(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
        response
    }

    /// A GET's event stream on its way up to rmcp.
    fn streamed(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        stream
    }
}

use request::{Delete, Get, Post, PostLimits};

/// rmcp's streamable HTTP client over the layer `L`.
#[derive(Clone)]
pub(crate) struct Layered<L>(pub(crate) L);

type Answer<T, L> = Result<T, StreamableHttpError<<L as HttpLayer>::Error>>;

impl<L: HttpLayer> Layered<L> {
    async fn post(
        &self,
        post: Post,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Answer<StreamableHttpPostResponse, L> {
        let response = self.0.send(post, auth_header, headers).await?;
        Ok(self.0.answered(response))
    }

    async fn get(
        &self,
        get: Get,
        auth_header: Option<String>,
        headers: Headers,
    ) -> Answer<BoxedSseResponse, L> {
        let stream = self.0.send(get, auth_header, headers).await?;
        Ok(self.0.streamed(stream))
    }
}

impl<L: HttpLayer> StreamableHttpClient for Layered<L> {
    type Error = L::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Answer<StreamableHttpPostResponse, L> {
        let post = Post { uri, message, session_id, limits: PostLimits::None };
        self.post(post, auth_header, custom_headers).await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Answer<StreamableHttpPostResponse, L> {
        let post = Post { uri, message, session_id, limits: PostLimits::MaxSseEvent(max_sse_event_size) };
        self.post(post, auth_header, custom_headers).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Answer<StreamableHttpPostResponse, L> {
        let post = Post { uri, message, session_id, limits: PostLimits::Response(limits) };
        self.post(post, auth_header, custom_headers).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Answer<(), L> {
        self.0.send(Delete { uri, session_id }, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Answer<BoxedSseResponse, L> {
        let get = Get { uri, session_id, last_event_id, max_sse_event_size: None };
        self.get(get, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Answer<BoxedSseResponse, L> {
        let get = Get { uri, session_id, last_event_id, max_sse_event_size: Some(max_sse_event_size) };
        self.get(get, auth_header, custom_headers).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use futures::StreamExt as _;
    use rmcp::model::{ClientNotification, InitializedNotification};

    use super::*;

    /// The client at the bottom: notes which of its methods was called, with the token.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<String>>>);

    impl Recorder {
        fn note(&self, method: &str, token: Option<String>) {
            if let Ok(mut calls) = self.0.lock() {
                calls.push(format!("{method} {}", token.unwrap_or_default()));
            }
        }

        fn calls(&self) -> Vec<String> {
            self.0.lock().map(|c| c.clone()).unwrap_or_default()
        }
    }

    type Sent<T> = Result<T, StreamableHttpError<std::io::Error>>;

    impl StreamableHttpClient for Recorder {
        type Error = std::io::Error;

        async fn post_message(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            token: Option<String>,
            _: Headers,
        ) -> Sent<StreamableHttpPostResponse> {
            self.note("post", token);
            Ok(StreamableHttpPostResponse::Accepted)
        }

        async fn post_message_with_max_sse_event_size(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            token: Option<String>,
            _: Headers,
            max: usize,
        ) -> Sent<StreamableHttpPostResponse> {
            self.note(&format!("post_max_sse({max})"), token);
            Ok(StreamableHttpPostResponse::Accepted)
        }

        async fn post_message_with_response_limits(
            &self,
            _: Arc<str>,
            _: ClientJsonRpcMessage,
            _: Option<Arc<str>>,
            token: Option<String>,
            _: Headers,
            limits: StreamableHttpResponseLimits,
        ) -> Sent<StreamableHttpPostResponse> {
            self.note(&format!("post_limits({})", limits.max_sse_event_size), token);
            Ok(StreamableHttpPostResponse::Accepted)
        }

        async fn delete_session(
            &self,
            _: Arc<str>,
            _: Arc<str>,
            token: Option<String>,
            _: Headers,
        ) -> Sent<()> {
            self.note("delete", token);
            Ok(())
        }

        async fn get_stream(
            &self,
            _: Arc<str>,
            _: Option<Arc<str>>,
            _: Option<String>,
            token: Option<String>,
            _: Headers,
        ) -> Sent<BoxedSseResponse> {
            self.note("get", token);
            Ok(futures::stream::empty().boxed())
        }

        async fn get_stream_with_max_sse_event_size(
            &self,
            _: Arc<str>,
            _: Option<Arc<str>>,
            _: Option<String>,
            token: Option<String>,
            _: Headers,
            max: usize,
        ) -> Sent<BoxedSseResponse> {
            self.note(&format!("get_max_sse({max})"), token);
            Ok(futures::stream::empty().boxed())
        }
    }

    /// A layer that names the method in the token and counts the answers it sees.
    #[derive(Clone, Default)]
    struct Stamp {
        below: Recorder,
        answers: Arc<Mutex<Vec<&'static str>>>,
    }

    impl Stamp {
        fn saw(&self, what: &'static str) {
            if let Ok(mut answers) = self.answers.lock() {
                answers.push(what);
            }
        }
    }

    impl HttpLayer for Stamp {
        type Error = std::io::Error;

        fn send<R: Request>(
            &self,
            request: R,
            _: Option<String>,
            headers: Headers,
        ) -> impl Future<Output = Result<R::Output, StreamableHttpError<std::io::Error>>> + Send {
            let token = format!("{} {}", R::METHOD, request.session_id().unwrap_or("-"));
            request.send_via(&self.below, Some(token), headers)
        }

        fn answered(&self, response: StreamableHttpPostResponse) -> StreamableHttpPostResponse {
            self.saw("answer");
            response
        }

        fn streamed(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
            self.saw("stream");
            stream
        }
    }

    /// Each of rmcp's six methods reaches the same method below, with its limit, through the
    /// layer's one `send`; a POST's answer and a GET's stream pass the layer's hooks.
    #[tokio::test]
    async fn every_method_reaches_its_own_method_below_through_the_layer() -> Result<(), String> {
        let layer = Stamp::default();
        let client = Layered(layer.clone());
        let (uri, session): (Arc<str>, Arc<str>) = ("http://127.0.0.1:1/mcp".into(), "s1".into());
        let message = ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
            InitializedNotification::default(),
        ));
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = 7;
        let fail = |e: StreamableHttpError<std::io::Error>| e.to_string();
        let none = Headers::new;
        client.post_message(uri.clone(), message.clone(), None, None, none()).await.map_err(fail)?;
        client
            .post_message_with_max_sse_event_size(uri.clone(), message.clone(), None, None, none(), 5)
            .await
            .map_err(fail)?;
        client
            .post_message_with_response_limits(
                uri.clone(),
                message,
                Some(session.clone()),
                None,
                none(),
                limits,
            )
            .await
            .map_err(fail)?;
        client.delete_session(uri.clone(), session.clone(), None, none()).await.map_err(fail)?;
        let stream = client.get_stream(uri.clone(), Some(session.clone()), None, None, none()).await;
        assert_eq!(stream.map_err(fail)?.count().await, 0);
        let stream = client.get_stream_with_max_sse_event_size(uri, None, None, None, none(), 9).await;
        assert_eq!(stream.map_err(fail)?.count().await, 0);
        assert_eq!(
            layer.below.calls(),
            [
                "post POST -",
                "post_max_sse(5) POST -",
                "post_limits(7) POST s1",
                "delete DELETE s1",
                "get GET s1",
                "get_max_sse(9) GET -",
            ]
        );
        let answers = layer.answers.lock().map(|a| a.clone()).unwrap_or_default();
        assert_eq!(answers, ["answer", "answer", "answer", "stream", "stream"]);
        Ok(())
    }
}
