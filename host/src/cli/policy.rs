//! `toolport policy check`: how the policy file decides one request, and why, without
//! serving: the policies that allowed or denied it, or that none permits it.

use std::path::PathBuf;
use std::process::ExitCode;

use toolport::Paths;
use toolport::authz::{self, Action as PolicyAction, Hints, Policy, Principal, Target as PolicyTarget};

use super::ExitError;

/// The policy file's decisions.
#[derive(Debug, clap::Args)]
pub struct PolicyArgs {
    #[command(subcommand)]
    command: PolicyCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PolicyCommand {
    /// Explain one decision: allow or deny, and which policies decided. Exit 0 allow, 1 deny,
    /// 2 bad input.
    Check(CheckArgs),
}

/// One request to decide.
#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("target").required(true).args(["tool", "resource", "prompt", "endpoint"]))]
pub struct CheckArgs {
    /// The caller's subject (the token's `sub`; `anonymous` for no caller).
    #[arg(long, value_name = "SUB")]
    principal: String,
    /// A group of the caller (repeat for more).
    #[arg(long, value_name = "G")]
    group: Vec<String>,
    /// The OAuth client the caller's token was issued to.
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// A tool: the server's configured name and the server's own name for the tool.
    #[arg(long, value_name = "SERVER/TOOL")]
    tool: Option<String>,
    /// A resource's URI (with --server, the server that offers it).
    #[arg(long, value_name = "URI", requires = "server")]
    resource: Option<String>,
    /// The server that offers --resource.
    #[arg(long, value_name = "SERVER")]
    server: Option<String>,
    /// A prompt: the server's configured name and the prompt's name.
    #[arg(long, value_name = "SERVER/NAME")]
    prompt: Option<String>,
    /// One of serve's operator endpoints: /status or /metrics (action operate).
    #[arg(long, value_name = "PATH")]
    endpoint: Option<String>,
    /// call, list, read, prompt or operate (default: the one that uses the target).
    #[arg(long, value_name = "ACTION")]
    action: Option<String>,
    /// A tool annotation, NAME=true|false (readOnlyHint, destructiveHint, idempotentHint,
    /// openWorldHint); given ones replace those pinned in .toolport/tools.lock.
    #[arg(long, value_name = "NAME=BOOL")]
    annotation: Vec<String>,
    /// The policy file (default: <home>/policy.cedar).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
}

/// Runs `policy check`.
pub async fn run(paths: &Paths, args: PolicyArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        PolicyCommand::Check(args) => check(paths, args),
    }
}

fn check(paths: &Paths, args: CheckArgs) -> anyhow::Result<ExitCode> {
    let policy = load(paths, args.policy.as_deref())?;
    let principal = Principal {
        subject: args.principal.clone(),
        groups: args.group.clone(),
        client_id: args.client_id.clone(),
    };
    let (target, hints_from) = target(paths, &args)?;
    let action = match args.action.as_deref() {
        None => target.use_action(),
        Some(text) => PolicyAction::parse(text).ok_or_else(|| {
            ExitError::usage(format!("--action must be call, list, read, prompt or operate, not {text:?}"))
        })?,
    };
    let decision = policy.decide(&principal, action, &target);
    let groups = match args.group.is_empty() {
        true => String::new(),
        false => format!(
            " in {}",
            args.group.iter().map(|g| format!("Group::{g:?}")).collect::<Vec<_>>().join(", ")
        ),
    };
    println!(
        "{} User::{:?}{groups} {} {}",
        policy.file().display(),
        args.principal,
        action.as_str(),
        target.describe()
    );
    if let Some(from) = hints_from {
        println!("{from}");
    }
    for error in &decision.errors {
        println!("note: a policy failed to evaluate and counts as not matching: {error}");
    }
    println!("{}", decision.explain());
    Ok(if decision.allowed { ExitCode::SUCCESS } else { ExitCode::from(super::EXIT_FAILURE) })
}

/// `--policy`, else `<home>/policy.cedar`; a missing or bad file is bad input (exit 2).
fn load(paths: &Paths, given: Option<&std::path::Path>) -> anyhow::Result<Policy> {
    let loaded = match given {
        Some(file) => Policy::load(file).map(Some),
        None => Policy::load_from_home(&paths.home),
    };
    match loaded {
        Ok(Some(policy)) => Ok(policy),
        Ok(None) => Err(ExitError::usage(format!(
            "no policy file: {} does not exist (give --policy FILE)",
            paths.home.join(authz::POLICY_FILE).display()
        ))
        .into()),
        Err(e) => Err(ExitError::usage(e.to_string()).into()),
    }
}

/// The target, and for a tool a line saying where its annotations came from.
fn target<'a>(paths: &Paths, args: &'a CheckArgs) -> anyhow::Result<(PolicyTarget<'a>, Option<String>)> {
    let split = |flag: &str, text: &'a str| {
        text.split_once('/').filter(|(a, b)| !a.is_empty() && !b.is_empty()).ok_or_else(|| {
            ExitError::usage(format!(
                "--{flag} must be SERVER/NAME (the server's configured name, a slash, the name), not {text:?}"
            ))
        })
    };
    if let Some(text) = &args.tool {
        let (server, name) = split("tool", text)?;
        let pinned = authz::pinned_hints(&paths.workspace_root, server, name)
            .map_err(|e| ExitError::usage(e.to_string()))?;
        let mut hints = pinned.unwrap_or_default();
        for given in &args.annotation {
            let parsed = given.split_once('=').and_then(|(k, v)| v.parse::<bool>().ok().map(|v| (k, v)));
            let set = parsed.is_some_and(|(k, v)| hints.set(k, v));
            if !set {
                return Err(ExitError::usage(format!(
                    "--annotation must be NAME=true|false with NAME one of {}, not {given:?}",
                    Hints::NAMES.join(", ")
                ))
                .into());
            }
        }
        let from = match (pinned.is_some(), args.annotation.is_empty()) {
            (_, false) => "as given",
            (true, true) => "as pinned in .toolport/tools.lock",
            (false, true) => "not pinned in .toolport/tools.lock; give --annotation NAME=BOOL",
        };
        let line = format!("annotations: {} ({from})", hints.describe());
        return Ok((PolicyTarget::Tool { server, name, hints }, Some(line)));
    }
    if !args.annotation.is_empty() {
        return Err(ExitError::usage("--annotation is for --tool only").into());
    }
    if let Some(path) = &args.endpoint {
        return Ok((PolicyTarget::Endpoint { path }, None));
    }
    if let (Some(uri), Some(server)) = (&args.resource, &args.server) {
        return Ok((PolicyTarget::Resource { server, uri }, None));
    }
    let text = args.prompt.as_deref().unwrap_or_default();
    let (server, name) = split("prompt", text)?;
    Ok((PolicyTarget::Prompt { server, name }, None))
}
