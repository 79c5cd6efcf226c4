//! `serve --http --rate-limit RATE` and `--tool-rate-limit RATE`: requests per caller, and
//! `tools/call`s per caller per tool, counted by `governor`'s keyed GCRA limiters (a burst of
//! the whole count, then one more each count-th of the period). A call counts against the tool
//! it runs, found as the handler finds it (`front.rs`): by its exact name, the lazy surface's
//! `call_tool` as the tool it names, and only when the caller may call it (`access.rs`), keyed
//! by the server and the server's own name for it. An unknown or refused name spends no
//! tool's budget (the caller limit still counts the request), so neither a padded name nor a
//! `call_tool` escapes a tool's limit, and no refusal tells a caller that a tool it may not
//! use exists. A request over either gets
//! 429 with `Retry-After` (whole seconds, rounded up) and one line naming the limit and when
//! to retry — as a JSON-RPC error when the request was one, so an SDK shows the line to its
//! user instead of a bare status.
//!
//! Who the caller is: the [`Caller`]'s subject when the request carries one (a checked OIDC
//! token), else the peer's IP address. A shared `--token-env` token names no person, so every
//! holder of it is told apart by address; behind a proxy or a load balancer every client then
//! shares the proxy's address (and its budget): give people their own tokens (`--auth oidc`)
//! for limits per person. Limits are per process: N replicas let a caller N times the rate.
//!
//! The limiters keep a cell per key seen; [`Limiters::sweep`] drops the ones back at a full
//! burst every [`SWEEP_EVERY`], so a stream of new addresses cannot grow them without bound.

use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio_util::sync::CancellationToken;

use crate::observe::Observer;
use crate::serve::{Callable, Caller, Shared, lazy};

/// How often the limiters forget callers who are back at a full burst: often enough that a
/// scan of many addresses costs minutes of memory, not hours; rarely enough to cost nothing.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// A rate as written on the command line: `COUNT/UNIT`, e.g. `100/min`, `10/s`, `1000/h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// How many in one period; also the burst.
    pub count: NonZeroU32,
    /// The period.
    pub per: Per,
}

/// The period of a [`RateLimit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// `s`, `sec`, `second`.
    Second,
    /// `min`, `minute`.
    Minute,
    /// `h`, `hour`.
    Hour,
}

impl Per {
    fn duration(self) -> Duration {
        match self {
            Per::Second => Duration::from_secs(1),
            Per::Minute => Duration::from_secs(60),
            Per::Hour => Duration::from_secs(3600),
        }
    }
}

impl RateLimit {
    /// The quota `governor` enforces: the whole count at once, refilled evenly over the period.
    fn quota(self) -> Quota {
        let interval = self.per.duration() / self.count.get();
        // `interval` is at least 1 ns for any u32 count over a second or more.
        Quota::with_period(interval).unwrap_or_else(|| Quota::per_second(self.count)).allow_burst(self.count)
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.per {
            Per::Second => "s",
            Per::Minute => "min",
            Per::Hour => "h",
        };
        write!(f, "{}/{unit}", self.count)
    }
}

impl FromStr for RateLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "invalid rate `{text}`: expected COUNT/UNIT with COUNT a whole number above 0 and UNIT \
                 s, min or h (e.g. 100/min, 10/s, 1000/h)"
            )
        };
        let (count, unit) = text.trim().split_once('/').ok_or_else(bad)?;
        let count = count.trim().parse::<NonZeroU32>().map_err(|_| bad())?;
        let per = match unit.trim() {
            "s" | "sec" | "second" => Per::Second,
            "m" | "min" | "minute" => Per::Minute,
            "h" | "hr" | "hour" => Per::Hour,
            _ => return Err(bad()),
        };
        Ok(RateLimit { count, per })
    }
}

/// Who a request is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum CallerKey {
    /// A checked token's `sub`.
    Subject(String),
    /// The peer's address, when no token named a caller.
    Peer(IpAddr),
    /// Neither known (a request that did not come through serve's listener).
    Unknown,
}

impl CallerKey {
    fn of(parts: &Parts) -> Self {
        if let Some(caller) = parts.extensions.get::<Caller>() {
            return CallerKey::Subject(caller.subject.clone());
        }
        match parts.extensions.get::<ConnectInfo<SocketAddr>>() {
            Some(ConnectInfo(peer)) => CallerKey::Peer(peer.ip()),
            None => CallerKey::Unknown,
        }
    }
}

/// The tool a call runs, as counted: its server (`None`: one of the lazy surface's own) and
/// the server's own name for it.
type ToolKey = (Option<String>, String);

/// The limiters `serve --http` was given, shared by every request.
pub struct Limiters {
    callers: Option<(RateLimit, DefaultKeyedRateLimiter<CallerKey>)>,
    tools: Option<(RateLimit, DefaultKeyedRateLimiter<(CallerKey, ToolKey)>)>,
    /// Where each refusal is counted (the runtime's observer).
    observer: Observer,
}

impl Limiters {
    /// Limiters for the rates given (`None`: no limit of that kind), each refusal counted in
    /// `observer`'s metrics; `None` when neither is.
    pub fn new(
        per_caller: Option<RateLimit>,
        per_tool: Option<RateLimit>,
        observer: Observer,
    ) -> Option<Arc<Self>> {
        if per_caller.is_none() && per_tool.is_none() {
            return None;
        }
        Some(Arc::new(Self {
            callers: per_caller.map(|rate| (rate, RateLimiter::keyed(rate.quota()))),
            tools: per_tool.map(|rate| (rate, RateLimiter::keyed(rate.quota()))),
            observer,
        }))
    }

    /// Forgets, every [`SWEEP_EVERY`] until `stop`, the callers back at a full burst.
    pub fn sweep(self: &Arc<Self>, stop: CancellationToken) {
        let limits = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = every.tick() => {}
                    () = stop.cancelled() => return,
                }
                let Some(limits) = limits.upgrade() else { return };
                if let Some((_, limiter)) = &limits.callers {
                    limiter.retain_recent();
                    limiter.shrink_to_fit();
                }
                if let Some((_, limiter)) = &limits.tools {
                    limiter.retain_recent();
                    limiter.shrink_to_fit();
                }
            }
        });
    }

    /// Counts the request (`parts`, its whole `body`) against its caller and, for a
    /// `tools/call`, against its caller and the tool it runs (routed by `shared` as the
    /// handler will route it); the 429 to answer when either is spent.
    pub async fn refusal(&self, parts: &Parts, body: &[u8], shared: &Shared) -> Option<Response> {
        let key = CallerKey::of(parts);
        let message = Message::read(body);
        if let Some(refused) = self.over_caller(&key, message.as_ref()) {
            return Some(refused);
        }
        // Without a tool limit, no routing: a call is not looked up twice for nothing.
        self.tools.as_ref()?;
        let name = message.as_ref().and_then(Message::tool)?;
        let tool = counted(shared, parts, name, body).await?;
        self.over_tool(key, tool, message.as_ref())
    }

    /// Counts a request against `key`; the 429 when the caller's budget is spent.
    fn over_caller(&self, key: &CallerKey, message: Option<&Message<'_>>) -> Option<Response> {
        let (rate, limiter) = self.callers.as_ref()?;
        let not_until = limiter.check_key(key).err()?;
        let wait = not_until.wait_time_from(Instant::now());
        let said = format!("too many requests: --rate-limit allows {rate} per caller");
        self.observer.rate_limited("caller");
        Some(refused(&said, wait, message))
    }

    /// Counts a call of `tool` against `key`; the 429 when that budget is spent.
    fn over_tool(&self, key: CallerKey, tool: Counted, message: Option<&Message<'_>>) -> Option<Response> {
        let (rate, limiter) = self.tools.as_ref()?;
        let not_until = limiter.check_key(&(key, tool.key)).err()?;
        let wait = not_until.wait_time_from(Instant::now());
        let shown = tool.shown;
        let said =
            format!("too many calls of tool `{shown}`: --tool-rate-limit allows {rate} per caller per tool");
        self.observer.rate_limited("tool");
        Some(refused(&said, wait, message))
    }
}

/// A call's tool as the limit counts it, and its name on the surface (for the refusal).
struct Counted {
    key: ToolKey,
    shown: String,
}

/// The tool a `tools/call` of `name` (its whole message `body`) runs, as `front.rs` routes it:
/// the lazy surface's search and describe are its own, its `call_tool` is the tool it names;
/// any other name is matched exactly, and counted only when this request may call it.
async fn counted(shared: &Shared, parts: &Parts, name: &str, body: &[u8]) -> Option<Counted> {
    let runtime = &shared.runtime;
    let name = match shared.lazy.active(runtime) {
        true if name == lazy::SEARCH || name == lazy::DESCRIBE => {
            return Some(Counted { key: (None, name.to_string()), shown: name.to_string() });
        }
        true if name == lazy::CALL => Cow::Owned(Named::inner(body)?),
        _ => Cow::Borrowed(name),
    };
    let scope = shared.access.scope_of(runtime, Some(parts));
    match scope.callable(runtime, &name, shared.list_wait).await {
        Callable::Allowed { record, .. } => Some(Counted {
            key: (Some(record.server.clone()), record.original.clone()),
            shown: record.name.clone(),
        }),
        Callable::Refused { .. } | Callable::Unknown => None,
    }
}

/// `call_tool`'s `params.arguments.name` (JSON escapes decoded), read only for a `call_tool`.
#[derive(serde::Deserialize)]
struct Named<'a> {
    #[serde(borrow)]
    params: NamedParams<'a>,
}

#[derive(serde::Deserialize)]
struct NamedParams<'a> {
    #[serde(borrow)]
    arguments: NamedArguments<'a>,
}

#[derive(serde::Deserialize)]
struct NamedArguments<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

impl Named<'_> {
    fn inner(body: &[u8]) -> Option<String> {
        let named: Named<'_> = serde_json::from_slice(body).ok()?;
        Some(named.params.arguments.name.into_owned())
    }
}

/// What the limits read of a JSON-RPC message: its id, method and `params.name`; the rest
/// (arguments) is skipped, not kept.
#[derive(serde::Deserialize)]
struct Message<'a> {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(serde::Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
}

impl<'a> Message<'a> {
    fn read(body: &'a [u8]) -> Option<Self> {
        if body.is_empty() {
            return None;
        }
        serde_json::from_slice(body).ok()
    }

    /// The tool a `tools/call` names.
    fn tool(&self) -> Option<&str> {
        if self.method.as_deref() != Some("tools/call") {
            return None;
        }
        self.params.as_ref()?.name.as_deref()
    }
}

/// 429 with `Retry-After` in whole seconds (rounded up, at least 1) and `said` with when to
/// retry: a JSON-RPC error for the request's id when `message` was a request, else a text line.
fn refused(said: &str, wait: Duration, message: Option<&Message<'_>>) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let line = format!("{said}; retry after {seconds} s");
    tracing::debug!("refused a request: {line}");
    let mut response = match message.and_then(|m| m.id.clone()) {
        Some(id) => {
            let error = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": RATE_LIMITED, "message": line, "data": {"retryAfter": seconds}},
            });
            let mut response = (StatusCode::TOO_MANY_REQUESTS, error.to_string()).into_response();
            response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
            response
        }
        None => (StatusCode::TOO_MANY_REQUESTS, format!("{line}\n")).into_response(),
    };
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

/// The JSON-RPC code of a refusal: MCP defines none for rate limits, so one of the range
/// JSON-RPC leaves to servers (-32000 to -32099).
pub const RATE_LIMITED: i64 = -32029;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_count_and_unit() {
        let rate: RateLimit = "100/min".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rate.to_string(), "100/min");
        assert_eq!("10/s".parse::<RateLimit>().map(|r| r.to_string()), Ok("10/s".to_string()));
        assert_eq!("1000/hour".parse::<RateLimit>().map(|r| r.to_string()), Ok("1000/h".to_string()));
        for bad in ["0/s", "ten/s", "10", "10/day", "-1/s", "10/"] {
            assert_eq!(
                bad.parse::<RateLimit>(),
                Err(format!(
                    "invalid rate `{bad}`: expected COUNT/UNIT with COUNT a whole number above 0 and UNIT \
                     s, min or h (e.g. 100/min, 10/s, 1000/h)"
                ))
            );
        }
    }

    fn parts(caller: Option<&str>, peer: &str) -> Parts {
        let mut request = axum::http::Request::new(());
        if let Some(subject) = caller {
            request.extensions_mut().insert(Caller {
                subject: subject.to_string(),
                groups: Vec::new(),
                client_id: None,
                claims: Arc::default(),
            });
        }
        if let Ok(peer) = peer.parse::<SocketAddr>() {
            request.extensions_mut().insert(ConnectInfo(peer));
        }
        request.into_parts().0
    }

    fn tool(server: &str, original: &str, shown: &str) -> Counted {
        Counted { key: (Some(server.to_string()), original.to_string()), shown: shown.to_string() }
    }

    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#;

    #[test]
    fn a_tool_limit_counts_per_caller_server_and_tool() {
        let rate = "2/h".parse().ok();
        let Some(limits) = Limiters::new(None, rate, Observer::default()) else { panic!("no limits") };
        let alice = || CallerKey::Subject("alice".to_string());
        let message = Message::read(CALL);
        let over = |caller: CallerKey, counted: Counted| limits.over_tool(caller, counted, message.as_ref());
        assert!(over(alice(), tool("a", "echo", "echo")).is_none());
        assert!(over(alice(), tool("a", "echo", "echo")).is_none());
        let Some(refused) = over(alice(), tool("a", "echo", "echo")) else { panic!("a third call admitted") };
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let retry = refused.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok());
        let retry: u64 = retry.and_then(|v| v.parse().ok()).unwrap_or(0);
        assert!((1..=1800).contains(&retry), "Retry-After {retry}");
        // Another server's tool of the same name, another tool, another subject go on.
        assert!(over(alice(), tool("b", "echo", "b_echo")).is_none());
        assert!(over(alice(), tool("a", "add", "add")).is_none());
        assert!(over(CallerKey::Subject("bob".to_string()), tool("a", "echo", "echo")).is_none());
    }

    #[test]
    fn only_a_tools_call_names_a_tool_and_call_tool_names_its_inner_one() {
        assert_eq!(Message::read(CALL).as_ref().and_then(Message::tool), Some("echo"));
        let list = br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"name":"echo"}}"#;
        assert_eq!(Message::read(list).as_ref().and_then(Message::tool), None);
        let inner = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"\u0020echo","arguments":{"a":[1]}}}}"#;
        assert_eq!(Named::inner(inner).as_deref(), Some(" echo"));
        let not_an_object = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":"x"}}"#;
        assert_eq!(Named::inner(not_an_object), None);
    }

    #[test]
    fn without_a_subject_the_peer_address_is_the_caller() {
        let Some(limits) = Limiters::new("1/h".parse().ok(), None, Observer::default()) else {
            panic!("no limits")
        };
        let over = |peer: &str| limits.over_caller(&CallerKey::of(&parts(None, peer)), None);
        assert!(over("10.0.0.1:5000").is_none());
        let Some(refused) = over("10.0.0.1:6000") else {
            panic!("another port of one address is one caller")
        };
        assert_eq!(
            refused.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
            Some("text/plain; charset=utf-8")
        );
        assert!(over("10.0.0.2:5000").is_none());
        // A subject is the caller wherever it calls from.
        let alice = |peer: &str| CallerKey::of(&parts(Some("alice"), peer));
        assert_eq!(alice("10.0.0.3:1"), alice("10.0.0.4:1"));
    }
}
