//! What a person asks to grant or revoke (`--dir PATH[:ro|:rw]`, `--host PATTERN`, `--env NAME`),
//! checked before the store is touched: a folder made absolute and looked up, a host pattern
//! held to the sandbox's own rule, an environment variable name. Pure apart from the folder's
//! lookup, so every refusal happens before the lock is taken.

use std::path::{Path, PathBuf};

use crate::config::error::ConfigError;
use crate::config::sandbox_fields::expand_home;

/// One folder as asked for: what the file will hold and the folder it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::config) struct DirSpec {
    /// What is written to `grants.dirs`: the absolute path, or `~/…` as the person typed it
    /// (a store shared between machines keeps meaning "my notes" on each).
    pub written: String,
    /// The folder itself (`~` expanded, absolute).
    pub host: PathBuf,
    /// `:rw` was asked for.
    pub writable: bool,
}

/// Reads `PATH[:ro|:rw]` against `cwd`. Only a final `:ro` or `:rw` is a mode, so a path with
/// other colons in it stays whole. Whether the folder exists is [`DirSpec::check_exists`]'s
/// question: a revoke must work for a folder that has gone.
pub(in crate::config) fn dir_spec(text: &str, cwd: &Path) -> Result<DirSpec, ConfigError> {
    let (path, writable) = match text.rsplit_once(':') {
        Some((path, "rw")) => (path, true),
        Some((path, "ro")) => (path, false),
        _ => (text, false),
    };
    let path = path.trim();
    if path.is_empty() {
        return Err(ConfigError(format!("cannot grant {text:?}: a folder grant needs a path")));
    }
    if path == "~" || path.starts_with("~/") {
        return Ok(DirSpec { written: path.to_string(), host: expand_home(path), writable });
    }
    // `components()` drops `.` segments and a trailing `/`; `..` stays (through a symlink it
    // does not mean the lexical parent).
    let host: PathBuf = cwd.join(path).components().collect();
    let written = host
        .to_str()
        .ok_or_else(|| ConfigError(format!("cannot grant {}: the path is not UTF-8", host.display())))?
        .to_string();
    Ok(DirSpec { written, host, writable })
}

impl DirSpec {
    /// Refuses a folder that is not there (or is a file): a grant of a typo would give the
    /// guest nothing and fail only when the server starts.
    pub fn check_exists(&self) -> Result<(), ConfigError> {
        match std::fs::metadata(&self.host) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(ConfigError(format!("cannot grant {}: not a folder", self.host.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ConfigError(format!("cannot grant {}: no such folder", self.host.display())))
            }
            Err(e) => Err(ConfigError(format!("cannot grant {}: {e}", self.host.display()))),
        }
    }
}

/// Whether two paths name the same file or folder: equal paths, or the same one once links are
/// followed (`~/notes` and `/home/me/notes`, a folder and a link to it). Granted folders are
/// matched this way, and `plugin inspect` finds the store entries of a component file with it.
pub fn same_path(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// Checks a `grants.hosts` entry by the sandbox's own rule and words.
pub(crate) fn check_host_pattern(text: &str) -> Result<(), ConfigError> {
    crate::config::host_pattern::HostPattern::parse(text).map(|_| ())
}

/// An environment variable name as shells and `env` take it: letters, digits and `_`, not
/// starting with a digit. Anything else could never be set, so its grant is a typo.
pub(in crate::config) fn check_env_name(name: &str) -> Result<(), ConfigError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        return Ok(());
    }
    Err(ConfigError(format!(
        "bad env grant {name:?}: an environment variable name is letters, digits and _, not starting with a digit"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> DirSpec {
        dir_spec(text, Path::new("/work/project")).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn folders_are_made_absolute_and_keep_a_home_as_typed() {
        let d = spec("notes/./");
        assert_eq!((d.written.as_str(), d.writable), ("/work/project/notes", false));
        assert_eq!(spec("/srv/data:rw").written, "/srv/data");
        assert!(spec("/srv/data:rw").writable);
        assert!(!spec("/srv/data:ro").writable);
        assert_eq!(spec("../shared").written, "/work/project/../shared");
        let home = spec("~/notes:rw");
        assert_eq!(home.written, "~/notes");
        assert_eq!(home.host, expand_home("~/notes"));
        // Only a final :ro / :rw is a mode.
        assert_eq!(spec("/srv/a:b").written, "/srv/a:b");
        assert_eq!(spec("/srv/a:rx").written, "/srv/a:rx");
        assert_eq!(
            dir_spec(":rw", Path::new("/")).err().map(|e| e.0).as_deref(),
            Some("cannot grant \":rw\": a folder grant needs a path")
        );
    }

    #[test]
    fn a_folder_must_exist_and_be_a_folder() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let file = tmp.path().join("f.txt");
        std::fs::write(&file, "x")?;
        assert!(dir_spec(".", tmp.path())?.check_exists().is_ok());
        let gone = dir_spec("gone", tmp.path())?.check_exists().err().map(|e| e.0);
        assert_eq!(gone, Some(format!("cannot grant {}: no such folder", tmp.path().join("gone").display())));
        let not_dir = dir_spec("f.txt", tmp.path())?.check_exists().err().map(|e| e.0);
        assert_eq!(not_dir, Some(format!("cannot grant {}: not a folder", file.display())));
        Ok(())
    }

    #[test]
    fn same_path_follows_links() -> anyhow::Result<()> {
        let tmp = tempfile::tempdir()?;
        let real = tmp.path().join("real");
        std::fs::create_dir(&real)?;
        std::os::unix::fs::symlink(&real, tmp.path().join("link"))?;
        assert!(same_path(&real, &tmp.path().join("link")));
        assert!(!same_path(&real, tmp.path()));
        assert!(same_path(Path::new("/gone/a"), Path::new("/gone/a")));
        Ok(())
    }

    #[test]
    fn host_patterns_follow_the_sandbox_rule_and_words() {
        for ok in [
            "https://api.example.com",
            "tcp://127.0.0.1:*",
            "http://[::1]:8080",
            "https://*.example.com:443",
            "udp://10.0.0.1:53",
            "HTTP://LOCALHOST:*",
        ] {
            assert_eq!(check_host_pattern(ok), Ok(()), "{ok}");
        }
        let why = |text: &str| check_host_pattern(text).err().unwrap_or_default();
        assert_eq!(
            why("example.com:80"),
            "bad host grant \"example.com:80\": no scheme (expected scheme://host:port)"
        );
        assert!(why("tcp://127.0.0.1").contains(": no port and no default for this scheme ("));
        assert!(why("https://a.*.com:443").contains(": `*` only as the whole leading label ("));
        assert!(why("https://x.com:443/path").contains(": no host, or a path ("));
        assert!(why("http://x.com:99999").contains(": bad port ("));
        assert!(why("http://[::1:80").contains(": unclosed [ ("));
    }

    #[test]
    fn env_names_are_checked() {
        for ok in ["API_KEY", "_x", "a1"] {
            assert!(check_env_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B"] {
            assert!(check_env_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_env_name("A-B").err().map(|e| e.0).as_deref(),
            Some(
                "bad env grant \"A-B\": an environment variable name is letters, digits and _, not starting with a digit"
            )
        );
    }
}
