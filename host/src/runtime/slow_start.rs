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

/// `connect timed out after MS ms`, and for a package runner the download and the fix.
pub(super) fn connect_timed_out(def: &ServerDef, after: Duration) -> String {
    let mut message = format!("{CONNECT_TIMED_OUT}{} ms", after.as_millis());
    if let Some(runner) = package_runner(def) {
        let fix = connect_timeout_fix(&def.name, longer_connect_timeout(after));
        message.push_str(&format!(
            ". {runner} downloads the server's packages on its first run, which can take longer. Fix: {fix}"
        ));
    }
    message
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
        ServerDef { name: "time".into(), command: Some(command.into()), ..ServerDef::default() }
    }

    #[test]
    fn package_runners_get_the_download_and_the_fix() {
        assert_eq!(
            connect_timed_out(&def("/usr/local/bin/uvx"), Duration::from_millis(30_000)),
            "connect timed out after 30000 ms. uvx downloads the server's packages on its first run, which \
             can take longer. Fix: toolport mcp set time timeouts.connectMs 120000"
        );
        assert_eq!(package_runner(&def("npx.cmd")), Some("npx"));
        assert_eq!(package_runner(&def("npxx")), None);
        assert_eq!(
            connect_timed_out(&def("node"), Duration::from_millis(500)),
            "connect timed out after 500 ms"
        );
    }
}
