//! `toolport mcp login <name> [--no-browser]` and `mcp logout <name>`: the person's side of
//! OAuth for one remote server, and the `oauth:` line of `mcp get`. The flow itself is the
//! library's ([`signin::login`]); this maps arguments in and lines out.

use std::process::ExitCode;

use anyhow::Result;

use super::ExitError;
use toolport::Paths;
use toolport::signin::{self, Completion as SignInCompletion, CredentialsFile};
use toolport::store::{GlobalStore, ServerDef};

/// Signs in to `name` and stores its tokens.
pub async fn login(paths: &Paths, name: &str, no_browser: bool) -> Result<ExitCode> {
    let def = stored(paths, name)?;
    if let Some(why) = signin::no_login(&def) {
        return Err(ExitError::usage(why).into());
    }
    let def = def.expanded(|k| std::env::var(k).ok())?;
    let file = CredentialsFile::new(paths.credentials());
    // `--no-browser`: the redirect address is pasted on this process's stdin.
    let completion = if no_browser {
        SignInCompletion::Paste(Box::new(tokio::io::BufReader::new(tokio::io::stdin())))
    } else {
        SignInCompletion::Browser
    };
    let signed_in = signin::login(&crate::cli::observer(), &def, &file, completion)
        .await
        .map_err(|e| ExitError::failure(format!("cannot sign in to {name}: {e:#}")))?;
    let issuer = signed_in.issuer.as_deref().map(|i| format!(" (issuer {i})")).unwrap_or_default();
    println!("mcp login: signed in to {name}{issuer}");
    Ok(ExitCode::SUCCESS)
}

/// Forgets `name`'s tokens (every issuer's).
pub fn logout(paths: &Paths, name: &str) -> Result<ExitCode> {
    let def = stored(paths, name)?;
    if let Some(why) = signin::not_remote(&def) {
        return Err(ExitError::usage(why).into());
    }
    let url = def.url.as_deref().unwrap_or_default();
    let file = CredentialsFile::new(paths.credentials());
    if file.forget(url)? {
        println!("mcp logout: {name} signed out (its tokens are forgotten)");
    } else {
        println!("mcp logout: {name} was not signed in");
    }
    Ok(ExitCode::SUCCESS)
}

/// `signed in (issuer …, expires …)` or `not signed in`, for `mcp get`.
pub fn oauth_state(paths: &Paths, def: &ServerDef) -> Result<String> {
    let Some(url) = def.url.as_deref() else { return Ok("not signed in".into()) };
    let Some(signed_in) = CredentialsFile::new(paths.credentials()).status(url)? else {
        return Ok("not signed in".into());
    };
    let mut parts = Vec::new();
    if let Some(issuer) = &signed_in.issuer {
        parts.push(format!("issuer {issuer}"));
    }
    if let Some(at) = signed_in.expires_at {
        let when = utc(at);
        let note = if signed_in.has_refresh_token { ", renewed automatically" } else { "" };
        parts.push(format!("expires {when}{note}"));
    }
    if signed_in.bound {
        parts.push("bound to a DPoP key".into());
    }
    Ok(if parts.is_empty() { "signed in".into() } else { format!("signed in ({})", parts.join(", ")) })
}

/// The stored definition of `name`.
fn stored(paths: &Paths, name: &str) -> Result<ServerDef> {
    let store = GlobalStore::load(&paths.store_file())?;
    let def = store.server(name).ok_or_else(|| ExitError::failure(format!("Unknown MCP server: {name}")))?;
    Ok(def.clone())
}

/// `2026-12-01 17:05 UTC` from epoch seconds.
fn utc(epoch: u64) -> String {
    i64::try_from(epoch)
        .ok()
        .and_then(|secs| chrono::DateTime::from_timestamp(secs, 0))
        .map_or_else(|| format!("{epoch} (epoch seconds)"), |t| t.format("%Y-%m-%d %H:%M UTC").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_seconds_read_as_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_796_145_900), "2026-12-01 17:25 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00 UTC");
    }
}
