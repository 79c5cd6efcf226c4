//! Whether the running toolport is the one `PATH` finds: a project file (`.mcp.json` and the
//! like, meant to be committed) can then name it by its bare name, which works on a
//! teammate's machine too, where an absolute build path does not.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Why the bare name would not start this binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotOnPath {
    /// No executable of that name on `PATH`.
    Missing {
        /// The name looked for (the running binary's file name).
        name: String,
    },
    /// `PATH` finds another binary first.
    Other {
        /// The name looked for.
        name: String,
        /// What `PATH` finds instead.
        found: PathBuf,
    },
}

/// The running binary's file name when the first executable of that name on `path_var` is
/// the same file (canonical paths compared, so a symlink on `PATH` counts); otherwise why not.
pub fn command_on_path(exe: &Path, path_var: Option<&OsStr>) -> Result<String, NotOnPath> {
    let name = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let found = path_var
        .into_iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(&name))
        .find(|candidate| is_executable(candidate));
    let Some(found) = found else { return Err(NotOnPath::Missing { name }) };
    let same = match (std::fs::canonicalize(&found), std::fs::canonicalize(exe)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        return Err(NotOnPath::Other { name, found });
    }
    // A client finds `toolport.exe` as `toolport` on Windows too.
    Ok(Path::new(&name).file_stem().map_or(name.clone(), |s| s.to_string_lossy().into_owned()))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn executable(path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, "#!/bin/sh\n")?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
        Ok(())
    }

    #[test]
    fn the_first_match_on_path_decides() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let (bin, other, empty) =
            (dir.path().join("bin"), dir.path().join("other"), dir.path().join("empty"));
        for d in [&bin, &other, &empty] {
            std::fs::create_dir(d)?;
        }
        let exe = bin.join("toolport");
        executable(&exe)?;
        executable(&other.join("toolport"))?;
        std::fs::write(empty.join("toolport"), "not executable")?;
        let path = |dirs: &[&Path]| std::env::join_paths(dirs).ok();
        let on = |dirs: &[&Path]| command_on_path(&exe, path(dirs).as_deref());
        assert_eq!(on(&[&empty, &bin, &other]), Ok("toolport".into()));
        assert_eq!(
            on(&[&other, &bin]),
            Err(NotOnPath::Other { name: "toolport".into(), found: other.join("toolport") })
        );
        assert_eq!(on(&[&empty]), Err(NotOnPath::Missing { name: "toolport".into() }));
        assert_eq!(command_on_path(&exe, None), Err(NotOnPath::Missing { name: "toolport".into() }));
        // A link on PATH to the binary is the binary.
        let link = dir.path().join("links");
        std::fs::create_dir(&link)?;
        std::os::unix::fs::symlink(&exe, link.join("toolport"))?;
        assert_eq!(on(&[&link]), Ok("toolport".into()));
        Ok(())
    }
}
