//! `toolport plugin new <NAME> --kind <KIND> [--path DIR]`: writes a standalone plugin crate (or
//! a sandboxed MCP server) that builds with one `cargo build --release --target wasm32-wasip2`
//! anywhere, outside this repository too.
//!
//! Everything written is embedded in the binary: the templates (`host/templates/plugin/`), the
//! guest kit `toolport-guest` (`plugins/guest/`) and the contract this toolport serves
//! (`wit/since_v0.1.0`, package `toolport:plugin@WIT_VERSION`). The kit is vendored into the new
//! project as real files because it is not on crates.io yet; its manifest's workspace-inherited
//! fields are filled from the guest workspace's, so the repository keeps one copy of each.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use toml_edit::{DocumentMut, Item};

use crate::cli::ExitError;
use toolport::plugins::WIT_VERSION;

/// `toolport plugin new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The crate's (and the plugin's) name: lowercase letters, digits, `-` and `_`, starting
    /// with a letter.
    #[arg(value_name = "NAME")]
    name: String,
    /// What to make: a plugin (transport, name-policy, tool-shape or guard), or a sandboxed MCP
    /// server (`type: wasm`).
    #[arg(long, value_enum)]
    kind: NewKind,
    /// Where to write it (default `./<NAME>`); must not exist, or be an empty folder.
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
}

/// The kinds `plugin new` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum NewKind {
    /// Moves JSON-RPC messages for servers whose `type` names the plugin (here: over TCP).
    Transport,
    /// Keeps, renames, hides or rejects a server's tools.
    NamePolicy,
    /// Converts tools to the JSON a model sees.
    ToolShape,
    /// Checks, rewrites or refuses calls, reads and prompts, and their answers.
    Guard,
    /// A `wasi:cli/command` MCP server on stdin/stdout, run as `"type": "wasm"`.
    Server,
}

impl NewKind {
    fn as_str(self) -> &'static str {
        match self {
            Self::Transport => "transport",
            Self::NamePolicy => "name-policy",
            Self::ToolShape => "tool-shape",
            Self::Server => "server",
            Self::Guard => "guard",
        }
    }

    /// Phrase for the README's first line.
    fn what(self) -> &'static str {
        match self {
            Self::Transport => "transport plugin",
            Self::NamePolicy => "name-policy plugin",
            Self::ToolShape => "tool-shape plugin",
            Self::Server => "sandboxed MCP server (`type: wasm`)",
            Self::Guard => "guard plugin",
        }
    }

    /// How it is turned on, in brief, for the message after scaffolding (the README has it all).
    fn turn_on(self, name: &str) -> String {
        match self {
            Self::Transport => format!("`plugin add`, then a server with \"type\": \"{name}\""),
            Self::NamePolicy => format!("`plugin add`, then `workspace set namePolicy {name}`"),
            Self::ToolShape => format!("`plugin add`, then `workspace set toolShape {name}`"),
            Self::Guard => format!("`plugin add`, then \"guards\": [\"{name}\"] in .toolport/workspace.json"),
            Self::Server => "`mcp add-json` with \"type\": \"wasm\"".to_string(),
        }
    }

    /// The README's words on the contract.
    fn contract(self) -> String {
        match self {
            Self::Server => {
                "It needs none of toolport's plugin contract: any `wasi:cli/command` program that\n\
                             speaks MCP on stdin and stdout runs as a sandboxed server."
                    .to_string()
            }
            _ => format!(
                "It is built against the plugin contract this toolport serves, `toolport:plugin@{WIT_VERSION}`,\n\
                 vendored with the kit in `toolport-guest/wit/`."
            ),
        }
    }

    /// The README's words on what `toolport plugin inspect` shows.
    fn inspect(self) -> String {
        match self {
            Self::Server => {
                "shows `world: none` (a command, not a plugin) and every import: what it may *try* to\n\
                             use before you grant it anything."
                    .to_string()
            }
            _ => format!(
                "shows the world it targets (`{}`), the contract version and whether this toolport serves\n\
                 it, and every import: what it may *try* to use before you grant it anything.",
                self.as_str()
            ),
        }
    }
}

/// Templates (`{{name}}`-style placeholders, filled by [`fill`]).
mod template {
    pub const LIB_MANIFEST: &str = include_str!("../../../templates/plugin/lib.Cargo.toml");
    pub const SERVER_MANIFEST: &str = include_str!("../../../templates/plugin/server.Cargo.toml");
    pub const TOOLCHAIN: &str = include_str!("../../../templates/plugin/rust-toolchain.toml");
    pub const GITIGNORE: &str = include_str!("../../../templates/plugin/gitignore");
    /// The guest workspace's lock: a new project starts on the versions toolport's own plugins
    /// build with (cargo drops the entries it does not use at the first build), and builds
    /// without resolving anything, offline too when the registry cache has them.
    pub const LOCK: &str = include_str!("../../../../plugins/Cargo.lock");
    /// The repository's own formatting rules, which the templates and the kit follow.
    pub const RUSTFMT: &str = include_str!("../../../../rustfmt.toml");
    pub const README: &str = include_str!("../../../templates/plugin/README.md");
    pub const NAME_POLICY: &str = include_str!("../../../templates/plugin/name_policy.rs");
    pub const TOOL_SHAPE: &str = include_str!("../../../templates/plugin/tool_shape.rs");
    pub const TRANSPORT: &str = include_str!("../../../templates/plugin/transport.rs");
    pub const SERVER: &str = include_str!("../../../templates/plugin/server.rs");
    pub const GUARD: &str = include_str!("../../../templates/plugin/guard.rs");
    pub const ENABLE_NAME_POLICY: &str = include_str!("../../../templates/plugin/enable-name-policy.md");
    pub const ENABLE_TOOL_SHAPE: &str = include_str!("../../../templates/plugin/enable-tool-shape.md");
    pub const ENABLE_TRANSPORT: &str = include_str!("../../../templates/plugin/enable-transport.md");
    pub const ENABLE_SERVER: &str = include_str!("../../../templates/plugin/enable-server.md");
    pub const ENABLE_GUARD: &str = include_str!("../../../templates/plugin/enable-guard.md");
}

/// The guest kit and the contract, as the repository holds them.
mod kit {
    pub const MANIFEST: &str = include_str!("../../../../plugins/guest/Cargo.toml");
    /// The guest workspace's manifest: the values the kit's `*.workspace = true` fields inherit.
    pub const WORKSPACE_MANIFEST: &str = include_str!("../../../../plugins/Cargo.toml");
    /// (path inside `toolport-guest/`, contents).
    pub const FILES: [(&str, &str); 8] = [
        ("src/lib.rs", include_str!("../../../../plugins/guest/src/lib.rs")),
        ("src/json.rs", include_str!("../../../../plugins/guest/src/json.rs")),
        ("src/hooks.rs", include_str!("../../../../plugins/guest/src/hooks.rs")),
        ("src/log.rs", include_str!("../../../../plugins/guest/src/log.rs")),
        ("src/world.rs", include_str!("../../../../plugins/guest/src/world.rs")),
        ("wit/since_v0.1.0/types.wit", include_str!("../../../../wit/since_v0.1.0/types.wit")),
        ("wit/since_v0.1.0/worlds.wit", include_str!("../../../../wit/since_v0.1.0/worlds.wit")),
        ("wit/since_v0.1.0/deps/io.wit", include_str!("../../../../wit/since_v0.1.0/deps/io.wit")),
    ];
}

/// Names a new crate cannot take: Rust keywords and the standard crates cargo refuses, and the
/// kit's own name (the new crate depends on it).
const RESERVED: [&str; 14] = [
    "self",
    "super",
    "crate",
    "test",
    "core",
    "std",
    "alloc",
    "proc_macro",
    "proc-macro",
    "fn",
    "mod",
    "type",
    "toolport-guest",
    "toolport_guest",
];

/// Runs `plugin new`.
pub fn run(args: NewArgs) -> Result<ExitCode> {
    check_name(&args.name).map_err(ExitError::usage)?;
    let dest = args.path.clone().unwrap_or_else(|| PathBuf::from(&args.name));
    let files = project_files(&args.name, args.kind)?;
    write_project(&dest, &files)?;
    let shown = std::path::absolute(&dest).unwrap_or_else(|_| dest.clone());
    println!("created {} {} in {}", args.kind.as_str(), args.name, shown.display());
    println!("next:");
    println!("  cd {}", shown.display());
    println!("  cargo build --release --target wasm32-wasip2");
    println!("  toolport plugin inspect target/wasm32-wasip2/release/{}", artifact(&args.name, args.kind));
    println!("  then README.md: how to turn it on ({})", args.kind.turn_on(&args.name));
    Ok(ExitCode::SUCCESS)
}

/// A crate name cargo takes and a plugin name the config takes: `[a-z][a-z0-9_-]*`.
fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_fine = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !starts_well || !rest_fine || name.len() > 64 {
        return Err(format!(
            "invalid plugin name {name:?}: use lowercase letters, digits, '-' and '_', starting with \
             a letter, at most 64 characters (e.g. my-policy)"
        ));
    }
    if RESERVED.contains(&name) {
        return Err(format!("invalid plugin name {name:?}: it is reserved by Rust or cargo; pick another"));
    }
    Ok(())
}

/// The built component's file name: a library's artifact has `_` for `-`, a binary's keeps it.
fn artifact(name: &str, kind: NewKind) -> String {
    match kind {
        NewKind::Server => format!("{name}.wasm"),
        _ => format!("{}.wasm", name.replace('-', "_")),
    }
}

/// Replaces every `{{key}}` of `pairs` in `text`.
fn fill(text: &str, pairs: &[(&str, &str)]) -> String {
    pairs.iter().fold(text.to_string(), |text, (key, value)| text.replace(&format!("{{{{{key}}}}}"), value))
}

/// Every file of the new project: (path relative to its folder, contents).
fn project_files(name: &str, kind: NewKind) -> Result<Vec<(PathBuf, String)>> {
    let stem = name.replace('-', "_");
    let artifact = artifact(name, kind);
    let enable = match kind {
        NewKind::NamePolicy => template::ENABLE_NAME_POLICY,
        NewKind::ToolShape => template::ENABLE_TOOL_SHAPE,
        NewKind::Transport => template::ENABLE_TRANSPORT,
        NewKind::Server => template::ENABLE_SERVER,
        NewKind::Guard => template::ENABLE_GUARD,
    };
    // The variable a guard reads its words from: `MY_GUARD_WORDS` for `my-guard`.
    let words_var = format!("{}_WORDS", stem.to_uppercase());
    let pairs = [
        ("name", name),
        ("stem", stem.as_str()),
        ("kind", kind.as_str()),
        ("what", kind.what()),
        ("artifact", artifact.as_str()),
        ("version", WIT_VERSION),
        ("words_var", words_var.as_str()),
    ];
    let readme = template::README
        .replace("{{enable}}", enable)
        .replace("{{contract}}", &kind.contract())
        .replace("{{inspect}}", &kind.inspect());
    let readme = fill(&readme, &pairs);
    let mut files = vec![
        (PathBuf::from("rust-toolchain.toml"), template::TOOLCHAIN.to_string()),
        (PathBuf::from(".gitignore"), template::GITIGNORE.to_string()),
        (PathBuf::from("rustfmt.toml"), template::RUSTFMT.to_string()),
        (PathBuf::from("Cargo.lock"), template::LOCK.to_string()),
        (PathBuf::from("README.md"), readme),
    ];
    if kind == NewKind::Server {
        files.push((PathBuf::from("Cargo.toml"), fill(template::SERVER_MANIFEST, &pairs)));
        files.push((PathBuf::from("src/main.rs"), fill(template::SERVER, &pairs)));
        return Ok(files);
    }
    // A shape builds JSON values itself and a guard reads them; the other kinds only need the kit.
    let deps = match kind {
        NewKind::ToolShape | NewKind::Guard => {
            "serde_json = { version = \"1\", features = [\"preserve_order\"] }\n"
        }
        _ => "",
    };
    let manifest = fill(&template::LIB_MANIFEST.replace("{{deps}}", deps), &pairs);
    let source = match kind {
        NewKind::NamePolicy => template::NAME_POLICY,
        NewKind::ToolShape => template::TOOL_SHAPE,
        NewKind::Guard => template::GUARD,
        _ => template::TRANSPORT,
    };
    files.push((PathBuf::from("Cargo.toml"), manifest));
    files.push((PathBuf::from("src/lib.rs"), fill(source, &pairs)));
    files.push((PathBuf::from("toolport-guest/Cargo.toml"), vendored_kit_manifest()?));
    for (path, text) in kit::FILES {
        files.push((Path::new("toolport-guest").join(path), text.to_string()));
    }
    Ok(files)
}

/// The kit's manifest made standalone: each `x.workspace = true` replaced by the guest
/// workspace's value (a dependency keeps its own extra keys, such as `optional`).
fn vendored_kit_manifest() -> Result<String> {
    let mut doc: DocumentMut = kit::MANIFEST.parse().context("plugins/guest/Cargo.toml (embedded)")?;
    let workspace: DocumentMut = kit::WORKSPACE_MANIFEST.parse().context("plugins/Cargo.toml (embedded)")?;
    // The comment there is about this repository's workspace; the project gets its own words.
    if let Some(features) = doc.get_mut("features").and_then(Item::as_table_mut) {
        features.decor_mut().set_prefix(
            "\n# Exactly one, the plugin's kind: a component has one world (two is a compile error).\n",
        );
    }
    let inherits = |item: &Item| item.get("workspace").and_then(Item::as_bool) == Some(true);
    // `[package]` inherits from `[workspace.package]`, `[dependencies]` from `[workspace.dependencies]`.
    for section in ["package", "dependencies"] {
        let from = workspace.get("workspace").and_then(|w| w.get(section));
        let Some(table) = doc.get_mut(section).and_then(Item::as_table_like_mut) else { continue };
        let keys: Vec<String> =
            table.iter().filter(|(_, item)| inherits(item)).map(|(k, _)| k.to_string()).collect();
        for key in keys {
            let Some(value) = from.and_then(|f| f.get(&key)) else {
                bail!(
                    "plugins/guest/Cargo.toml: {section}.{key} inherits from the workspace, which lacks it"
                );
            };
            let mut value = value.clone();
            // Keys beside `workspace = true` (only dependencies have any) are kept.
            if let (Some(own), Some(merged)) =
                (table.get(&key).and_then(Item::as_table_like), value.as_table_like_mut())
            {
                for (k, v) in own.iter().filter(|(k, _)| *k != "workspace") {
                    merged.insert(k, v.clone());
                }
            }
            if let Some(inline) = value.as_inline_table_mut() {
                inline.fmt();
            }
            table.insert(&key, value);
        }
    }
    Ok(format!(
        "# toolport-guest, vendored by `toolport plugin new` with the contract it was made for\n\
         # (wit/, toolport:plugin@{WIT_VERSION}). Once the kit is on crates.io, depend on\n\
         # `toolport-guest = \"0.1\"` instead and delete this folder.\n{doc}"
    ))
}

/// Writes `files` under `dest` all or nothing: into a fresh folder beside it, renamed into
/// place at the end (over an empty `dest` too), so a failure leaves no half project.
fn write_project(dest: &Path, files: &[(PathBuf, String)]) -> Result<()> {
    match std::fs::read_dir(dest) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ExitError::usage(format!(
                    "{} already exists and is not empty: nothing written; pick another --path",
                    dest.display()
                ))
                .into());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Err(ExitError::usage(format!(
                "{} already exists and is not a folder: nothing written",
                dest.display()
            ))
            .into());
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", dest.display())),
    }
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(".toolport-plugin-new-")
        .tempdir_in(&parent)
        .with_context(|| format!("cannot create a folder in {}", parent.display()))?;
    for (path, text) in files {
        let file = staging.path().join(path);
        if let Some(folder) = file.parent() {
            std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
        }
        std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    // A temporary folder is private (0700); a project folder is an ordinary one.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot set the mode of {}", staging.path().display()))?;
    }
    std::fs::rename(staging.path(), dest).with_context(|| format!("cannot create {}", dest.display()))?;
    // The staging folder is now `dest`: dropping `staging` finds nothing left to remove.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rules() {
        for good in ["a", "my-policy", "shape_2", "x-1_y"] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in ["", "1abc", "-x", "My", "a b", "é", "a.b", "test", "toolport-guest"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_contract_written_is_the_one_served() {
        let worlds = kit::FILES.iter().find(|(p, _)| p.ends_with("worlds.wit")).map(|(_, t)| *t);
        let package = format!("package toolport:plugin@{WIT_VERSION};");
        assert!(worlds.is_some_and(|t| t.contains(&package)), "worlds.wit lacks {package}");
        let lib = kit::FILES.iter().find(|(p, _)| *p == "src/world.rs").map(|(_, t)| *t);
        assert!(lib.is_some_and(|t| t.contains("path: \"wit/since_v0.1.0\"")));
    }

    #[test]
    fn the_vendored_kit_manifest_inherits_nothing() {
        let manifest = vendored_kit_manifest().unwrap_or_else(|e| panic!("{e:#}"));
        assert!(!manifest.contains("workspace = true") && !manifest.contains(".workspace"), "{manifest}");
        assert!(!manifest.contains("policy-namespace"), "{manifest}");
        let doc: DocumentMut = manifest.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(doc["package"]["edition"].as_str(), Some("2024"));
        assert_eq!(doc["dependencies"]["wit-bindgen"]["version"].as_str(), Some("0.63"));
        assert_eq!(doc["dependencies"]["wasip2"]["optional"].as_bool(), Some(true));
    }

    #[test]
    fn every_file_of_the_kit_is_vendored() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/guest/src");
        let entries = std::fs::read_dir(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        for entry in entries.flatten() {
            let path = format!("src/{}", entry.file_name().to_string_lossy());
            assert!(kit::FILES.iter().any(|(p, _)| *p == path), "{path} is not in kit::FILES");
        }
    }

    #[test]
    fn a_guard_is_made_on_the_kit_with_its_words_variable() {
        let files = project_files("my-guard", NewKind::Guard).unwrap_or_else(|e| panic!("{e:#}"));
        let file = |name: &str| {
            files.iter().find(|(p, _)| p == Path::new(name)).map(|(_, t)| t.clone()).unwrap_or_default()
        };
        let manifest: DocumentMut = file("Cargo.toml").parse().unwrap_or_else(|e| panic!("{e}"));
        let kit = &manifest["dependencies"]["toolport-guest"];
        assert_eq!(kit["features"].as_array().and_then(|f| f.get(0)).and_then(|f| f.as_str()), Some("guard"));
        assert!(manifest["dependencies"]["serde_json"].is_inline_table(), "{manifest}");
        let lib = file("src/lib.rs");
        assert!(lib.contains("impl GuardGuest for Guard") && lib.contains("\"MY_GUARD_WORDS\""), "{lib}");
        assert!(lib.contains("const GUARD: &str = \"my-guard\";"), "{lib}");
        let readme = file("README.md");
        assert!(
            readme.contains("A toolport guard plugin, made by `toolport plugin new my-guard --kind guard`")
        );
        assert!(readme.contains(r#"{ "guards": ["my-guard"] }"#) && readme.contains("--env MY_GUARD_WORDS"));
        assert!(file("toolport-guest/src/hooks.rs").contains("pub fn params_json"));
        assert!(NewKind::Guard.turn_on("my-guard").contains(r#""guards": ["my-guard"]"#));
    }

    #[test]
    fn every_placeholder_is_filled() {
        for kind in
            [NewKind::Transport, NewKind::NamePolicy, NewKind::ToolShape, NewKind::Server, NewKind::Guard]
        {
            let files = project_files("my-plugin", kind).unwrap_or_else(|e| panic!("{e:#}"));
            for (path, text) in &files {
                assert!(!text.contains("{{"), "{kind:?} {}: unfilled placeholder", path.display());
            }
        }
    }
}
