//! Where toolport's files live: the home folder with the global store and the compiled-plugin
//! cache, and the workspace root with its `.toolport/workspace.json`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The folder inside a workspace root that marks it and holds the workspace file.
pub const WORKSPACE_DIR: &str = ".toolport";
/// The workspace file's name inside [`WORKSPACE_DIR`].
pub const WORKSPACE_FILE: &str = "workspace.json";
/// The tool pins' file inside [`WORKSPACE_DIR`]: meant to be committed with the project.
pub const TOOLS_LOCK_FILE: &str = "tools.lock";
/// The global store's name inside the home folder.
pub const STORE_FILE: &str = "mcp.json";
/// Names the per-user cache folder of the built-ins' compiled code (see [`shared_cache_dir`]).
pub const CACHE_DIR_ENV: &str = "TOOLPORT_CACHE_DIR";

/// Resolved locations for one invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `--home`, else `$TOOLPORT_HOME`, else `~/.toolport`.
    pub home: PathBuf,
    /// `--workspace`, else the nearest ancestor of the current folder holding `.toolport/`
    /// (never past a folder owned by someone else), else the current folder.
    pub workspace_root: PathBuf,
}

impl Paths {
    /// Resolves the paths from flags, the environment and the current folder. A workspace
    /// skipped because another user owns it is logged as a warning; [`Paths::locate`] returns
    /// that message instead, for a caller that prints its own warnings.
    pub fn discover(home: Option<&Path>, workspace: Option<&Path>) -> Result<Self> {
        let (paths, skipped) = Self::locate(home, workspace)?;
        if let Some(message) = skipped {
            tracing::warn!("{message}");
        }
        Ok(paths)
    }

    /// [`Paths::discover`], and the reason a `.toolport/` further up was not used, e.g.
    /// `not using the workspace /tmp: /tmp is owned by uid 1001, not by you (uid 1000); pass
    /// --workspace /tmp to use it`.
    pub fn locate(home: Option<&Path>, workspace: Option<&Path>) -> Result<(Self, Option<String>)> {
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
        let (workspace_root, skipped) = match workspace {
            Some(w) => (absolute(&cwd, w), None),
            None => find_workspace_root(&cwd, current_uid(), &home),
        };
        Ok((Self { home, workspace_root }, skipped))
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

    /// `<home>/results/`: call results too large for a model's context, kept whole
    /// (`results_store.rs`).
    pub fn results_dir(&self) -> PathBuf {
        self.home.join("results")
    }

    /// `<home>/listings/`: each server's last-known listing, what `serve` lists while the
    /// server is still connecting (`runtime/listing_store.rs`).
    pub fn listings_dir(&self) -> PathBuf {
        self.home.join("listings")
    }

    /// `<home>/credentials.json`: OAuth tokens, never in the store.
    pub fn credentials(&self) -> PathBuf {
        self.home.join("credentials.json")
    }

    /// `<home>/audit/decisions.jsonl`: the trail of trust decisions `mcp get` shows
    /// (`trust/audit.rs`).
    pub fn audit_trail(&self) -> PathBuf {
        self.home.join("audit").join("decisions.jsonl")
    }

    /// `<root>/.toolport/workspace.json`.
    pub fn workspace_file(&self) -> PathBuf {
        self.workspace_root.join(WORKSPACE_DIR).join(WORKSPACE_FILE)
    }

    /// `<root>/.toolport/tools.lock`.
    pub fn tools_lock(&self) -> PathBuf {
        tools_lock_in(&self.workspace_root)
    }
}

/// The per-user cache shared by every home: `$TOOLPORT_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/toolport`, else `~/.cache/toolport`; `None` when none can be named. The
/// built-ins' compiled code lives here (in `builtins/`, its key in `builtins.key`) rather than
/// in each home's `cache/`: the built-ins are the same bytes for every home, and compiling the
/// `files` server cold takes seconds, which every fresh home (`toolport demo`, a new project,
/// a test) paid again. Relative values are taken from the current folder, like `--home`.
pub fn shared_cache_dir() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var(CACHE_DIR_ENV) {
        return Some(match &cwd {
            Some(cwd) => absolute(cwd, &dir),
            None => dir,
        });
    }
    // The XDG spec ignores a relative `XDG_CACHE_HOME`.
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|d| d.is_absolute()) {
        return Some(xdg.join("toolport"));
    }
    std::env::home_dir().map(|home| home.join(".cache").join("toolport"))
}

/// `<root>/.toolport/tools.lock` of the workspace at `root`.
pub fn tools_lock_in(root: &Path) -> PathBuf {
    root.join(WORKSPACE_DIR).join(TOOLS_LOCK_FILE)
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) }
}

/// The nearest ancestor of `start` (itself included) that holds a `.toolport/` folder, and
/// the message for a `.toolport/` the climb refused. toolport's own home (`~/.toolport`, the
/// same name) is no workspace: taken for one, every project under `$HOME` without its own
/// `.toolport/` became the home folder itself, `mcp enable` wrote `~/.toolport/workspace.json`
/// and a server offered the workspace as its root was given the whole home. Like git's `safe.directory`, the climb
/// trusts only folders owned by `uid`: it never passes a folder owned by someone else (another
/// user's `/tmp/.toolport` must not become your workspace), and a `.toolport/` owned by
/// someone else is not used. `start` itself is where the user chose to be, so it is always
/// the fallback. Owners are what `stat` says; a folder that cannot be read stops the climb.
fn find_workspace_root(start: &Path, uid: Option<u32>, home: &Path) -> (PathBuf, Option<String>) {
    let is_home = |marker: &Path| {
        marker == home || matches!((marker.canonicalize(), home.canonicalize()), (Ok(a), Ok(b)) if a == b)
    };
    let fallback = (start.to_path_buf(), None);
    for dir in start.ancestors() {
        let marker = dir.join(WORKSPACE_DIR);
        let foreign = if dir == start { None } else { foreign_owner(dir, uid) };
        if let Some(owner) = foreign {
            // Only worth a word if the climb would have found a workspace beyond this point.
            return match dir
                .ancestors()
                .find(|d| d.join(WORKSPACE_DIR).is_dir() && !is_home(&d.join(WORKSPACE_DIR)))
            {
                Some(found) => (start.to_path_buf(), Some(skipped(found, dir, owner, uid))),
                None => fallback,
            };
        }
        if marker.is_dir() && !is_home(&marker) {
            return match foreign_owner(&marker, uid) {
                Some(owner) => (start.to_path_buf(), Some(skipped(dir, &marker, owner, uid))),
                None => (dir.to_path_buf(), None),
            };
        }
    }
    fallback
}

/// The owner of `path` when it is not `uid` (`None` for "ours", and where owners do not
/// apply). A folder whose owner cannot be read counts as foreign: trust needs proof.
fn foreign_owner(path: &Path, uid: Option<u32>) -> Option<Owner> {
    let uid = uid?;
    match owner_of(path) {
        Some(owner) if owner == uid => None,
        Some(owner) => Some(Owner::Uid(owner)),
        None => Some(Owner::Unknown),
    }
}

/// Who owns a folder the climb refused.
#[derive(Debug, Clone, Copy)]
enum Owner {
    Uid(u32),
    Unknown,
}

fn skipped(root: &Path, at: &Path, owner: Owner, uid: Option<u32>) -> String {
    let me = uid.map(|u| u.to_string()).unwrap_or_default();
    let why = match owner {
        Owner::Uid(o) => format!("{} is owned by uid {o}, not by you (uid {me})", at.display()),
        Owner::Unknown => format!("the owner of {} cannot be read", at.display()),
    };
    format!(
        "not using the workspace {}: {why}; pass --workspace {} to use it",
        root.display(),
        root.display()
    )
}

#[cfg(unix)]
fn current_uid() -> Option<u32> {
    Some(nix::unistd::geteuid().as_raw())
}

#[cfg(not(unix))]
fn current_uid() -> Option<u32> {
    None
}

#[cfg(unix)]
fn owner_of(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata(path).ok().map(|m| m.uid())
}

#[cfg(not(unix))]
fn owner_of(_path: &Path) -> Option<u32> {
    None
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
        assert_eq!(
            find_workspace_root(&nested, current_uid(), Path::new("/nowhere/.toolport")),
            (tmp.path().join("a"), None)
        );
        Ok(())
    }

    #[test]
    fn workspace_root_falls_back_to_start() -> Result<()> {
        let tmp = tempfile::tempdir()?;
        assert_eq!(
            find_workspace_root(tmp.path(), current_uid(), Path::new("/nowhere/.toolport")),
            (tmp.path().to_path_buf(), None)
        );
        Ok(())
    }

    #[test]
    fn the_climb_stops_at_a_folder_of_another_owner() -> Result<()> {
        let tmp = tempfile::tempdir()?;
        let nested = tmp.path().join("a/b");
        std::fs::create_dir_all(&nested)?;
        std::fs::create_dir_all(tmp.path().join(".toolport"))?;
        // Pretend to be someone who owns none of it: the climb must not leave `start`.
        let other = current_uid().map(|u| u.wrapping_add(1));
        let (root, skipped) = find_workspace_root(&nested, other, Path::new("/nowhere/.toolport"));
        assert_eq!(root, nested);
        let a = tmp.path().join("a");
        let expected = format!(
            "not using the workspace {}: {} is owned by uid {}, not by you (uid {}); pass --workspace {} to use it",
            tmp.path().display(),
            a.display(),
            owner_of(&a).unwrap_or_default(),
            other.unwrap_or_default(),
            tmp.path().display()
        );
        assert_eq!(skipped, Some(expected));
        Ok(())
    }

    #[test]
    fn toolports_own_home_is_no_workspace() -> Result<()> {
        let tmp = tempfile::tempdir()?;
        let project = tmp.path().join("my-project");
        std::fs::create_dir_all(&project)?;
        std::fs::create_dir_all(tmp.path().join(".toolport"))?;
        let home = tmp.path().join(".toolport");
        assert_eq!(find_workspace_root(&project, current_uid(), &home), (project.clone(), None));
        // In the home's own parent there is nothing else to be: that folder, as before.
        assert_eq!(find_workspace_root(tmp.path(), current_uid(), &home), (tmp.path().to_path_buf(), None));
        // A project's own `.toolport/` is found as ever.
        std::fs::create_dir_all(project.join(".toolport"))?;
        let nested = project.join("src");
        std::fs::create_dir_all(&nested)?;
        assert_eq!(find_workspace_root(&nested, current_uid(), &home), (project, None));
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
