//! The relay: what `serve` does with the questions and notices of a downstream server. A
//! server asks in the middle of a call, so the question goes to the client whose call it is
//! (the runtime tells which: `runtime::Related`), in the modes that client said it answers; a
//! client that cannot answer gets none, and when whose call it is cannot be told nobody is
//! asked: the server hears `decline`. Log messages go the same way, or, outside any call, to
//! the clients that set a log level (and to nobody when several calls are running and the
//! message could be any one's). A server set to `roots: "client"` is told the calling client's
//! roots, or, when no call is its cause, only what every client allows. Resource updates go to
//! the clients that subscribed to the URI.
// Sampling and logging are deprecated by SEP-2577 in 2026-07-28 but are what 2025-11-25
// servers and clients use.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, InputRequest, LoggingMessageNotificationParam,
    ResourceUpdatedNotificationParam, Root,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::input_rounds::Ask;
use crate::runtime::{
    self, ConfirmAnswer, Confirmation, Elicitation, ElicitationAnswer, ElicitationKind, ElicitationModes,
    Elicitor, HostClients, Related, Sampler, confirm_form,
};

/// One client call waiting on a downstream server.
#[derive(Clone)]
struct Caller {
    id: u64,
    /// The client session that made it (its roots).
    session: u64,
    server: String,
    peer: Peer<RoleServer>,
    capabilities: ClientCapabilities,
    /// For a 2026-07-28 client: where its questions go, to come back as an input-required
    /// result (it cannot be sent a request).
    asks: Option<mpsc::UnboundedSender<Ask>>,
}

/// A client's `resources/subscribe` of one URI.
#[derive(Clone)]
struct Subscriber {
    uri: String,
    session: u64,
    peer: Peer<RoleServer>,
}

/// Who is waiting on which server, and who subscribed to what.
#[derive(Default)]
pub struct Relay {
    next: AtomicU64,
    callers: Mutex<Vec<Caller>>,
    subscribers: Mutex<Vec<Subscriber>>,
    /// Sessions that sent `logging/setLevel`: they hear log messages no call is waiting for.
    listeners: Mutex<Vec<(u64, Peer<RoleServer>)>>,
    /// The roots each client session offered, for the servers set to `roots: "client"`.
    roots: Mutex<Vec<SessionRoots>>,
    /// The `subscriptions/listen` streams opened for a URI on a 2026-07-28 server (which has
    /// no `resources/subscribe`): the sender ends the stream once no client is subscribed.
    watches: Mutex<Vec<(String, oneshot::Sender<()>)>>,
}

/// One client session's roots.
struct SessionRoots {
    session: u64,
    peer: Peer<RoleServer>,
    roots: Vec<Root>,
}

/// Removes its caller from the relay when the call ends, however it ends.
pub struct Waiting {
    relay: Arc<Relay>,
    id: u64,
}

impl Waiting {
    /// The call as the runtime knows it: pass it in the call's `CallContext`.
    pub fn caller(&self) -> runtime::Caller {
        runtime::Caller(self.id)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        lock(&self.relay.callers).retain(|c| c.id != self.id);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Relay {
    /// Records that `session` (the client behind `peer`) now waits on `server`, until the
    /// guard drops.
    pub fn waiting(
        self: &Arc<Self>,
        server: &str,
        session: u64,
        peer: Peer<RoleServer>,
        capabilities: ClientCapabilities,
        asks: Option<mpsc::UnboundedSender<Ask>>,
    ) -> Waiting {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let caller = Caller { id, session, server: server.to_string(), peer, capabilities, asks };
        lock(&self.callers).push(caller);
        Waiting { relay: self.clone(), id }
    }

    /// The client call `caller` on `server`, while it waits.
    fn caller(&self, caller: Option<runtime::Caller>, server: &str) -> Option<Caller> {
        let runtime::Caller(id) = caller?;
        lock(&self.callers).iter().find(|c| c.id == id && c.server == server).cloned()
    }

    /// Keeps the roots `session` (the client behind `peer`) offers; `true` if that changed
    /// what a server may be told.
    pub fn set_roots(&self, session: u64, peer: Peer<RoleServer>, roots: Vec<Root>) -> bool {
        let mut all = lock(&self.roots);
        all.retain(|r| !r.peer.is_transport_closed());
        match all.iter_mut().find(|r| r.session == session) {
            Some(held) if held.roots == roots => false,
            Some(held) => {
                held.roots = roots;
                true
            }
            None => {
                all.push(SessionRoots { session, peer, roots });
                true
            }
        }
    }

    /// The roots for a `roots/list` during `caller`'s call: its client's; outside a call (or
    /// not known whose), only the folders every client allows. `None` when the client (or
    /// every client) gave none.
    fn roots_for(&self, caller: Option<runtime::Caller>) -> Option<Vec<Root>> {
        let session = caller.and_then(|runtime::Caller(id)| {
            lock(&self.callers).iter().find(|c| c.id == id).map(|c| c.session)
        });
        let mut all = lock(&self.roots);
        all.retain(|r| !r.peer.is_transport_closed());
        match session {
            Some(session) => all.iter().find(|r| r.session == session).map(|r| r.roots.clone()),
            None if all.is_empty() => None,
            None => Some(allowed_by_all(all.iter().map(|r| r.roots.as_slice()))),
        }
    }

    /// A number for one client session, for its subscriptions.
    pub fn session(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends `notifications/resources/updated` of `uri` to `session` (through `peer`) from now
    /// on; `true` if it is the first client subscribed to `uri` (the server is then asked).
    pub fn subscribe(&self, uri: &str, session: u64, peer: Peer<RoleServer>) -> bool {
        let mut subscribers = lock(&self.subscribers);
        subscribers.retain(|s| !s.peer.is_transport_closed());
        let first = !subscribers.iter().any(|s| s.uri == uri);
        if !subscribers.iter().any(|s| s.uri == uri && s.session == session) {
            subscribers.push(Subscriber { uri: uri.to_string(), session, peer });
        }
        first
    }

    /// Ends what [`Relay::subscribe`] started for `uri` and `session`; `true` if no client is
    /// left subscribed to `uri` (the server is then told).
    pub fn unsubscribe(&self, uri: &str, session: u64) -> bool {
        let mut subscribers = lock(&self.subscribers);
        subscribers.retain(|s| !(s.uri == uri && s.session == session));
        !subscribers.iter().any(|s| s.uri == uri)
    }

    /// Holds the stream that watches `uri` on a 2026-07-28 server until [`Relay::unwatch`].
    pub fn watch(&self, uri: &str, stop: oneshot::Sender<()>) {
        lock(&self.watches).push((uri.to_string(), stop));
    }

    /// Ends the stream [`Relay::watch`] holds for `uri`; `false` if there is none (the
    /// server is then one that takes `resources/unsubscribe`).
    pub fn unwatch(&self, uri: &str) -> bool {
        let mut watches = lock(&self.watches);
        let Some(at) = watches.iter().position(|(watched, _)| watched == uri) else { return false };
        let (_, stop) = watches.swap_remove(at);
        let _ = stop.send(());
        true
    }

    /// Sends `notifications/resources/updated` to every client subscribed to its URI.
    pub fn resource_updated(&self, params: &ResourceUpdatedNotificationParam) {
        let peers: Vec<Peer<RoleServer>> =
            lock(&self.subscribers).iter().filter(|s| s.uri == params.uri).map(|s| s.peer.clone()).collect();
        for peer in peers {
            let params = params.clone();
            tokio::spawn(async move {
                let _ = peer.notify_resource_updated(params).await;
            });
        }
    }

    /// `session` (through `peer`) hears log messages that belong to no call from now on.
    pub fn hear_logs(&self, session: u64, peer: Peer<RoleServer>) {
        let mut listeners = lock(&self.listeners);
        listeners.retain(|(s, p)| *s != session && !p.is_transport_closed());
        listeners.push((session, peer));
    }

    /// What a downstream server is told toolport can answer: everything a client might (each
    /// question is then answered, or declined, by the client that made the call).
    pub fn elicitor(self: &Arc<Self>) -> Arc<dyn Elicitor> {
        Arc::new(Asker(self.clone()))
    }

    /// Sampling passed on to the calling client when it offers it.
    pub fn sampler(self: &Arc<Self>) -> Arc<dyn Sampler> {
        Arc::new(Asker(self.clone()))
    }

    /// Log messages and resource updates passed on, and the clients' roots.
    pub fn clients(self: &Arc<Self>) -> Arc<dyn HostClients> {
        Arc::new(Asker(self.clone()))
    }
}

/// The relay in the roles the runtime asks for.
struct Asker(Arc<Relay>);

impl Elicitor for Asker {
    fn modes(&self) -> ElicitationModes {
        ElicitationModes::ALL
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, ElicitationAnswer> {
        Box::pin(async move {
            let Some(caller) = self.0.caller(request.caller, &request.server) else {
                tracing::info!(server = %request.server, "declined an elicitation: it belongs to no client call that can be told");
                return ElicitationAnswer::Decline;
            };
            let Some(params) = params_for(&request, &caller.capabilities) else {
                tracing::info!(server = %request.server, "declined an elicitation: the calling client does not answer this kind");
                return ElicitationAnswer::Decline;
            };
            let asked = match &caller.asks {
                Some(asks) => ask_in_a_round(asks, InputRequest::Elicitation(ElicitRequest::new(params)))
                    .await
                    .and_then(|answer| {
                        serde_json::from_value::<ElicitResult>(answer).map_err(|e| e.to_string())
                    }),
                None => caller.peer.create_elicitation(params).await.map_err(|e| e.to_string()),
            };
            match asked {
                Ok(result) => answer_of(result),
                Err(e) => {
                    tracing::warn!(server = %request.server, "the client could not be asked: {e}");
                    ElicitationAnswer::Decline
                }
            }
        })
    }

    /// toolport's own question before a call (the workspace's `confirm`), put to the client
    /// that makes the call as a form elicitation: `elicitation/create`, or an input-required
    /// result for a 2026-07-28 client. A client that offers no elicitation cannot be asked,
    /// and its call is declined saying so.
    fn confirm(&self, request: Confirmation) -> BoxFuture<'_, ConfirmAnswer> {
        Box::pin(async move {
            let Some(caller) = self.0.caller(request.caller, &request.server) else {
                return ConfirmAnswer::Unasked("the call belongs to no client call that can be told".into());
            };
            let asked = confirm_form(&request);
            if params_for(&asked, &caller.capabilities).is_none() {
                return ConfirmAnswer::Unasked(
                    "the calling client cannot be asked (it offers no elicitation)".into(),
                );
            }
            ConfirmAnswer::from(self.elicit(asked).await)
        })
    }
}

/// The question as the client is asked it, if it answers that mode (an `elicitation`
/// capability with neither mode named means form, as MCP says).
fn params_for(request: &Elicitation, capabilities: &ClientCapabilities) -> Option<ElicitRequestParams> {
    let offered = serde_json::to_value(capabilities.elicitation.as_ref()?).ok()?;
    let form = offered.get("form").is_some() || offered.get("url").is_none();
    let value = match &request.kind {
        ElicitationKind::Form(asked) if form => {
            json!({"mode": "form", "message": request.message, "requestedSchema": asked.schema})
        }
        ElicitationKind::Url { url, id } if offered.get("url").is_some() => {
            json!({"mode": "url", "message": request.message, "url": url, "elicitationId": id})
        }
        _ => return None,
    };
    serde_json::from_value(value).ok()
}

/// Puts the question to a 2026-07-28 client as an input-required result and waits for the
/// answer its retry brings.
async fn ask_in_a_round(asks: &mpsc::UnboundedSender<Ask>, request: InputRequest) -> Result<Value, String> {
    let (answer, answered) = oneshot::channel();
    asks.send(Ask { request, answer }).map_err(|_| "the call is over".to_string())?;
    answered.await.map_err(|_| "the client did not come back with an answer".to_string())
}

fn answer_of(result: ElicitResult) -> ElicitationAnswer {
    match result.action {
        ElicitationAction::Accept => match result.content {
            Some(Value::Object(fields)) => ElicitationAnswer::Accept(fields),
            _ => ElicitationAnswer::Accept(Default::default()),
        },
        ElicitationAction::Decline => ElicitationAnswer::Decline,
        _ => ElicitationAnswer::Cancel,
    }
}

impl Sampler for Asker {
    fn create_message(
        &self,
        server: &str,
        caller: Option<runtime::Caller>,
        request: Value,
    ) -> BoxFuture<'_, Result<Value, String>> {
        let server = server.to_string();
        Box::pin(async move {
            let caller = self.0.caller(caller, &server).ok_or_else(|| {
                "the request belongs to no client call that can be told, so no model is asked".to_string()
            })?;
            if caller.capabilities.sampling.is_none() {
                return Err(format!("{} (the calling client offers no sampling)", crate::runtime::NO_MODEL));
            }
            let params: CreateMessageRequestParams =
                serde_json::from_value(request).map_err(|e| format!("cannot pass the request on: {e}"))?;
            match &caller.asks {
                Some(asks) => {
                    ask_in_a_round(asks, InputRequest::CreateMessage(CreateMessageRequest::new(params))).await
                }
                None => {
                    let result = caller.peer.create_message(params).await.map_err(|e| e.to_string())?;
                    serde_json::to_value(result).map_err(|e| e.to_string())
                }
            }
        })
    }
}

impl HostClients for Asker {
    fn log(&self, server: &str, related: Related, params: &LoggingMessageNotificationParam) {
        let peers: Vec<Peer<RoleServer>> = match related {
            Related::Caller(caller) => {
                self.0.caller(Some(caller), server).map(|c| c.peer).into_iter().collect()
            }
            Related::NoCall => lock(&self.0.listeners).iter().map(|(_, peer)| peer.clone()).collect(),
            Related::Unknown => {
                tracing::debug!(server = %server, "a log message during several clients' calls: passed to none");
                Vec::new()
            }
        };
        for peer in peers {
            let params = params.clone();
            tokio::spawn(async move {
                let _ = peer.notify_logging_message(params).await;
            });
        }
    }

    fn resource_updated(&self, _server: &str, params: &ResourceUpdatedNotificationParam) {
        self.0.resource_updated(params);
    }

    fn roots(&self, caller: Option<runtime::Caller>) -> Option<Vec<Root>> {
        self.0.roots_for(caller)
    }
}

/// The roots of `lists` that lie within some root of every list: what every client allows
/// (one client's `file:///` never widens another's `file:///project/`).
fn allowed_by_all<'a>(lists: impl Iterator<Item = &'a [Root]> + Clone) -> Vec<Root> {
    let mut allowed: Vec<Root> = Vec::new();
    for root in lists.clone().flatten() {
        let everywhere = lists.clone().all(|list| list.iter().any(|outer| within(&root.uri, &outer.uri)));
        if everywhere && !allowed.iter().any(|r| r.uri == root.uri) {
            allowed.push(root.clone());
        }
    }
    allowed
}

/// Whether the folder `inner` is `outer` or under it (whole path segments; another scheme,
/// host or port is never under).
fn within(inner: &str, outer: &str) -> bool {
    if inner == outer {
        return true;
    }
    let (Ok(inner), Ok(outer)) = (url::Url::parse(inner), url::Url::parse(outer)) else { return false };
    if (inner.scheme(), inner.host(), inner.port()) != (outer.scheme(), outer.host(), outer.port()) {
        return false;
    }
    let base = outer.path().trim_end_matches('/');
    let path = inner.path();
    path == base || path.starts_with(&format!("{base}/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Form;

    fn capabilities(value: Value) -> ClientCapabilities {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    fn form_request() -> Elicitation {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let Value::Object(schema) = schema else { panic!("object") };
        Elicitation {
            server: "s".into(),
            message: "Your name?".into(),
            kind: ElicitationKind::Form(Form { fields: Vec::new(), schema }),
            caller: None,
        }
    }

    #[test]
    fn a_question_goes_only_in_a_mode_the_client_answers() {
        let request = form_request();
        assert!(params_for(&request, &capabilities(json!({}))).is_none());
        assert!(params_for(&request, &capabilities(json!({"elicitation": {}}))).is_some());
        assert!(params_for(&request, &capabilities(json!({"elicitation": {"url": {}}}))).is_none());
        let url = Elicitation {
            kind: ElicitationKind::Url { url: "https://x.test".into(), id: "e1".into() },
            ..form_request()
        };
        assert!(params_for(&url, &capabilities(json!({"elicitation": {}}))).is_none());
        let sent = params_for(&url, &capabilities(json!({"elicitation": {"url": {}}})));
        let sent = serde_json::to_value(sent).unwrap_or_default();
        assert_eq!(sent["url"], "https://x.test");
        assert_eq!(sent["elicitationId"], "e1");
    }

    #[test]
    fn only_what_every_client_allows_is_a_root_for_no_one_in_particular() {
        let roots = |uris: &[&str]| uris.iter().map(|u| Root::new(*u)).collect::<Vec<_>>();
        let uris = |roots: Vec<Root>| roots.into_iter().map(|r| r.uri).collect::<Vec<_>>();
        let (narrow, wide) = (roots(&["file:///work/project/"]), roots(&["file:///"]));
        let lists = [narrow.as_slice(), wide.as_slice()];
        assert_eq!(uris(allowed_by_all(lists.iter().copied())), ["file:///work/project/"]);
        let (one, two) = (roots(&["file:///a/", "file:///b/x/"]), roots(&["file:///b/", "file:///c/"]));
        assert_eq!(uris(allowed_by_all([one.as_slice(), two.as_slice()].into_iter())), ["file:///b/x/"]);
        assert!(!within("file:///work/projectile/", "file:///work/project/"));
        assert!(within("file:///work/project/src/", "file:///work/project"));
        assert!(!within("https://example.com/work/", "file:///work/"));
    }

    #[test]
    fn the_schema_is_passed_on_as_the_server_wrote_it() {
        let sent = params_for(&form_request(), &capabilities(json!({"elicitation": {"form": {}}})));
        let sent = serde_json::to_value(sent).unwrap_or_default();
        assert_eq!(sent["requestedSchema"]["properties"]["name"]["type"], "string");
        assert_eq!(sent["message"], "Your name?");
    }
}
