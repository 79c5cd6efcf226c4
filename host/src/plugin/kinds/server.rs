//! Sandboxed MCP servers (`type: wasm`): a plain `wasi:cli/command` component speaking MCP on
//! its stdin and stdout, run in the same sandbox as a plugin with what a server needs on top:
//! arguments and an environment of its own (exactly the configured ones, nothing inherited but
//! granted names), folders that may be read-write, and a time limit on computing after a
//! request instead of on the whole (idle, long) run, with a share of one core over a window on
//! top (`cpu`), which a guest cannot dodge by waiting now and then.
//!
//! No process and no OS pipe: stdin, stdout and stderr are in-memory byte streams
//! (`tokio::io::duplex`), so the host's rmcp client reads and writes them as it would a child's
//! pipes, and each is bounded (a guest writing faster than the host reads waits, like a pipe).
//! The guest runs on a task of its own; dropping [`Started::stop`]'s sender, or the task being
//! aborted, ends it wherever it is.

use std::path::Path;

use sha2::{Digest as _, Sha256};
use tokio::io::DuplexStream;
use tokio::sync::{oneshot, watch};
use wasmtime_wasi::I32Exit;
use wasmtime_wasi::cli::{AsyncStdinStream, AsyncStdoutStream};
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::config::{Grants, Limits, ServerDef, WasmDef};
use crate::plugin::SetupError;
use crate::plugin::builtin;
use crate::plugin::compile::cache::{Cache, compiled};
use crate::plugin::compile::engine::engine;
use crate::plugin::compile::inspect::{exported_interfaces, header_problem};
use crate::plugin::error::{Fault, check_pin};
use crate::plugin::guard::root_cause;
use crate::plugin::sandbox::admission::Admission;
use crate::plugin::sandbox::context::{Denials, Sandbox};
use crate::plugin::sandbox::cpu::{cpu_fault, over_cpu};
use crate::plugin::sandbox::grant_hint::missing_grants;
use crate::plugin::sandbox::limits::{arm_busy_limit, ran_out_of_time};
use crate::plugin::sandbox::socket_budget::SocketBudget;
use crate::plugin::sandbox::store::{State, handle_refusal, linker};

/// Bytes each of stdin, stdout and stderr holds in flight: a full buffer makes the writer
/// wait (the guest for the host, or the host for the guest), never grow.
const STREAM_BUFFER: usize = 1 << 20;

/// A sandboxed server's component, compiled (or read from the cache) and pre-linked.
pub(crate) struct ServerComponent {
    name: String,
    /// The program name the guest sees as its first argument.
    program: String,
    pre: CommandPre<State>,
    admission: Admission,
}

/// A running server: its three streams, how it ended, and the switch that stops it.
pub(crate) struct Started {
    /// The guest's stdin: the host writes requests here.
    pub stdin: DuplexStream,
    /// The guest's stdout: the host reads responses here.
    pub stdout: DuplexStream,
    /// The guest's stderr, to be drained by the host.
    pub stderr: DuplexStream,
    /// `Some(reason)` once the guest has returned, trapped or been stopped.
    pub ended: watch::Receiver<Option<String>>,
    /// Sending (or dropping) stops the guest.
    pub stop: oneshot::Sender<()>,
    /// What the sandbox refused it, recorded by the host.
    pub refusals: Refusals,
}

/// Everything the host refused one run of a server: destinations not granted, and the socket
/// budget once reached. Cheap to clone; read while the server runs.
#[derive(Debug, Clone)]
pub(crate) struct Refusals {
    denials: Denials,
    sockets: SocketBudget,
}

impl Refusals {
    /// Each refusal in the words of the status view, oldest first: `not granted: …`, then
    /// `reached its socket limit (32 open sockets)`.
    pub fn all(&self) -> Vec<String> {
        let mut all: Vec<String> =
            self.denials.all().into_iter().map(|t| format!("not granted: {t}")).collect();
        all.extend(self.sockets.refusal().map(|fault| fault.to_string()));
        all
    }
}

impl ServerComponent {
    /// Loads `def`'s component: its file (or the built-in), checked against its `sha256` pin,
    /// compiled through `cache`, and linked against the sandbox. Messages name the file.
    pub fn load(def: &ServerDef, wasm: &WasmDef, cache: Option<&Cache>) -> Result<Self, SetupError> {
        let (origin, program, bytes, known_digest) = match (&wasm.builtin, &wasm.component_path) {
            (Some(name), _) => {
                let found = builtin::find_server(name).ok_or_else(|| {
                    let names: Vec<&str> = builtin::builtin_servers().collect();
                    format!("no built-in server {name:?} (built in: {})", names.join(", "))
                })?;
                (format!("built-in {name}"), name.clone(), found.bytes.to_vec(), Some(found.digest))
            }
            (None, Some(path)) => {
                let bytes = std::fs::read(path)
                    .map_err(|e| SetupError(format!("cannot read {}: {e}", path.display())))?;
                (path.display().to_string(), program_name(path), bytes, None)
            }
            (None, None) => return Err("wasm server requires component or builtin".into()),
        };
        if let Some(detail) = header_problem(&bytes) {
            return Err(Fault::NotComponent { origin, detail: detail.to_string() }.to_string().into());
        }
        let digest: [u8; 32] = known_digest.unwrap_or_else(|| Sha256::digest(&bytes).into());
        check_pin(&origin, &digest, wasm.sha256.as_deref(), &format!("toolport mcp pin {}", def.name))
            .map_err(|fault| fault.to_string())?;
        let engine = engine().map_err(|e| SetupError(format!("{e:#}")))?;
        let (component, _) = compiled(engine, &bytes, cache, Some(digest))
            .map_err(|e| SetupError(format!("cannot compile {origin}: {e:#}")))?;
        let linker = linker(engine).map_err(|e| SetupError(format!("{e:#}")))?;
        let pre = linker.instantiate_pre(&component).map_err(|e| {
            SetupError(format!("{origin} needs an import the sandbox does not provide: {e:#}"))
        })?;
        let pre = CommandPre::new(pre).map_err(|_| {
            let exports = exported_interfaces(engine, &component);
            let exports = if exports.is_empty() { "nothing".to_string() } else { exports.join(", ") };
            format!("{origin} is not a wasi:cli/command component (it exports {exports}): build it as a program, e.g. a Rust binary for wasm32-wasip2")
        })?;
        Ok(Self { name: def.name.clone(), program, pre, admission: Admission::new(wasm.builtin.is_some()) })
    }

    /// Starts one run for `def` (already `${VAR}`-expanded): a fresh store under `wasm`'s
    /// grants and limits, the command's `run` on a task of its own.
    pub fn start(&self, def: &ServerDef, wasm: &WasmDef) -> Result<Started, SetupError> {
        // A name both configured and granted gets the configured value only (not both: a
        // guest's `getenv` would see whichever came first).
        let mut grants = wasm.grants.clone();
        grants.env.retain(|name| !def.env.iter().any(|(key, _)| key == name));
        let sandbox = Sandbox::new(&self.name, &grants)?;
        let (stdin, guest_stdin) = tokio::io::duplex(STREAM_BUFFER);
        let (guest_stdout, stdout) = tokio::io::duplex(STREAM_BUFFER);
        let (guest_stderr, stderr) = tokio::io::duplex(STREAM_BUFFER);
        let mut args = vec![self.program.clone()];
        args.extend(def.args.iter().cloned());
        let engine = engine().map_err(|e| SetupError(format!("{e:#}")))?;
        let mut store =
            State::store_with(engine, &self.name, &self.admission, &sandbox, wasm.limits.memory_mb, |b| {
                b.args(&args);
                for (key, value) in &def.env {
                    b.env(key, value);
                }
                b.stdin(AsyncStdinStream::new(guest_stdin));
                b.stdout(AsyncStdoutStream::new(STREAM_BUFFER, guest_stdout));
                b.stderr(AsyncStdoutStream::new(STREAM_BUFFER, guest_stderr));
            })
            .map_err(|fault| fault.to_string())?;
        let meter = arm_busy_limit(&mut store, &wasm.limits);
        let (ended_tx, ended) = watch::channel(None);
        let (stop, stopped) = oneshot::channel::<()>();
        let pre = self.pre.clone();
        let limits = wasm.limits;
        let refusals = Refusals { denials: sandbox.denials().clone(), sockets: store.data().socket_budget() };
        // Configured `env` values are as visible to the guest as granted names.
        let mut visible = grants.clone();
        visible.env.extend(def.env.iter().map(|(key, _)| key.clone()));

        tokio::spawn(async move {
            let run = meter.wrap(async {
                let command = pre.instantiate_async(&mut store).await?;
                command.wasi_cli_run().call_run(&mut store).await
            });
            let reason = tokio::select! {
                outcome = run => Some(describe_end(&store, outcome, limits, &visible)),
                _ = stopped => None,
            };
            // Whatever the guest still holds (sockets, files) goes with the store, here.
            drop(store);
            let _ = ended_tx.send(Some(reason.unwrap_or_else(|| "stopped".to_string())));
        });
        Ok(Started { stdin, stdout, stderr, ended, stop, refusals })
    }
}

/// How a run ended, in the words of the status view; a failure of the guest's own (a status
/// other than 0, a crash) adds the grants it lacks among those it asked for, `visible` being
/// what it could see (its grants and its configured variables).
fn describe_end(
    store: &wasmtime::Store<State>,
    outcome: wasmtime::Result<Result<(), ()>>,
    limits: Limits,
    visible: &Grants,
) -> String {
    let lacks = missing_grants(store.data().asked, visible);
    let with_hint = |text: String| match &lacks {
        Some(hint) => format!("{text}; {hint}"),
        None => text,
    };
    let err = match outcome {
        Ok(Ok(())) => return "the server exited".to_string(),
        Ok(Err(())) => return with_hint("the server exited with status 1".to_string()),
        Err(err) => err,
    };
    if let Some(exit) = err.downcast_ref::<I32Exit>() {
        return match exit.0 {
            0 => "the server exited".to_string(),
            code => with_hint(format!("the server exited with status {code}")),
        };
    }
    if ran_out_of_time(&err) {
        return Fault::BusyLimit { limit_ms: limits.call_ms }.to_string();
    }
    if over_cpu(&err) {
        return cpu_fault(limits.cpu_percent).to_string();
    }
    // A full handle table is what trapped the guest, whatever sockets it was refused before.
    if let Some(fault) = handle_refusal(&err).or_else(|| store.data().socket_refusal()) {
        return fault.to_string();
    }
    if store.data().memory.exceeded() {
        return Fault::MemoryLimit { limit_mb: limits.memory_mb }.to_string();
    }
    // The guest's own last words (a panic message) follow in the stderr the transport quotes.
    tracing::info!("sandboxed server trapped: {err:?}");
    with_hint(Fault::Trap { message: root_cause(&err) }.to_string())
}

/// The program name a component file runs as: its file name without `.wasm`.
fn program_name(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "server".to_string())
}
