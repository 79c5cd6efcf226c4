//! Builds the guest workspace (`plugins/`) for `wasm32-wasip2` and embeds the built-in plugins.
//!
//! Why here and not in a separate step: the built-ins are part of the binary, so a plain
//! `cargo build` must produce them. The guests form their own workspace with their own
//! target folder (`target/plugins`), so this nested cargo never waits on the outer one's lock.

use std::env;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::Digest as _;

const TARGET: &str = "wasm32-wasip2";

/// Built-in plugins: (name used in config, kind, crate artifact stem).
const BUILTINS: [(&str, &str, &str); 4] = [
    ("openai", "ToolShape", "shape_openai"),
    ("anthropic", "ToolShape", "shape_anthropic"),
    ("namespace", "NamePolicy", "policy_namespace"),
    ("sse", "Transport", "transport_sse"),
];

/// Built-in sandboxed servers (`type: wasm`, `builtin`): (name used in config, artifact stem).
const SERVERS: [(&str, &str); 2] = [("files", "server_files"), ("fetch", "server_fetch")];

/// Variables a parent cargo, clippy or rustc wrapper sets that would recurse into the wrapper,
/// apply host flags to the wasm target, or redirect the nested build's output.
const SCRUBBED_ENV: [&str; 16] = [
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "CLIPPY_ARGS",
    "CLIPPY_CONF_DIR",
    "CARGO_MAKEFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "MAKEFLAGS",
    "MFLAGS",
    "CARGO_MANIFEST_DIR",
    "CARGO_PKG_NAME",
];

fn main() {
    if let Err(message) = run() {
        // A panic in build.rs is how cargo reports a failed build script; the message says why.
        panic!("\n\ntoolport build.rs: {message}\n\n");
    }
}

fn run() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let root = manifest_dir.parent().ok_or("host/ has no parent folder")?.to_path_buf();
    let out_dir = PathBuf::from(env::var("OUT_DIR").map_err(|e| e.to_string())?);
    let plugins = root.join("plugins");
    let wit = root.join("wit");

    rerun_if_changed(&plugins)?;
    rerun_if_changed(&wit)?;
    println!("cargo:rerun-if-changed=build.rs");

    wit_package(&root, &wit, &out_dir)?;
    ensure_target()?;
    let build_dir = build_guests(&root, &plugins)?;

    let mut generated = String::from(
        "/// The built-in plugins, embedded at build time: (name, kind, component bytes).\n\
         pub(crate) const BUILTINS: &[(&str, crate::config::PluginKind, &[u8])] = &[\n",
    );
    // The SHA-256 of each embedded component, computed here once: it is the compiled cache's
    // key, and hashing a constant at every start would cost a sixth of a cached load.
    let mut digests = String::from(
        "/// SHA-256 of each entry of [`BUILTINS`], in the same order.\n\
         pub(crate) const BUILTIN_SHA256: &[[u8; 32]] = &[\n",
    );
    for (name, kind, stem) in BUILTINS {
        let (copy, digest) = embed(&build_dir, &out_dir, stem)?;
        let _ = writeln!(
            generated,
            "    ({name:?}, crate::config::PluginKind::{kind}, include_bytes!({copy:?})),"
        );
        let _ = writeln!(digests, "    {digest:?},");
    }
    generated.push_str("];\n");
    generated.push_str(&digests);
    generated.push_str("];\n");
    generated.push_str(
        "/// The built-in sandboxed servers: (name, component bytes, SHA-256).\n\
         pub(crate) const BUILTIN_SERVERS: &[(&str, &[u8], [u8; 32])] = &[\n",
    );
    for (name, stem) in SERVERS {
        let (copy, digest) = embed(&build_dir, &out_dir, stem)?;
        let _ = writeln!(generated, "    ({name:?}, include_bytes!({copy:?}), {digest:?}),");
    }
    generated.push_str("];\n");
    std::fs::write(out_dir.join("builtin.rs"), generated)
        .map_err(|e| format!("cannot write builtin.rs: {e}"))?;
    println!("cargo:rustc-env=TOOLPORT_PLUGIN_BUILD_DIR={}", build_dir.display());
    Ok(())
}

/// The contract folder the current major version is built against.
const WIT_FOLDER: &str = "since_v0.1.0";

/// Encodes `wit/since_v0.1.0` as one binary WIT package (what `wasm-tools component wit --wasm`
/// writes), for `toolport plugin wit`: other languages' tools (componentize-py, ComponentizeJS)
/// then take the contract as one file. A copy goes to `target/plugins/wit/` for the example
/// plugins' build scripts.
fn wit_package(root: &Path, wit: &Path, out_dir: &Path) -> Result<(), String> {
    let folder = wit.join(WIT_FOLDER);
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) =
        resolve.push_dir(&folder).map_err(|e| format!("cannot parse {}: {e:#}", folder.display()))?;
    let bytes = wit_component::encode(&resolve, package)
        .map_err(|e| format!("cannot encode {} as a WIT package: {e:#}", folder.display()))?;
    let name = &resolve.packages[package].name;
    let version =
        name.version.as_ref().ok_or_else(|| format!("{} has no package version", folder.display()))?;
    let file_name = format!("{}-{}@{version}.wasm", name.namespace, name.name);
    let embedded = out_dir.join(&file_name);
    std::fs::write(&embedded, &bytes).map_err(|e| format!("cannot write {}: {e}", embedded.display()))?;
    println!("cargo:rustc-env=TOOLPORT_WIT_PACKAGE_FILE={}", embedded.display());
    println!("cargo:rustc-env=TOOLPORT_WIT_PACKAGE_NAME={file_name}");
    let copies = root.join("target").join("plugins").join("wit");
    std::fs::create_dir_all(&copies).map_err(|e| format!("cannot create {}: {e}", copies.display()))?;
    let copy = copies.join(&file_name);
    // Left alone when unchanged, so its time stamp does not make the examples rebuild; else
    // written whole then renamed: a build script reading the copy never sees half of it.
    if std::fs::read(&copy).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    let partial = copies.join(format!(".{file_name}.partial"));
    std::fs::write(&partial, &bytes).map_err(|e| format!("cannot write {}: {e}", partial.display()))?;
    std::fs::rename(&partial, &copy).map_err(|e| format!("cannot write {}: {e}", copy.display()))?;
    Ok(())
}

/// Copies the built `<stem>.wasm` into `OUT_DIR`; its path there and its SHA-256.
fn embed(build_dir: &Path, out_dir: &Path, stem: &str) -> Result<(String, [u8; 32]), String> {
    let built = build_dir.join(format!("{stem}.wasm"));
    let copy = out_dir.join(format!("{stem}.wasm"));
    std::fs::copy(&built, &copy).map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    let bytes = std::fs::read(&copy).map_err(|e| format!("cannot read {}: {e}", copy.display()))?;
    Ok((copy.display().to_string(), sha2::Sha256::digest(&bytes).into()))
}

/// Installs the wasm target when the toolchain lacks it (`RUSTUP_AUTO_INSTALL=0` machines and
/// fresh CI images install nothing by themselves).
fn ensure_target() -> Result<(), String> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if libdir.as_deref().is_some_and(Path::is_dir) {
        return Ok(());
    }
    println!("cargo:warning=the {TARGET} target is missing: running `rustup target add {TARGET}`");
    let status = Command::new("rustup").args(["target", "add", TARGET]).status().map_err(|e| {
        format!("cannot run rustup to install {TARGET}: {e}; install it with `rustup target add {TARGET}`")
    })?;
    if !status.success() {
        return Err(format!("`rustup target add {TARGET}` failed ({status}); run it by hand and rebuild"));
    }
    Ok(())
}

/// One release build of the whole guest workspace; returns the folder holding the `.wasm` files.
fn build_guests(root: &Path, plugins: &Path) -> Result<PathBuf, String> {
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let target_dir = root.join("target").join("plugins");
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--target", TARGET, "--manifest-path"])
        .arg(plugins.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    for var in SCRUBBED_ENV {
        cmd.env_remove(var);
    }
    // Per-target settings a parent (e.g. `cargo clippy`) exports for the host target.
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("CARGO_TARGET_")
            || key.starts_with("CARGO_CFG_")
            || key.starts_with("CARGO_FEATURE_")
        {
            cmd.env_remove(key.as_ref());
        }
    }
    // wasm SIMD (on in every wasmtime engine by default): the guests' byte scans (`memchr`,
    // the `files` server's searches) use it instead of one byte at a time.
    cmd.env("CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS", "-C target-feature=+simd128");
    let output = cmd.output().map_err(|e| format!("cannot run cargo for plugins/: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "building the plugins workspace (plugins/Cargo.toml, target {TARGET}) failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(target_dir.join(TARGET).join("release"))
}

/// Registers every file under `dir` except build output and the other languages' examples, so
/// editing a guest or the WIT rebuilds the host.
fn rerun_if_changed(dir: &Path) -> Result<(), String> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        // `plugins/examples/` is not part of the guest workspace (its own build.sh builds it).
        if path.file_name().is_some_and(|n| n == "target" || n == "examples") {
            continue;
        }
        if path.is_dir() {
            rerun_if_changed(&path)?;
        } else {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    Ok(())
}
