//! `--token-env VAR`, as `serve --http` and `status` read it: the bearer token is the value of
//! the variable it names, never the flag's own text (a token on a command line is in every
//! `ps`), and a name that holds nothing is a usage error.

use super::ExitError;

/// The token in the variable `var` names; `None` when no `--token-env` was given.
pub fn read(var: Option<&str>) -> Result<Option<String>, ExitError> {
    let Some(var) = var else { return Ok(None) };
    match std::env::var(var) {
        Ok(token) if !token.is_empty() => Ok(Some(token)),
        _ => Err(ExitError::usage(format!("--token-env {var}: that variable is not set"))),
    }
}
