//! What toolport hands its launcher: everything the confined server may have, decided in the
//! host (where the definition, the grants and the home are known) so the launcher only applies
//! it. It travels as JSON in one environment variable of the launcher, never on its command
//! line, where every user of the machine could read the server's environment values.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The variable the launcher reads its [`LaunchSpec`] from (and removes).
pub const SPEC_VAR: &str = "TOOLPORT_SANDBOX_SPEC";
/// The first argument that makes the toolport binary a launcher instead of the CLI.
pub const LAUNCHER_ARG: &str = "__sandbox-launch";

/// The way out a person may choose when this machine cannot sandbox, said with each reason.
pub const UNCONFINED_HINT: &str =
    "to run this server unconfined here, set \"sandbox\": { \"required\": false } in its definition";

/// One confined start.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LaunchSpec {
    /// The server's program, as an absolute path (found on `PATH` by the host).
    pub program: PathBuf,
    /// Its arguments, exactly as configured.
    pub args: Vec<String>,
    /// Its whole environment (nothing else of the launcher's is kept).
    pub env: Vec<(String, String)>,
    /// Its working folder.
    pub cwd: Option<PathBuf>,
    /// What it may read and execute, beneath each path.
    pub read_only: Vec<PathBuf>,
    /// What it may read, write, create and remove, beneath each path.
    pub read_write: Vec<PathBuf>,
    /// Device files it may read and write (`/dev/null` and the like).
    pub devices: Vec<PathBuf>,
    /// Resource limits applied with `setrlimit` before the server starts.
    pub limits: SpecLimits,
    /// The host's Unix socket the launcher hands its proxy listener to.
    pub handoff: PathBuf,
    /// toolport's pid: if it is gone by the time the launcher runs, the launcher stops.
    pub parent: i32,
    /// Check every layer and exit without starting anything (`toolport sandbox check`).
    #[serde(default)]
    pub check_only: bool,
}

/// `limits` of a sandboxed stdio server.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct SpecLimits {
    /// `RLIMIT_DATA`, MiB: the heap and every private writable mapping.
    pub memory_mb: u64,
    /// `RLIMIT_NPROC`: processes and threads of the sandbox's user.
    pub processes: u64,
    /// `RLIMIT_NOFILE`.
    pub open_files: u64,
}
