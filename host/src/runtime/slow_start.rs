//! A connect timeout explained for the servers that are slow only the first time: a package
//! runner (`npx`, `uvx`, `pipx`, `bunx`) downloads the server's packages on its first run, which
//! often takes longer than the default 30 s. Such a timeout says so and prints the command that
//! raises `timeouts.connectMs`, runnable as printed.

use std::path::Path;
use std::time::Duration;

use crate::config::ServerDef;
use crate::fix_command::{connect_timeout_fix, longer_connect_timeout};
use crate::status::CONNECT_TIMED_OUT;

/// The programs that fetch a package before running it, by file name.
const PACKAGE_RUNNERS: [&str; 4] = ["npx", "uvx", "pipx", "bunx"];

/// `connect timed out after MS ms`.
pub(super) fn connect_timed_out(after: Duration) -> String {
    format!("{CONNECT_TIMED_OUT}{} ms", after.as_millis())
}

/// `error`, when it is a package runner's connect timeout, with the download and the fix
/// appended: last, after anything else said of the failure, so the command ends the line.
pub(super) fn with_fix(def: &ServerDef, mut error: String) -> String {
    if let (true, Some(runner)) = (error.starts_with(CONNECT_TIMED_OUT), package_runner(def)) {
        let fix = connect_timeout_fix(&def.name, longer_connect_timeout(def.timeouts.connect));
        error.push_str(&format!(
            ". {runner} downloads the server's packages on its first run, which can take longer. Fix: {fix}"
        ));
    }
    error
}

/// The runner a stdio server's command is (`npx`, `/usr/bin/npx`, `npx.cmd`), if it is one.
fn package_runner(def: &ServerDef) -> Option<&'static str> {
    let file = Path::new(def.command.as_deref()?).file_name()?.to_str()?;
    let stem = [".cmd", ".exe", ".bat", ".ps1"].iter().find_map(|ext| file.strip_suffix(ext)).unwrap_or(file);
    PACKAGE_RUNNERS.iter().copied().find(|runner| *runner == stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(command: &str) -> ServerDef {
        let mut def =
            ServerDef { name: "time".into(), command: Some(command.into()), ..ServerDef::default() };
        def.timeouts.connect = Duration::from_millis(30_000);
        def
    }

    #[test]
    fn package_runners_get_the_download_and_the_fix_last() {
        let timed_out = connect_timed_out(Duration::from_millis(30_000));
        assert_eq!(
            with_fix(&def("/usr/local/bin/uvx"), timed_out.clone()),
            "connect timed out after 30000 ms. uvx downloads the server's packages on its first run, which \
             can take longer. Fix: toolport mcp set time timeouts.connectMs 120000"
        );
        assert_eq!(
            with_fix(
                &def("npx"),
                format!("{timed_out}; the server printed 1 line that is not JSON-RPC on stdout: \"hi\"")
            ),
            "connect timed out after 30000 ms; the server printed 1 line that is not JSON-RPC on stdout: \"hi\". \
             npx downloads the server's packages on its first run, which can take longer. Fix: toolport mcp set \
             time timeouts.connectMs 120000"
        );
        assert_eq!(package_runner(&def("npx.cmd")), Some("npx"));
        assert_eq!(package_runner(&def("npxx")), None);
        assert_eq!(with_fix(&def("node"), timed_out), "connect timed out after 30000 ms");
        assert_eq!(with_fix(&def("npx"), "exited".into()), "exited");
    }
}
