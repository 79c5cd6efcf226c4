//! The one guarded plugin call that name policies and tool shapes share: a fresh store under
//! the plugin's sandbox and memory cap, the epoch deadline plus an outer timeout, instantiate
//! and call, the outcome mapped to a [`Fault`], and one answer per tool checked. The per-kind
//! files supply only the export to call and how to read what it returns.

use tracing::Instrument as _;
use wasmtime::Store;

use super::compile::load::Loaded;
use super::error::{Fault, PluginError};
use super::messages::queue::queue_fault;
use super::sandbox::cpu::{cpu_fault, over_cpu};
use super::sandbox::limits::{arm_deadline, outer_timeout, ran_out_of_time};
use super::sandbox::store::{State, handle_refusal};
use crate::observe::Observer;

/// How many answers a per-tool call owes, and what they are called in the message when the
/// count is off (`5 verdicts for 6 tools`).
pub(crate) struct PerTool {
    pub tools: usize,
    pub noun: &'static str,
    /// The export called, for the call's span.
    pub export: &'static str,
}

/// Runs `call` (instantiate, then call one export) once in a fresh store of `plugin` under its
/// limits, counted in `observer`'s metrics, and checks one answer per tool. `call` answers the
/// guest's own `Err(text)`, if it has one, as the inner error.
pub(crate) async fn call_per_tool<T>(
    plugin: &Loaded,
    observer: &Observer,
    expect: PerTool,
    call: impl AsyncFnOnce(&mut Store<State>) -> wasmtime::Result<Result<Vec<T>, String>>,
) -> Result<Vec<T>, PluginError> {
    let span = call_span(plugin, expect.export, Some(expect.tools));
    let answers = call_once(plugin, observer, span.clone(), call).await.and_then(|answers| {
        match answers.len() == expect.tools {
            true => Ok(answers),
            false => {
                let message = format!(
                    "{} {} for {}",
                    answers.len(),
                    expect.noun,
                    crate::text::counted(expect.tools, "tool")
                );
                Err(plugin.error(Fault::BadOutput { message }))
            }
        }
    });
    if let Err(e) = &answers {
        record_error(&span, e);
    }
    answers
}

/// Runs `call` once in a fresh store of `plugin` under its limits, inside `span` (see
/// [`call_span`]), counted in `observer`'s metrics: the one guarded call every per-call kind
/// (policy, shape) makes.
pub(crate) async fn call_once<T>(
    plugin: &Loaded,
    observer: &Observer,
    span: tracing::Span,
    call: impl AsyncFnOnce(&mut Store<State>) -> wasmtime::Result<Result<T, String>>,
) -> Result<T, PluginError> {
    let mut store = new_store(plugin)?;
    run_in(plugin, observer, span, &mut store, call).await
}

/// A fresh store of `plugin`, under its sandbox and memory cap, admitted to the pool.
pub(crate) fn new_store(plugin: &Loaded) -> Result<Store<State>, PluginError> {
    State::store(plugin.engine, &plugin.name, &plugin.admission, &plugin.sandbox, plugin.limits.memory_mb)
        .map_err(|fault| plugin.error(fault))
}

/// [`call_once`] in `store`, which may have served calls before (a guard's warm instance):
/// the time limit is armed afresh, the memory cap is the store's.
pub(crate) async fn run_in<T>(
    plugin: &Loaded,
    observer: &Observer,
    span: tracing::Span,
    store: &mut Store<State>,
    call: impl AsyncFnOnce(&mut Store<State>) -> wasmtime::Result<Result<T, String>>,
) -> Result<T, PluginError> {
    store.data_mut().log_lines = 0;
    let meter = arm_deadline(store, &plugin.limits);
    let started = std::time::Instant::now();
    let call = meter.wrap(call(store));
    let outcome = tokio::time::timeout(outer_timeout(&plugin.limits), call).instrument(span.clone()).await;
    let grown = store.data().memory.grown_bytes();
    observer.plugin_call(&plugin.name, grown as u64, started.elapsed());
    let answer = classify(plugin, store, outcome).and_then(|answered| {
        answered.map_err(|message| plugin.guest_error(Fault::Failed { message }, store.data()))
    });
    if let Err(e) = &answer {
        record_error(&span, e);
    }
    answer
}

/// Marks `span` as failed with `error`'s kind of fault.
pub(crate) fn record_error(span: &tracing::Span, error: &PluginError) {
    span.record("error.type", fault_type(&error.fault).as_str());
    span.record("otel.status_code", "ERROR");
}

/// The fault's variant (`TimeLimit`, `Trap`), without what it carries (a guest's words).
fn fault_type(fault: &Fault) -> String {
    let debug = format!("{fault:?}");
    debug.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default().to_string()
}

/// The call's INTERNAL span when traces are exported: which plugin, in which role, which
/// export, over how many tools when it is given tools (never their text or the guest's answers).
pub(crate) fn call_span(plugin: &Loaded, export: &'static str, tools: Option<usize>) -> tracing::Span {
    if !crate::observe::traces::on() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        target: "toolport::plugin",
        "plugin.call",
        otel.name = %format!("plugin {} {}", export, plugin.name),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        toolport.plugin.name = %plugin.name,
        toolport.plugin.kind = plugin.kind.as_str(),
        toolport.plugin.export = export,
        toolport.plugin.tools = tools.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        error.type = tracing::field::Empty,
    )
}

/// Maps the outcome of a call in `store` to the plugin's fault vocabulary: over time, over its
/// share of a core, over memory, or a crash with the guest's panic message when it printed one.
pub(crate) fn classify<T>(
    plugin: &Loaded,
    store: &Store<State>,
    outcome: Result<wasmtime::Result<T>, tokio::time::error::Elapsed>,
) -> Result<T, PluginError> {
    let time_limit = || plugin.error(Fault::TimeLimit { limit_ms: plugin.limits.call_ms });
    let err = match outcome {
        Err(_) => return Err(time_limit()),
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(err)) => err,
    };
    if ran_out_of_time(&err) {
        return Err(time_limit());
    }
    if over_cpu(&err) {
        return Err(plugin.error(cpu_fault(plugin.limits.cpu_percent)));
    }
    // A full handle table is what trapped the guest, whatever sockets it was refused before.
    if let Some(fault) =
        queue_fault(&err).or_else(|| handle_refusal(&err)).or_else(|| store.data().socket_refusal())
    {
        return Err(plugin.error(fault));
    }
    if store.data().memory.exceeded() {
        return Err(plugin.error(Fault::MemoryLimit { limit_mb: plugin.limits.memory_mb }));
    }
    let stderr = String::from_utf8_lossy(&store.data().stderr.contents()).into_owned();
    let message = panic_message(&stderr).unwrap_or_else(|| root_cause(&err));
    // The wasm backtrace helps the plugin's author, not the user reading a status row: `-v`.
    tracing::info!(plugin = %plugin.name, "plugin trapped: {err:?}");
    Err(plugin.guest_error(Fault::Trap { message }, store.data()))
}

/// Why a call trapped, in a few words: the trap's own description (`call stack exhausted`)
/// or the innermost error (`… store handle limit exceeded`), never the wasm backtrace that
/// wasmtime wraps around it, which would fill a status row with frame numbers.
pub(crate) fn root_cause(err: &wasmtime::Error) -> String {
    if let Some(trap) = err.downcast_ref::<wasmtime::Trap>() {
        let text = trap.to_string();
        return text.strip_prefix(TRAP_PREFIX).unwrap_or(&text).to_string();
    }
    let text = err.root_cause().to_string();
    text.strip_prefix(TRAP_PREFIX).unwrap_or(&text).to_string()
}

/// What wasmtime puts before every trap description; `crashed:` already says it.
const TRAP_PREFIX: &str = "wasm trap: ";

/// The last `panicked at …` line(s) a Rust guest printed before aborting, if any (the last:
/// earlier chatter may quote the phrase, the real panic is what it printed before dying).
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.rfind("panicked at")?;
    let mut lines = stderr[start..].lines();
    let head = lines.next()?.trim_end_matches(':').trim();
    Some(match lines.next().map(str::trim) {
        Some(text) if !text.is_empty() => format!("{head}: {text}"),
        _ => head.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_cause_drops_the_backtrace_and_the_trap_prefix() {
        let trap = wasmtime::Error::from(wasmtime::Trap::StackOverflow).context(
            "error while executing at wasm backtrace:\n    0:   0xd73f - <unknown>!<wasm function 189>",
        );
        assert_eq!(root_cause(&trap), "call stack exhausted");
        let handles = wasmtime::Error::msg("cannot allocate another handle: store handle limit exceeded")
            .context("error while executing at wasm backtrace:");
        assert_eq!(root_cause(&handles), "cannot allocate another handle: store handle limit exceeded");
    }

    #[test]
    fn panic_message_keeps_location_and_text() {
        let stderr =
            "\nthread '<unnamed>' panicked at src/lib.rs:40:24:\nboom\nnote: run with RUST_BACKTRACE=1\n";
        assert_eq!(panic_message(stderr).as_deref(), Some("panicked at src/lib.rs:40:24: boom"));
        assert_eq!(panic_message("nothing here"), None);
    }
}
