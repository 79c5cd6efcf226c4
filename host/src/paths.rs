//! Where toolport's files live (DESIGN §3): the home folder with the global store and the
//! compiled-plugin cache, and the workspace root with its `.toolport/workspace.json`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The folder inside a workspace root that marks it and holds the workspace file.
pub const WORKSPACE_DIR: &str = ".toolport";
/// The workspace file's name inside [`WORKSPACE_DIR`].
pub const WORKSPACE_FILE: &str = "workspace.json";
/// The global store's name inside the home folder.
pub const STORE_FILE: &str = "mcp.json";

/// Resolved locations for one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `--home`, else `$TOOLPORT_HOME`, else `~/.toolport`.
    pub home: PathBuf,
    /// `--workspace`, else the nearest ancestor of the current folder holding `.toolport/`,
    /// else the current folder.
    pub workspace_root: PathBuf,
}

impl Paths {
    /// Resolves the paths from flags, the environment and the current folder.
    pub fn discover(home: Option<&Path>, workspace: Option<&Path>) -> Result<Self> {
        let cwd = std::env::current_dir().context("cannot read the current folder")?;
        let home = match home {
            Some(h) => absolute(&cwd, h),
            None => match std::env::var_os("TOOLPORT_HOME").filter(|v| !v.is_empty()) {
                Some(h) => absolute(&cwd, Path::new(&h)),
                None => std::env::home_dir()
                    .context("no home folder: set TOOLPORT_HOME or pass --home")?
                    .join(".toolport"),
            },
        };
        let workspace_root = match workspace {
            Some(w) => absolute(&cwd, w),
            None => find_workspace_root(&cwd),
        };
        Ok(Self { home, workspace_root })
    }

    /// Paths with an explicit home and workspace root (embedding hosts, tests, ACP sessions).
    pub fn new(home: impl Into<PathBuf>, workspace_root: impl Into<PathBuf>) -> Self {
        Self { home: home.into(), workspace_root: workspace_root.into() }
    }

    /// `<home>/mcp.json`.
    pub fn store_file(&self) -> PathBuf {
        self.home.join(STORE_FILE)
    }

    /// `<home>/cache/`: compiled plugin artifacts.
    pub fn cache_dir(&self) -> PathBuf {
        self.home.join("cache")
    }

    /// `<root>/.toolport/workspace.json`.
    pub fn workspace_file(&self) -> PathBuf {
        self.workspace_root.join(WORKSPACE_DIR).join(WORKSPACE_FILE)
    }
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) }
}

/// The nearest ancestor of `start` (itself included) that holds a `.toolport/` folder.
fn find_workspace_root(start: &Path) -> PathBuf {
    start.ancestors().find(|dir| dir.join(WORKSPACE_DIR).is_dir()).unwrap_or(start).to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_root_is_nearest_ancestor_with_marker() -> Result<()> {
        let tmp = tempfile::tempdir()?;
        let nested = tmp.path().join("a/b/c");
        std::fs::create_dir_all(&nested)?;
        std::fs::create_dir_all(tmp.path().join("a/.toolport"))?;
        assert_eq!(find_workspace_root(&nested), tmp.path().join("a"));
        Ok(())
    }

    #[test]
    fn workspace_root_falls_back_to_start() -> Result<()> {
        let tmp = tempfile::tempdir()?;
        assert_eq!(find_workspace_root(tmp.path()), tmp.path());
        Ok(())
    }

    #[test]
    fn explicit_flags_win_and_are_made_absolute() -> Result<()> {
        let p = Paths::discover(Some(Path::new("/h")), Some(Path::new("/w")))?;
        assert_eq!(p.store_file(), PathBuf::from("/h/mcp.json"));
        assert_eq!(p.workspace_file(), PathBuf::from("/w/.toolport/workspace.json"));
        Ok(())
    }
}
