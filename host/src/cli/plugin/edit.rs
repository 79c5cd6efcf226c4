//! `toolport plugin add|remove`: a component file into the store's `plugins`, checked first
//! (its world against the kind, the name against the built-ins), and out again unless something
//! still names it. Also what `plugin run` shares with `add`: the sandbox flags and the reading
//! of a component's kind from its world.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use sha2::{Digest as _, Sha256};

use crate::cli::ExitError;
use crate::cli::exit::edit_error;
use toolport::Paths;
use toolport::edit::{self, GrantRequest, PluginRequest};
use toolport::plugins::{self, WIT_FOLDER, WIT_PACKAGE, WIT_VERSION};
use toolport::store::PluginKind;

/// A plugin kind as the flags spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    /// Reviews a server's tool names.
    NamePolicy,
    /// Converts tools to the shape a model sees.
    ToolShape,
    /// Moves a server's messages.
    Transport,
    /// Checks, and may rewrite, calls, reads and prompts and their answers.
    Guard,
}

impl KindArg {
    fn kind(self) -> PluginKind {
        match self {
            Self::NamePolicy => PluginKind::NamePolicy,
            Self::ToolShape => PluginKind::ToolShape,
            Self::Transport => PluginKind::Transport,
            Self::Guard => PluginKind::Guard,
        }
    }
}

/// The grants and limits of a plugin, with the meaning and checks of the store's `grants` and
/// `limits` (a plugin's folders are read-only).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SandboxFlags {
    /// A read-only folder the plugin may read, relative to the current folder (repeatable).
    #[arg(long = "grant-dir", value_name = "PATH")]
    pub dirs: Vec<String>,
    /// A host pattern it may reach, scheme://host:port (`*` for any port) (repeatable).
    #[arg(long = "grant-host", value_name = "PATTERN")]
    pub hosts: Vec<String>,
    /// An environment variable it may read (repeatable).
    #[arg(long = "grant-env", value_name = "NAME")]
    pub env: Vec<String>,
    /// Its memory cap in MiB (default 64).
    #[arg(long, value_name = "N")]
    pub memory_mb: Option<u64>,
    /// Its time cap per call in milliseconds (default 5000).
    #[arg(long, value_name = "N")]
    pub call_ms: Option<u64>,
    /// The share of one core it may use over a minute, 1-100 (default 80).
    #[arg(long, value_name = "PERCENT")]
    pub cpu_percent: Option<u64>,
}

impl SandboxFlags {
    /// The request for `path` of `kind`, optionally pinned.
    pub fn request(self, kind: PluginKind, path: &Path, sha256: Option<String>) -> PluginRequest {
        PluginRequest {
            kind,
            path: path.display().to_string(),
            grants: GrantRequest { dirs: self.dirs, hosts: self.hosts, env: self.env },
            memory_mb: self.memory_mb,
            call_ms: self.call_ms,
            cpu_percent: self.cpu_percent,
            sha256,
        }
    }
}

/// `toolport plugin add` arguments.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The name servers and workspaces will use (its key in the store's `plugins`).
    #[arg(value_name = "NAME")]
    name: String,
    /// The component file (relative to the current folder; stored as an absolute path).
    #[arg(value_name = "FILE.wasm")]
    file: PathBuf,
    /// What it is for; default: the world the component exports.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    #[command(flatten)]
    sandbox: SandboxFlags,
    /// Pin the file's SHA-256: a changed file is then refused until `plugin pin`.
    #[arg(long)]
    pin: bool,
    /// Replace an entry of that name.
    #[arg(long)]
    force: bool,
}

/// `toolport plugin remove` arguments.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    /// The plugin name.
    #[arg(value_name = "NAME")]
    name: String,
    /// Remove it even while servers or this workspace name it.
    #[arg(long)]
    force: bool,
}

/// A component file's bytes and the kind it is: the world it exports, which `asked` (when
/// given) must match. Every refusal is exit 2 and names the file.
pub fn component_kind(paths: &Paths, file: &Path, asked: Option<KindArg>) -> Result<(PluginKind, Vec<u8>)> {
    let bytes =
        std::fs::read(file).map_err(|e| ExitError::usage(format!("cannot read {}: {e}", file.display())))?;
    let found = plugins::inspect(&bytes, Some(&paths.cache_dir()))
        .map_err(|e| ExitError::usage(format!("{}: {e:#}", file.display())))?;
    let world = match found.world.as_deref().and_then(PluginKind::parse) {
        Some(kind) => kind,
        None => {
            let exports =
                if found.exports.is_empty() { "nothing".to_string() } else { found.exports.join(", ") };
            return Err(ExitError::usage(format!(
                "{}: not a {WIT_PACKAGE} plugin: it exports {exports} (a plugin exports the policy, shape or \
                 connection interface of {WIT_PACKAGE}@{WIT_VERSION})",
                file.display()
            ))
            .into());
        }
    };
    if let Some(version) = &found.version
        && !found.compatible
    {
        return Err(ExitError::usage(format!(
            "{}: built for {WIT_PACKAGE}@{version}, but this toolport serves {WIT_PACKAGE}@{WIT_VERSION}: rebuild \
             it against {WIT_FOLDER}",
            file.display()
        ))
        .into());
    }
    if let Some(asked) = asked.map(KindArg::kind)
        && asked != world
    {
        return Err(ExitError::usage(format!(
            "{}: --kind {} does not match the component: it exports the {} world",
            file.display(),
            asked.as_str(),
            world.as_str()
        ))
        .into());
    }
    Ok((world, bytes))
}

/// Whether `name` is a built-in plugin's, which configured entries may not take.
pub fn is_builtin(name: &str) -> bool {
    plugins::builtin_bytes(name).is_some()
}

/// `plugin add`: checks the component, then writes the entry under the store's lock.
pub fn add(paths: &Paths, args: AddArgs) -> Result<ExitCode> {
    let name = args.name.trim().to_string();
    if is_builtin(&name) {
        return Err(ExitError::usage(format!(
            "{name} is a built-in plugin: a configured plugin needs another name"
        ))
        .into());
    }
    let (kind, bytes) = component_kind(paths, &args.file, args.kind)?;
    let sha256 = args.pin.then(|| hex::encode(Sha256::digest(&bytes)));
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let request = args.sandbox.request(kind, &args.file, sha256);
    let (entry, def) = edit::plugin_entry(&name, &request, &cwd)?;
    let store = paths.store_file();
    let replaced = edit::add_plugin(&store, &name, &entry, args.force).map_err(edit_error)?;
    let verb = if replaced { "replaced" } else { "added" };
    println!("plugin {verb}: {name} ({}, {}) -> {}", kind.as_str(), def.path.display(), store.display());
    if let Some(pin) = &def.sha256 {
        println!("pinned {name}: sha256 {pin}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `plugin remove`: refused while something names the plugin, unless `--force`.
pub fn remove(paths: &Paths, args: RemoveArgs) -> Result<ExitCode> {
    let name = args.name.trim();
    let users = edit::remove_plugin(paths, name, args.force).map_err(edit_error)?;
    println!("plugin removed: {name}");
    if !users.is_empty() {
        eprintln!("Warning: {name} is still named by {}", users.describe(&paths.workspace_file()));
    }
    Ok(ExitCode::SUCCESS)
}
