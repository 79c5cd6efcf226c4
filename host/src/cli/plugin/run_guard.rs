//! `toolport plugin run GUARD.wasm --request FILE|JSON [--result FILE|JSON]`: a guard plugin tried on one
//! request (and, with `--result`, on the server's answer to it) with no server and no runtime:
//! what each hook decided, what it rewrote, what it logged and what its sandbox refused.
//!
//! The request is a JSON-RPC request as a client sends it (`{"method": "tools/call", "params":
//! {…}}`; `jsonrpc` and `id` are optional) or just a call's or a read's params (`{"name": …,
//! "arguments": …}`, `{"uri": …}`); the result is what a server answered (its `result`, or the
//! whole response). The response hook sees the params as the request hook left them.

use std::path::Path;

use anyhow::{Context as _, Result};
use serde_json::{Map, Value, json};

use crate::cli::ExitError;
use toolport::display::escape_line;
use toolport::plugins::{GuardAnswer, GuardPlugin, HookContext, HookKind, PluginError, PluginLogLine};

/// What the trial is told besides the files: the server and the caller a hook sees.
pub struct Trial<'a> {
    pub server: &'a str,
    pub subject: Option<&'a str>,
    pub client: Option<&'a str>,
}

/// One hook's outcome.
struct Hook {
    phase: &'static str,
    answer: Result<GuardAnswer, PluginError>,
}

/// Runs `guard` on the request in `request` (and the result in `result`), prints the report,
/// and fails (exit 1) when a hook failed.
pub async fn run(
    guard: &GuardPlugin,
    request: &Path,
    result: Option<&Path>,
    trial: Trial<'_>,
    as_json: bool,
) -> Result<std::process::ExitCode> {
    let (kind, mut params) = read_request(request)?;
    let answer = result.map(read_result).transpose()?;
    let target = target_of(kind, &params)?;
    let context = HookContext {
        kind,
        server: trial.server,
        target: &target,
        subject: trial.subject,
        client: trial.client,
    };
    guard.keep_logs();
    let mut hooks = Vec::new();
    let asked = guard.on_request(&context, &params).await;
    if let Ok(GuardAnswer::Mutate(new)) = &asked {
        params = new.clone();
    }
    let go_on = matches!(asked, Ok(GuardAnswer::Pass | GuardAnswer::Mutate(_)));
    hooks.push(Hook { phase: "request", answer: asked });
    if let (Some(answer), true) = (answer, go_on) {
        hooks.push(Hook { phase: "response", answer: guard.on_response(&context, &params, &answer).await });
    }
    let (logs, denials) = (guard.log_lines(), guard.denials());
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report_json(guard.name(), kind, &hooks, &logs, &denials))?
        );
    } else {
        print!("{}", report_text(&hooks, &logs, &denials));
    }
    match hooks.iter().find_map(|h| h.answer.as_ref().err()) {
        Some(e) => Err(ExitError::failure(e.to_string()).into()),
        None => Ok(std::process::ExitCode::SUCCESS),
    }
}

/// The request: its method (one a guard sees) and its params. Without a `method` it is the
/// params themselves: a read's when they have a `uri`, else a call's.
fn read_request(file: &Path) -> Result<(HookKind, Value)> {
    let doc = read_json(file)?;
    let Some(method) = doc.get("method") else {
        let kind = if doc.get("uri").is_some() { HookKind::Read } else { HookKind::Call };
        return match doc {
            Value::Object(_) => Ok((kind, doc)),
            _ => Err(ExitError::usage("--request: give a JSON object".to_string()).into()),
        };
    };
    let kind = match method.as_str().unwrap_or_default() {
        "tools/call" => HookKind::Call,
        "resources/read" => HookKind::Read,
        "prompts/get" => HookKind::Prompt,
        _ => {
            return Err(ExitError::usage(format!(
                "--request: \"method\" must be \"tools/call\", \"resources/read\" or \"prompts/get\", not {method}"
            ))
            .into());
        }
    };
    match doc.get("params") {
        Some(params @ Value::Object(_)) => Ok((kind, params.clone())),
        _ => Err(ExitError::usage("--request: \"params\" must be an object".to_string()).into()),
    }
}

/// The result file: a response's `result`, or the result itself.
fn read_result(file: &Path) -> Result<Value> {
    let doc = read_json(file)?;
    match doc.get("result") {
        Some(result) if doc.get("jsonrpc").is_some() => Ok(result.clone()),
        _ => Ok(doc),
    }
}

/// `file`'s JSON; a value that starts with `{` is the JSON itself (what a shell line gives).
fn read_json(file: &Path) -> Result<Value> {
    let given = file.to_string_lossy();
    let (text, place) = match given.trim_start().starts_with('{') {
        true => (given.to_string(), "the JSON given".to_string()),
        false => (
            std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?,
            file.display().to_string(),
        ),
    };
    serde_json::from_str(&text)
        .map_err(|e| ExitError::usage(format!("{place}:{}:{}: not JSON: {e}", e.line(), e.column())).into())
}

/// What the hook's `target` is: the tool's or prompt's `name`, or the read's `uri`.
fn target_of(kind: HookKind, params: &Value) -> Result<String> {
    let key = if kind == HookKind::Read { "uri" } else { "name" };
    match params.get(key).and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => Ok(text.to_string()),
        _ => Err(ExitError::usage(format!("the request's params need a \"{key}\"")).into()),
    }
}

fn report_text(hooks: &[Hook], logs: &[PluginLogLine], denials: &[String]) -> String {
    let mut out = String::new();
    for hook in hooks {
        out.push_str(&match &hook.answer {
            Ok(GuardAnswer::Pass) => format!("{}: pass\n", hook.phase),
            Ok(GuardAnswer::Deny(reason)) => format!("{}: deny: {}\n", hook.phase, escape_line(reason)),
            Ok(GuardAnswer::Mutate(new)) => {
                format!("{}: mutate\n{}\n", hook.phase, serde_json::to_string_pretty(new).unwrap_or_default())
            }
            Err(e) => format!("{}: failed: {e}\n", hook.phase),
        });
    }
    out.push_str(&super::trial_report::trailer_text(logs, denials));
    out
}

fn report_json(
    plugin: &str,
    kind: HookKind,
    hooks: &[Hook],
    logs: &[PluginLogLine],
    denials: &[String],
) -> Value {
    let mut out = Map::new();
    out.insert("plugin".into(), plugin.into());
    out.insert("kind".into(), "guard".into());
    out.insert("method".into(), kind.method().into());
    for hook in hooks {
        let decided = match &hook.answer {
            Ok(GuardAnswer::Pass) => json!({ "decision": "pass" }),
            Ok(GuardAnswer::Deny(reason)) => json!({ "decision": "deny", "reason": reason }),
            Ok(GuardAnswer::Mutate(new)) => json!({ "decision": "mutate", "value": new }),
            Err(e) => json!({ "decision": "failed", "error": e.to_string() }),
        };
        out.insert(hook.phase.into(), decided);
    }
    super::trial_report::trailer_json(&mut out, logs, denials);
    Value::Object(out)
}
