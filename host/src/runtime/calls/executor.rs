//! The executor: routes a final tool name to the server that owns it, sends `tools/call` with
//! the server's own name under its call timeout, and says what came back or why nothing did.

#[allow(deprecated)]
use rmcp::model::LoggingLevel;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use serde_json::{Map, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::observed::Watch;
use super::request_state;
use super::secret_guard::Guard;
use super::send::{Deadline, ServerError, send};
use crate::observe::Kind;
use crate::runtime::results::large_results;
use crate::runtime::results::outcome::{CallError, CallOutcome, parse_arguments};
use crate::runtime::results::structured_output;
use crate::runtime::supervisor::Supervisor;
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
pub async fn call(
    supervisor: &Supervisor,
    name: &str,
    arguments: &str,
    progress: Option<UnboundedSender<CallProgress>>,
) -> Result<CallOutcome, CallError> {
    if name.trim().is_empty() {
        return Err(CallError::MissingName);
    }
    let args = parse_arguments(arguments)?;
    call_with(supervisor, name, args, progress, None).await
}

/// [`call`] with the arguments already a JSON object (what `serve` receives). A server on the
/// stateless revision is sent `level` (the client's own, on its request), else the level a
/// client set for it ([`crate::runtime::connection::Connection::log_level`]), in the call's `_meta`:
/// without one it sends no log messages at all.
///
/// Every way it ends is observed (`observed`): the audit log and the metrics see it.
#[allow(deprecated)] // LoggingLevel: logging is deprecated in 2026-07-28 but still in use.
pub async fn call_with(
    supervisor: &Supervisor,
    name: &str,
    args: Map<String, Value>,
    progress: Option<UnboundedSender<CallProgress>>,
    level: Option<LoggingLevel>,
) -> Result<CallOutcome, CallError> {
    let mut watch = Watch::start(supervisor, Kind::Call, name.trim(), "", Some(&args));
    let result = routed(supervisor, name, args, progress, level, &mut watch).await;
    watch.finish_call(&result);
    result
}

#[allow(deprecated)] // LoggingLevel
async fn routed(
    supervisor: &Supervisor,
    name: &str,
    mut args: Map<String, Value>,
    progress: Option<UnboundedSender<CallProgress>>,
    level: Option<LoggingLevel>,
    watch: &mut Watch,
) -> Result<CallOutcome, CallError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(CallError::MissingName);
    }
    let (original, server, conn, timeout, output_check, roots, grant, confirm) = {
        let state = supervisor.lock();
        match state.registry.route(name) {
            Some((record, served)) => (
                record.original.clone(),
                record.server.clone(),
                served.conn.clone(),
                served.def.timeouts.call,
                record.output.clone(),
                served.def.roots.clone(),
                crate::auth::grant(&served.def),
                confirm_reason(&state.resolved.settings.confirm, name, record.tool.annotations.as_ref()),
            ),
            None => {
                if let Some(held) = state.registry.held(name) {
                    let (server, tool, reason) =
                        (held.server.clone(), held.tool.clone(), held.reason.clone());
                    watch.server.clone_from(&server);
                    return Err(CallError::Held { name: name.to_string(), server, tool, reason });
                }
                return Err(match state.gone.lookup(name) {
                    Some((server, reason)) => {
                        watch.server.clone_from(server);
                        CallError::NotConnected { server: server.clone(), reason: reason.clone() }
                    }
                    None => CallError::UnknownTool(name.to_string()),
                });
            }
        }
    };
    watch.server.clone_from(&server);
    // Secrets first: a blocked call is not worth a person's question, and a masked argument
    // is what the person is shown.
    let mut guard = Guard::new(supervisor, name, &original, &server);
    guard.arguments(&mut args)?;
    if let Some(reason) = confirm {
        super::confirm::ask_first(supervisor, name, &original, &server, reason, &args).await?;
    }
    let mut params = CallToolRequestParams::new(original.clone()).with_arguments(args);
    if let Some(level) = level.or_else(|| conn.log_level()).filter(|_| conn.stateless()) {
        params.meta.get_or_insert_with(RequestMetaObject::new).set_log_level(level);
    }
    let answers = &supervisor.answers;
    let refusals_before = conn.refusal_count();
    // The call timeout counts the server's time, not the person's answering its questions.
    let rounds = request_state::call_tool(&conn, answers, &server, &roots, params, progress);
    let deadline = Deadline { timeout, clock: Some(&answers.clock) };
    match send(supervisor, &conn, &server, deadline, rounds).await {
        Err(ServerError::Timeout) => {
            Err(CallError::Timeout { tool: name.to_string(), server, ms: timeout.as_millis() })
        }
        Ok(result) => {
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
