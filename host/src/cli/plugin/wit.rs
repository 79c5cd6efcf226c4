//! `toolport plugin wit [--out FILE] [--force]`: writes the plugin contract as one binary WIT
//! package, the file `wasm-tools component wit --wasm wit/since_v0.1.0` would make. Tools for
//! other languages (componentize-py, ComponentizeJS/jco) take it in place of the folder, so a
//! plugin author needs nothing but the binary to get the exact contract it serves.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cli::ExitError;

/// The package, encoded by `host/build.rs` from `wit/since_v0.1.0`.
const PACKAGE: &[u8] = include_bytes!(env!("TOOLPORT_WIT_PACKAGE_FILE"));
/// Its file name: `toolport-plugin@<version>.wasm`.
const FILE_NAME: &str = env!("TOOLPORT_WIT_PACKAGE_NAME");

/// Options of `toolport plugin wit`.
#[derive(Debug, clap::Args)]
pub struct WitArgs {
    /// Where to write it. Default: `toolport-plugin@<version>.wasm` in the current folder.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace the file if it exists.
    #[arg(long)]
    force: bool,
}

/// Writes the package; prints the file's path.
pub fn run(args: WitArgs) -> Result<ExitCode> {
    let out = args.out.unwrap_or_else(|| PathBuf::from(FILE_NAME));
    write(&out, args.force)?;
    println!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Writes [`PACKAGE`] to `out`; an existing file is an error unless `force`.
fn write(out: &Path, force: bool) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        // Refused atomically: no window between a check and the write.
        options.create_new(true);
    }
    let mut file = match options.open(out) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(
                ExitError::usage(format!("{} exists: pass --force to replace it", out.display())).into()
            );
        }
        other => other.with_context(|| format!("cannot create {}", out.display()))?,
    };
    file.write_all(PACKAGE).with_context(|| format!("cannot write {}", out.display()))?;
    file.sync_all().with_context(|| format!("cannot write {}", out.display()))
}
