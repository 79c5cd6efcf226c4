//! The argument language of `mcp add`, shared by the command line and the interactive
//! `/mcp add` line (which splits with `shlex` first), so both accept exactly the same things.
//!
//! ```text
//! add [--transport <stdio|sse|http|streamable_http|PLUGIN>] <name> <url>
//! add [--transport stdio] <name> -- <command> [args…]      (everything after -- verbatim)
//! add [--transport stdio] <name> <command> [args…]         (args verbatim from the command on)
//!     [--env K=V]… [--header "K: V"]… [--cwd DIR]           (before the target)
//!     [--include GLOB]… [--exclude GLOB]…                   (the `tools` filter)
//!     [--roots workspace|none|client | --roots PATH…]         (the `roots` setting)
//!     [--protocol-version REVISION]                         (the one revision spoken)
//!     [--connect-timeout MS] [--list-timeout MS] [--call-timeout MS]   (the `timeouts`)
//!     [--sandbox | --no-sandbox]            (`"sandbox": true`, or not whatever the store's default)
//!     [--force]                                 (replace a definition of that name wholesale)
//! ```

use serde_json::{Map, Value};

use super::server_field::millis;
use crate::config::ConfigError;
use crate::config::server_def::{
    NativeSandbox, Roots, ServerDef, Timeouts, TransportKind, known_revision, normalize_type,
};
use crate::config::tool_filter::ToolFilter;

/// The usage line of `/mcp add`, exactly as the original `/mcp` prints it.
pub const ADD_USAGE: &str = "Usage: /mcp add --transport <stdio|sse|http> <name> <target>";

/// A parsed `add`: the name and the definition to store (values as typed, `${VAR}` unexpanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddRequest {
    /// The server name.
    pub name: String,
    /// The definition, normalised.
    pub def: ServerDef,
    /// `--force`: replace a definition of that name (see `put_server`).
    pub force: bool,
    /// `--sandbox`, `--no-sandbox` or neither (the store's `defaults.sandbox` decides).
    pub sandbox: SandboxChoice,
}

/// Whether a server added is put under the OS sandbox: what the person said, else the store's
/// `defaults.sandbox` (applied by `put_server` under the store's lock, so it is the default of
/// the file as it is then).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SandboxChoice {
    /// Nothing said: a `stdio` server without a `sandbox` key gets `"sandbox": true` when the
    /// store's `defaults.sandbox` is on.
    #[default]
    StoreDefault,
    /// `--sandbox`: `"sandbox": true` whatever the default.
    On,
    /// `--no-sandbox`: no `sandbox` written whatever the default.
    Off,
}

impl AddRequest {
    /// The JSON written to the store (empty fields omitted).
    pub fn to_json(&self) -> Map<String, Value> {
        self.def.to_json()
    }
}

/// Parses `add`'s arguments (without the word `add`). Without `--transport` the server is
/// `stdio`. Errors are one sentence saying what is wrong; callers add their usage line.
pub fn parse_add_args(args: &[String]) -> Result<AddRequest, ConfigError> {
    let mut transport: Option<String> = None;
    let mut env = Vec::new();
    let mut headers = Vec::new();
    let mut cwd: Option<String> = None;
    let mut include: Vec<String> = Vec::new();
    let mut exclude: Vec<String> = Vec::new();
    let mut roots: Vec<String> = Vec::new();
    let mut protocol_version: Option<String> = None;
    let mut timeouts = Timeouts::default();
    let mut force = false;
    let mut sandbox = SandboxChoice::StoreDefault;
    let mut positional: Vec<String> = Vec::new();
    let mut verbatim: Option<Vec<String>> = None;

    let mut it = args.iter();
    while let Some(arg) = it.next() {
        // Once a stdio command has started, the rest belongs to it (`npx -y pkg --port 1`).
        if positional.len() >= 2 && is_stdio(transport.as_deref()) {
            positional.push(arg.clone());
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or_else(|| format!("{what} needs a value")),
            }
        };
        match flag {
            "--" => {
                verbatim = Some(it.by_ref().cloned().collect());
            }
            "--transport" | "-t" => transport = Some(value("--transport")?),
            "--env" | "-e" => {
                let kv = value("--env")?;
                let (k, v) = kv.split_once('=').ok_or("--env expects KEY=VALUE")?;
                let k = k.trim();
                if k.is_empty() {
                    return Err("--env expects KEY=VALUE with a non-empty KEY".into());
                }
                env.push((k.to_string(), v.trim().to_string()));
            }
            "--header" | "-H" => {
                let kv = value("--header")?;
                let (k, v) = kv.split_once(':').ok_or("--header expects \"Name: value\"")?;
                let k = k.trim();
                if k.is_empty() {
                    return Err("--header expects \"Name: value\" with a non-empty name".into());
                }
                headers.push((k.to_string(), v.trim().to_string()));
            }
            "--cwd" => cwd = Some(value("--cwd")?),
            "--include" => include.push(glob(value("--include")?, "--include")?),
            "--exclude" => exclude.push(glob(value("--exclude")?, "--exclude")?),
            "--roots" => roots.push(value("--roots")?),
            "--protocol-version" => {
                let revision = value("--protocol-version")?.trim().to_string();
                known_revision(&revision).map_err(|known| {
                    format!("--protocol-version must be one of {known}, not \"{revision}\"")
                })?;
                protocol_version = Some(revision);
            }
            "--connect-timeout" => timeouts.connect = millis(flag, &value(flag)?)?,
            "--list-timeout" => timeouts.list = millis(flag, &value(flag)?)?,
            "--call-timeout" => timeouts.call = millis(flag, &value(flag)?)?,
            "--force" if inline.is_none() => force = true,
            "--sandbox" | "--no-sandbox" if inline.is_none() => {
                let asked = if flag == "--sandbox" { SandboxChoice::On } else { SandboxChoice::Off };
                if sandbox != SandboxChoice::StoreDefault && sandbox != asked {
                    return Err("--sandbox and --no-sandbox contradict each other".into());
                }
                sandbox = asked;
            }
            f if f.starts_with('-') && f.len() > 1 && positional.len() < 2 => {
                return Err(ConfigError(format!("unknown option {f}")));
            }
            _ => positional.push(arg.clone()),
        }
    }

    let transport = match transport.as_deref() {
        None => TransportKind::Stdio.as_str().to_string(),
        Some(t) => normalize_type(t).ok_or("--transport needs a value")?,
    };
    let mut positional = positional.into_iter();
    let name = positional.next().map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
    let name = name.ok_or("missing server name")?;
    let tools = ToolFilter::new(include, exclude)
        .map_err(|bad| format!("--{} has a bad glob \"{}\": {}", bad.field, bad.glob, bad.reason))?;
    let mut def = ServerDef {
        name: name.clone(),
        transport: Some(transport.clone()),
        env,
        headers,
        cwd: cwd.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()),
        tools,
        roots: roots_setting(roots)?,
        protocol_version,
        timeouts,
        sandbox: (sandbox == SandboxChoice::On).then(NativeSandbox::default),
        ..ServerDef::default()
    };
    let rest: Vec<String> = positional.collect();
    if transport == TransportKind::Stdio.as_str() {
        let mut cmd = rest.into_iter().chain(verbatim.unwrap_or_default());
        def.command = cmd.next().map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
        def.command.as_ref().ok_or("missing command for stdio (put it after --)")?;
        def.args = cmd.collect();
    } else {
        if verbatim.is_some() {
            return Err(ConfigError(format!("{transport} takes a url, not a command after --")));
        }
        let mut rest = rest.into_iter();
        def.url = rest.next().map(|u| u.trim().to_string()).filter(|u| !u.is_empty());
        def.url.as_ref().ok_or_else(|| format!("missing url for {transport}"))?;
        if let Some(extra) = rest.next() {
            return Err(ConfigError(format!("unexpected argument after the url: {extra}")));
        }
    }
    if sandbox == SandboxChoice::On && transport != TransportKind::Stdio.as_str() {
        return Err(ConfigError(format!(
            "--sandbox is for stdio servers only: a server of type {transport} runs elsewhere"
        )));
    }
    Ok(AddRequest { name, def, force, sandbox })
}

/// The `--roots` values: none is the default, one keyword is that setting, anything else is a
/// list of paths (a folder named like a keyword is written `./none`).
fn roots_setting(values: Vec<String>) -> Result<Roots, ConfigError> {
    let values: Vec<String> = values.iter().map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err("--roots needs a value".into());
    }
    let keywords: Vec<&String> = values.iter().filter(|v| Roots::from_keyword(v).is_some()).collect();
    match (values.as_slice(), keywords.first()) {
        ([], _) => Ok(Roots::Workspace),
        ([one], Some(_)) => Ok(Roots::from_keyword(one).unwrap_or_default()),
        (_, Some(word)) => Err(ConfigError(format!(
            "--roots {word} cannot be combined with other --roots values (a folder of that name is ./{word})"
        ))),
        (_, None) => Ok(Roots::Paths(values)),
    }
}

/// One `--include`/`--exclude` value, trimmed as the file's globs are; blank is refused.
fn glob(value: String, flag: &str) -> Result<String, ConfigError> {
    let glob = value.trim();
    if glob.is_empty() {
        return Err(ConfigError(format!("{flag} needs a glob")));
    }
    Ok(glob.to_string())
}

fn is_stdio(t: Option<&str>) -> bool {
    t.is_none_or(|t| normalize_type(t).as_deref() == Some(TransportKind::Stdio.as_str()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn p(line: &str) -> Result<AddRequest, String> {
        let args: Vec<String> = shlex::split(line).unwrap_or_default();
        parse_add_args(&args).map_err(String::from)
    }

    #[test]
    fn network_transports_take_a_url() -> Result<(), String> {
        let r = p("--transport http remote https://h/mcp --header 'Authorization: Bearer ${T}'")?;
        assert_eq!(r.name, "remote");
        assert_eq!(
            Value::Object(r.to_json()),
            json!({"type":"streamable_http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${T}"}})
        );
        assert_eq!(p("--transport=SSE legacy http://h/sse")?.def.transport.as_deref(), Some("sse"));
        assert_eq!(p("--transport tcp t tcp://h:1")?.def.transport.as_deref(), Some("tcp"));
        Ok(())
    }

    #[test]
    fn a_protocol_version_is_a_revision_rmcp_speaks() -> Result<(), String> {
        let r = p("--protocol-version 2025-11-25 --transport http ref http://127.0.0.1:3000/mcp")?;
        assert_eq!(r.def.protocol_version.as_deref(), Some("2025-11-25"));
        assert_eq!(
            p("--protocol-version 2025-13-01 --transport http ref http://h/mcp"),
            Err("--protocol-version must be one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28, not \"2025-13-01\"".to_string())
        );
        Ok(())
    }

    #[test]
    fn stdio_after_double_dash_is_verbatim() -> Result<(), String> {
        let r = p("--transport stdio --env A=1 --cwd /srv files -- npx -y pkg --env X=1 -p a -p a --")?;
        assert_eq!(r.def.command.as_deref(), Some("npx"));
        assert_eq!(r.def.args, ["-y", "pkg", "--env", "X=1", "-p", "a", "-p", "a", "--"]);
        assert_eq!(r.def.env, [("A".to_string(), "1".to_string())]);
        assert_eq!(r.def.cwd.as_deref(), Some("/srv"));

        Ok(())
    }

    #[test]
    fn stdio_without_double_dash_and_without_transport() -> Result<(), String> {
        let r = p("files npx -y pkg")?;
        assert_eq!(r.def.transport.as_deref(), Some("stdio"));
        assert_eq!(r.def.command.as_deref(), Some("npx"));
        assert_eq!(r.def.args, ["-y", "pkg"]);
        Ok(())
    }

    #[test]
    fn include_and_exclude_repeat_and_become_the_tools_filter() -> Result<(), String> {
        let r = p("--include 'read_*' --exclude=*_delete --include search files -- npx --include x")?;
        assert_eq!(r.def.tools.include(), ["read_*", "search"]);
        assert_eq!(r.def.tools.exclude(), ["*_delete"]);
        assert_eq!(r.def.args, ["--include", "x"], "after the command, flags are the command's");
        assert_eq!(
            Value::Object(r.to_json())["tools"],
            json!({"include":["read_*","search"],"exclude":["*_delete"]})
        );
        assert_eq!(p("files npx")?.to_json().get("tools"), None);
        assert_eq!(
            p("--exclude '[a' files -- npx"),
            Err("--exclude has a bad glob \"[a\": unclosed character class; missing ']'".into())
        );
        assert_eq!(p("--include ' ' files -- npx"), Err("--include needs a glob".into()));
        assert_eq!(p("files --include"), Err("--include needs a value".into()));
        Ok(())
    }

    #[test]
    fn timeouts_and_force_are_flags() -> Result<(), String> {
        let r = p("--connect-timeout 120000 --call-timeout=5000 --force slow -- npx -y pkg --force")?;
        assert!(r.force);
        assert_eq!(
            Value::Object(r.to_json())["timeouts"],
            json!({"connectMs": 120000, "callMs": 5000}),
            "the list timeout stays the default, so it is not written"
        );
        assert_eq!(r.def.args, ["-y", "pkg", "--force"]);
        assert!(!p("slow -- npx")?.force);
        assert_eq!(
            p("--list-timeout 0 slow -- npx"),
            Err("--list-timeout must be a positive whole number of milliseconds, not \"0\"".into())
        );
        assert_eq!(p("--force=yes slow -- npx"), Err("unknown option --force".into()));
        Ok(())
    }

    #[test]
    fn sandbox_flags_say_on_or_off_whatever_the_default() -> Result<(), String> {
        let r = p("--sandbox fs -- npx -y pkg --no-sandbox")?;
        assert_eq!(r.sandbox, SandboxChoice::On);
        assert_eq!(r.def.args, ["-y", "pkg", "--no-sandbox"], "after the command, flags are the command's");
        assert_eq!(
            Value::Object(r.to_json()),
            json!({"type":"stdio","command":"npx","args":["-y","pkg","--no-sandbox"],"sandbox":true})
        );
        let r = p("--no-sandbox fs npx")?;
        assert_eq!((r.sandbox, r.to_json().get("sandbox")), (SandboxChoice::Off, None));
        assert_eq!(p("fs npx")?.sandbox, SandboxChoice::StoreDefault);
        assert_eq!(p("--sandbox --sandbox fs npx")?.sandbox, SandboxChoice::On);
        assert_eq!(
            p("--sandbox --no-sandbox fs npx"),
            Err("--sandbox and --no-sandbox contradict each other".into())
        );
        assert_eq!(
            p("--sandbox --transport http remote https://h/mcp"),
            Err("--sandbox is for stdio servers only: a server of type streamable_http runs elsewhere".into())
        );
        assert_eq!(p("--sandbox=yes fs npx"), Err("unknown option --sandbox".into()));
        Ok(())
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(p(""), Err("missing server name".into()));
        assert_eq!(p("--transport sse x"), Err("missing url for sse".into()));
        assert_eq!(p("--transport stdio x"), Err("missing command for stdio (put it after --)".into()));
        assert_eq!(p("--transport sse x u extra"), Err("unexpected argument after the url: extra".into()));
        assert_eq!(p("--env NOPE x -- c"), Err("--env expects KEY=VALUE".into()));
        assert_eq!(p("--header NOPE x -- c"), Err("--header expects \"Name: value\"".into()));
        assert_eq!(p("--bogus x -- c"), Err("unknown option --bogus".into()));
        assert_eq!(p("x --transport"), Err("--transport needs a value".into()));
        assert_eq!(p("--transport sse x u -- c"), Err("sse takes a url, not a command after --".into()));
    }
}
