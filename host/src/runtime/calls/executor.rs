//! The executor: routes a final tool name to the server that owns it (or runs the record a
//! caller was authorised for, as it was authorised), sends `tools/call` with the server's own
//! name under its call timeout, and says what came back or why nothing did. A name is matched
//! exactly, never trimmed or folded: what was checked is what runs.

use std::sync::Arc;
use std::time::Duration;

#[allow(deprecated)]
use rmcp::model::LoggingLevel;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::guards::{Chain, Refusal, Unfit};
use super::observed::Watch;
use super::request_state;
use super::secret_guard::Guard;
use super::send::{Deadline, ServerError, send};
use crate::config::{Grant, Roots};
use crate::observe::{CallContext, GuardStep, Kind};
use crate::plugin::HookKind;
use crate::runtime::connection::Connection;
use crate::runtime::registry::record::ToolRecord;
use crate::runtime::registry::surface::Served;
use crate::runtime::results::large_results;
use crate::runtime::results::outcome::{CallError, CallOutcome, parse_arguments};
use crate::runtime::results::structured_output;
use crate::runtime::state::Link;
use crate::runtime::supervisor::{State, Supervisor};
use crate::runtime::tool_call::CallProgress;
use crate::trust::confirm_reason;

/// Calls the tool named `name` on the surface. `arguments` is JSON text; blank means `{}`. The
/// server's progress reports go to `progress`; a call that times out, or whose future is
/// dropped, is cancelled at the server (`tool_call`). Input-required rounds are answered on
/// the way (`request_state`), and time spent waiting for a person does not count against the
/// timeout (`person_clock`). Secrets are kept out of the arguments and the result per the
/// workspace's `secrets` (`secret_guard`). A call the workspace's `confirm` names is sent only
/// once a person allowed it (`confirm`). A result over the workspace's `maxResultTokens` comes
/// back as its beginning and a note, the whole of it stored (`large_results`).
///
/// `name` is taken exactly as given: a final name with whitespace or a control character
/// around or in it is no tool's (the registry holds none such, `names::name_fault`), so
/// `" echo"` is an unknown tool, not `echo`. One rule for every entry point: the CLI, the
/// session, ACP and serve (which passes the record it authorised, [`call_record`]).
///
/// `context` says whose call it is: the audit log records it, and the server's questions during
/// the call are its caller's.
pub async fn call(
    supervisor: &Supervisor,
    name: &str,
    arguments: &str,
    progress: Option<UnboundedSender<CallProgress>>,
    context: &CallContext,
) -> Result<CallOutcome, CallError> {
    if name.trim().is_empty() {
        return Err(CallError::MissingName);
    }
    let args = parse_arguments(arguments)?;
    let mut watch = Watch::start(supervisor, Kind::Call, name, "", Some(&args), context);
    let result = match resolve(supervisor, name, &mut watch).await {
        Ok(route) => {
            watch.server.clone_from(&route.record.server);
            run(supervisor, route, args, progress, None, context, &mut watch.guards).await
        }
        Err(e) => Err(e),
    };
    watch.finish_call(&result);
    result
}

/// Runs exactly `record`, the tool a caller was authorised to call (`serve`'s policy and
/// bundle decided on it), with the arguments already a JSON object: nothing is looked up by
/// name again. When the surface changed since (the tool gone, another server's under that
/// name, other annotations than those decided on) the call is refused as an unknown tool and
/// nothing is sent. A server on the stateless revision is sent `level` (the client's own, on
/// its request), else the level a client set for it
/// ([`crate::runtime::connection::Connection::log_level`]), in the call's `_meta`: without one
/// it sends no log messages at all.
///
/// Every way it ends is observed (`observed`): the audit log and the metrics see it.
#[allow(deprecated)] // LoggingLevel: logging is deprecated in 2026-07-28 but still in use.
pub async fn call_record(
    supervisor: &Supervisor,
    record: &ToolRecord,
    args: Map<String, Value>,
    progress: Option<UnboundedSender<CallProgress>>,
    level: Option<LoggingLevel>,
    context: &CallContext,
) -> Result<CallOutcome, CallError> {
    let mut watch = Watch::start(supervisor, Kind::Call, &record.name, &record.server, Some(&args), context);
    let result = match resolve_record(supervisor, record, &mut watch).await {
        Ok(route) => run(supervisor, route, args, progress, level, context, &mut watch.guards).await,
        Err(e) => Err(e),
    };
    watch.finish_call(&result);
    result
}

/// Why no tool on the surface is named `name`, observed as a refused call would be (the audit
/// log, the metrics): blank, held by the trust step, its server not connected, or unknown.
/// `explain: false` says only "unknown" (a caller out of scope learns nothing more).
pub fn refused(supervisor: &Supervisor, name: &str, explain: bool) -> CallError {
    let mut watch = Watch::start(supervisor, Kind::Call, name, "", None, &CallContext::default());
    let why = match (explain, name.trim().is_empty()) {
        (_, true) => CallError::MissingName,
        (true, false) => why_not(supervisor, name, &mut watch),
        (false, false) => CallError::UnknownTool(name.to_string()),
    };
    watch.finish_call(&Err(why.clone()));
    why
}

/// What one call needs of its tool and server, read under one lock.
struct Route {
    record: Arc<ToolRecord>,
    conn: Arc<Connection>,
    timeout: Duration,
    roots: Roots,
    grant: Option<Grant>,
    confirm: Option<&'static str>,
}

/// Where a name or a record stands on the surface now.
enum Found {
    /// On a live server: the call can go (boxed: a route is large, the others small).
    Route(Box<Route>),
    /// Listed from its server's last-known listing: the call waits for the server, at most
    /// this long (its `connectMs`).
    Connecting { server: String, connect: Duration },
    /// Not on the surface.
    Missing,
}

impl Found {
    fn new(state: &State, record: &Arc<ToolRecord>, served: &Served) -> Self {
        match Route::new(state, record, served) {
            Some(route) => Found::Route(Box::new(route)),
            None => {
                Found::Connecting { server: served.def.name.clone(), connect: served.def.timeouts.connect }
            }
        }
    }
}

impl Route {
    /// `None` while `served` is still connecting (its tools its last-known listing).
    fn new(state: &State, record: &Arc<ToolRecord>, served: &Served) -> Option<Self> {
        let confirm = &state.resolved.settings.confirm;
        Some(Route {
            record: Arc::clone(record),
            conn: served.conn.clone()?,
            timeout: served.def.timeouts.call,
            roots: served.def.roots.clone(),
            grant: crate::auth::grant(&served.def),
            confirm: confirm_reason(confirm, &record.name, record.tool.annotations.as_ref()),
        })
    }
}

/// The tool named exactly `name` and its server, or why there is none. A tool listed from its
/// server's last-known listing waits for the server first (`connecting`).
async fn resolve(supervisor: &Supervisor, name: &str, watch: &mut Watch) -> Result<Route, CallError> {
    let find = || {
        let state = supervisor.lock();
        match state.registry.route(name) {
            Some((record, served)) => Found::new(&state, record, served),
            None => Found::Missing,
        }
    };
    connecting(supervisor, name, watch, find).await
}

/// `record`'s server, when the surface still holds `record` as it was authorised: the same
/// name, server, server's own name and annotations (what a policy and a bundle decide on).
/// Otherwise an unknown tool, or, for a tool listed from its server's last-known listing that
/// the server no longer lists, why.
async fn resolve_record(
    supervisor: &Supervisor,
    record: &ToolRecord,
    watch: &mut Watch,
) -> Result<Route, CallError> {
    let find = || {
        let state = supervisor.lock();
        let Some((now, served)) = state.registry.route(&record.name) else { return Found::Missing };
        let same = now.server == record.server
            && now.original == record.original
            && now.tool.annotations == record.tool.annotations;
        match same {
            true => Found::new(&state, now, served),
            false => Found::Missing,
        }
    };
    let found = connecting(supervisor, &record.name, watch, find).await;
    match found {
        // The tool is on the surface under that name, but not as authorised.
        Err(CallError::NoLongerListed { .. }) if supervisor.lock().registry.route(&record.name).is_some() => {
            Err(CallError::UnknownTool(record.name.clone()))
        }
        other => other,
    }
}

/// `find`'s route; when the tool is listed from its server's last-known listing, `find`'s
/// route once that server is up (waiting at most its `connectMs`): the call goes to the live
/// server, as it lists the tool now. A tool it no longer lists is
/// [`CallError::NoLongerListed`]; a server that failed, or is still connecting after the
/// wait, [`CallError::NotConnected`].
async fn connecting(
    supervisor: &Supervisor,
    name: &str,
    watch: &mut Watch,
    find: impl Fn() -> Found,
) -> Result<Route, CallError> {
    match find() {
        Found::Route(route) => return Ok(*route),
        Found::Missing => return Err(why_not(supervisor, name, watch)),
        Found::Connecting { server, connect } => {
            if !supervisor.wait_for_server(&server, connect).await {
                watch.server.clone_from(&server);
                let reason = format!("still connecting after {} ms", connect.as_millis());
                return Err(CallError::NotConnected { server, reason });
            }
        }
    }
    match find() {
        Found::Route(route) => Ok(*route),
        // Connecting again (a reconnect): not waited for twice.
        Found::Connecting { server, .. } => {
            watch.server.clone_from(&server);
            Err(CallError::NotConnected { server, reason: crate::runtime::CONNECTING.to_string() })
        }
        Found::Missing => Err(why_not(supervisor, name, watch)),
    }
}

/// Why `name` is on no route: held by the trust step, its server gone, no longer listed by the
/// server whose last-known listing had it, its server (or any) not up (`not_up`), or unknown.
fn why_not(supervisor: &Supervisor, name: &str, watch: &mut Watch) -> CallError {
    {
        let state = supervisor.lock();
        if let Some(held) = state.registry.held(name) {
            let (server, tool, reason) = (held.server.clone(), held.tool.clone(), held.reason.clone());
            watch.server.clone_from(&server);
            return CallError::Held { name: name.to_string(), server, tool, reason };
        }
        if let Some((server, reason)) = state.gone.lookup(name) {
            watch.server.clone_from(server);
            return CallError::NotConnected { server: server.clone(), reason: reason.clone() };
        }
        if let Some(server) = state.from_history.lookup(name) {
            let slot = state.slots.iter().find(|s| s.name() == server);
            match slot.map(|s| &s.link) {
                Some(Link::Live { .. }) => {
                    watch.server = server.to_string();
                    return CallError::NoLongerListed { name: name.to_string(), server: server.to_string() };
                }
                Some(Link::Failed(reason)) => {
                    watch.server = server.to_string();
                    return CallError::NotConnected { server: server.to_string(), reason: reason.clone() };
                }
                // Not defined any more, not active, or connecting again: as any other name.
                _ => {}
            }
        }
    }
    match super::not_up::explain(supervisor, name) {
        Some(why) => {
            if let CallError::UnknownWhileDown { owner: true, servers, .. } = &why
                && let [only] = servers.as_slice()
            {
                watch.server.clone_from(&only.server);
            }
            why
        }
        None => CallError::UnknownTool(name.to_string()),
    }
}

/// Sends the call on `route`; the server's questions during it are `context`'s caller's. On
/// the way: the secret guard, confirmation, the guard plugins (whose acts go in `steps`), the
/// send; and back: the guard plugins, the output schema, redaction, large results.
#[allow(deprecated)] // LoggingLevel
async fn run(
    supervisor: &Supervisor,
    route: Route,
    mut args: Map<String, Value>,
    progress: Option<UnboundedSender<CallProgress>>,
    level: Option<LoggingLevel>,
    context: &CallContext,
    steps: &mut Vec<GuardStep>,
) -> Result<CallOutcome, CallError> {
    let Route { record, conn, timeout, roots, grant, confirm } = route;
    let caller = context.caller;
    let (name, original, server) = (record.name.as_str(), record.original.clone(), record.server.clone());
    let output_check = record.output.clone();
    // Secrets first: a blocked call is not worth a person's question, and a masked argument
    // is what the person is shown.
    let mut guard = Guard::new(supervisor, name, &original, &server);
    guard.arguments(&mut args)?;
    if let Some(reason) = confirm {
        super::confirm::ask_first(supervisor, name, &original, &server, reason, &args, caller).await?;
    }
    let refused =
        |Refusal(reason)| CallError::GuardDenied { tool: name.to_string(), server: server.clone(), reason };
    let chain = Chain::new(supervisor, HookKind::Call, &server, name, &original, context);
    // The params as the guards see them; the response hooks get them as they were sent.
    let sent = match chain.on_request() || chain.on_response() {
        false => None,
        true => {
            let mut params = call_params(&original, &args);
            let fits = |new: &Value| call_fits(new, &original, &record.tool.input_schema);
            if chain.on_request()
                && chain.request(&mut params, fits, steps).await.map_err(refused)?
                && let Some(Value::Object(new)) = params.get("arguments")
            {
                args = new.clone();
                // What a guard wrote is checked as the model's words are.
                guard.arguments(&mut args)?;
            }
            chain.on_response().then_some(params)
        }
    };
    let mut params = CallToolRequestParams::new(original.clone()).with_arguments(args);
    if let Some(level) = level.or_else(|| conn.log_level()).filter(|_| conn.stateless()) {
        params.meta.get_or_insert_with(RequestMetaObject::new).set_log_level(level);
    }
    let answers = &supervisor.answers;
    let refusals_before = conn.refusal_count();
    // The call timeout counts the server's time, not the person's answering its questions.
    let rounds = request_state::call_tool(&conn, answers, &server, &roots, params, progress, caller);
    let deadline = Deadline { timeout, clock: Some(&answers.clock) };
    match send(supervisor, &conn, &server, deadline, rounds).await {
        Err(ServerError::Timeout) => {
            Err(CallError::Timeout { tool: name.to_string(), server, ms: timeout.as_millis() })
        }
        Ok(mut result) => {
            result = chain.typed_response(sent.as_ref(), result, steps).await.map_err(refused)?;
            let mut outcome = CallOutcome::from_result(result);
            outcome.note_refusals(conn.refusals_since(refusals_before));
            let outcome = structured_output::checked(output_check.as_ref(), name, &server, outcome)?;
            let outcome = guard.result(outcome)?;
            large_results::bounded(supervisor.result_limits(), name, &server, outcome).await
        }
        Err(ServerError::Gone(reason)) => {
            // A refusal nobody signed in for here (a 401, a 403 for more scope): name the fix.
            let reason = crate::auth::fix_for(reason, &server, grant);
            Err(CallError::NotConnected { server, reason })
        }
        Err(ServerError::Failed(e)) => {
            // The server's words may quote a secret as a result may (issue 44 item 9).
            let message = guard.error_message(crate::auth::fix_for(e.to_string(), &server, grant))?;
            Err(CallError::Protocol { tool: name.to_string(), server, message })
        }
    }
}

/// A call's params as a guard sees them: the server's own name and the arguments.
fn call_params(original: &str, args: &Map<String, Value>) -> Value {
    serde_json::json!({ "name": original, "arguments": args })
}

/// Whether a guard's new call params fit: the same name, and arguments that are an object the
/// tool's input schema accepts.
fn call_fits(new: &Value, original: &str, schema: &rmcp::model::JsonObject) -> Result<(), Unfit> {
    if new.get("name").and_then(Value::as_str) != Some(original) {
        return Err(Unfit(format!("it must keep \"name\": \"{original}\"")));
    }
    let Some(arguments) = new.get("arguments").filter(|a| a.is_object()) else {
        return Err(Unfit("\"arguments\" must be an object".to_string()));
    };
    let schema = Value::Object(schema.clone());
    let validator = jsonschema::options()
        .offline()
        .build(&schema)
        .map_err(|e| Unfit(format!("the tool's input schema: {e}")))?;
    match validator.iter_errors(arguments).next() {
        None => Ok(()),
        Some(e) => Err(Unfit(format!("the tool's input schema refuses it at {}: {e}", e.instance_path()))),
    }
}
