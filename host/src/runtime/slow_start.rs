//! A connect timeout explained for the servers that are slow only the first time: a package
//! runner (`npx`, `uvx`, `pipx`, `bunx`) downloads the server's packages on its first run, which
//! often takes longer than the default 30 s. Such a timeout says so and prints the command that
//! raises `timeouts.connectMs`, runnable as printed.

use std::path::Path;

use crate::config::ServerDef;
use crate::fix_command::{connect_timeout_fix, longer_connect_timeout};
use crate::transport::ConnectError;

/// The programs that fetch a package before running it, by file name.
const PACKAGE_RUNNERS: [&str; 4] = ["npx", "uvx", "pipx", "bunx"];

/// When `error` is a package runner's connect timeout, the download and the fix, to append
/// last, after anything else said of the failure, so the command ends the line.
pub(super) fn fix(def: &ServerDef, error: &ConnectError) -> Option<String> {
    let runner = package_runner(def).filter(|_| error.is_timeout())?;
    let fix = connect_timeout_fix(&def.name, longer_connect_timeout(def.timeouts.connect));
    Some(format!(
        ". {runner} downloads the server's packages on its first run, which can take longer. Fix: {fix}"
    ))
}

/// The runner a stdio server's command is (`npx`, `/usr/bin/npx`, `npx.cmd`), if it is one.
fn package_runner(def: &ServerDef) -> Option<&'static str> {
    let file = Path::new(def.command.as_deref()?).file_name()?.to_str()?;
    let stem = [".cmd", ".exe", ".bat", ".ps1"].iter().find_map(|ext| file.strip_suffix(ext)).unwrap_or(file);
    PACKAGE_RUNNERS.iter().copied().find(|runner| *runner == stem)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn def(command: &str) -> ServerDef {
        let mut def =
            ServerDef { name: "time".into(), command: Some(command.into()), ..ServerDef::default() };
        def.timeouts.connect = Duration::from_millis(30_000);
        def
    }

    /// `error` as a row shows it, the fix appended when there is one.
    fn with_fix(def: &ServerDef, error: ConnectError) -> String {
        let fix = fix(def, &error);
        error.noted(fix).to_string()
    }

    #[test]
    fn package_runners_get_the_download_and_the_fix_last() {
        let timed_out = ConnectError::TimedOut { after: Duration::from_millis(30_000) };
        assert_eq!(
            with_fix(&def("/usr/local/bin/uvx"), timed_out.clone()),
            "connect timed out after 30000 ms. uvx downloads the server's packages on its first run, which \
             can take longer. Fix: toolport mcp set time timeouts.connectMs 120000"
        );
        assert_eq!(
            with_fix(
                &def("npx"),
                timed_out.clone().noted(Some(
                    "; the server printed 1 line that is not JSON-RPC on stdout: \"hi\"".to_string()
                ))
            ),
            "connect timed out after 30000 ms; the server printed 1 line that is not JSON-RPC on stdout: \"hi\". \
             npx downloads the server's packages on its first run, which can take longer. Fix: toolport mcp set \
             time timeouts.connectMs 120000"
        );
        assert_eq!(package_runner(&def("npx.cmd")), Some("npx"));
        assert_eq!(package_runner(&def("npxx")), None);
        assert_eq!(with_fix(&def("node"), timed_out), "connect timed out after 30000 ms");
        assert_eq!(with_fix(&def("npx"), ConnectError::Exited("exited".into())), "exited");
    }
}
