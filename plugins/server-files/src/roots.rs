//! The folders this server may touch, and turning a client's path into one of them — or a
//! refusal, decided on the text alone before the filesystem is touched.
//!
//! In the component the roots are the preopened directories, named by their guest paths; the
//! host decides what is behind them and whether they are writable. Natively they are the
//! `DIR[:rw]` arguments, canonicalized.

use std::path::{Component, Path, PathBuf};

use crate::errors::ToolError;

/// One allowed folder.
#[derive(Debug, Clone)]
pub struct Root {
    /// The path clients use: the preopen's guest path, or the canonical host path natively.
    pub path: PathBuf,
    pub writable: bool,
    /// In the component, the preopen itself: the folders under it are opened from it
    /// (`folder`), not through wasi-libc's own table of preopens.
    #[cfg(target_os = "wasi")]
    pub dir: Option<std::sync::Arc<wasip2::filesystem::types::Descriptor>>,
}

/// A client's path, inside a root.
#[derive(Debug)]
pub struct Resolved<'a> {
    pub root: &'a Root,
    /// The path to open: the root's path joined with the client's path, normalized.
    pub path: PathBuf,
}

impl Resolved<'_> {
    /// Refuses a write before it is tried in a folder granted read-only.
    pub fn writable(&self) -> Result<&Self, ToolError> {
        if self.root.writable { Ok(self) } else { Err(ToolError::read_only(&self.path)) }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Roots {
    roots: Vec<Root>,
}

impl Roots {
    #[cfg(test)]
    pub fn new(roots: Vec<Root>) -> Self {
        Self { roots }
    }

    pub fn all(&self) -> &[Root] {
        &self.roots
    }

    /// The component's roots: every preopened directory, writable when its descriptor allows
    /// changing the directory (`mutate-directory`).
    #[cfg(target_os = "wasi")]
    pub fn from_preopens() -> Self {
        use wasip2::filesystem::types::DescriptorFlags;
        let roots = wasip2::filesystem::preopens::get_directories()
            .into_iter()
            .map(|(descriptor, path)| Root {
                path: normalize(Path::new(&path)),
                writable: descriptor
                    .get_flags()
                    .is_ok_and(|flags| flags.contains(DescriptorFlags::MUTATE_DIRECTORY)),
                dir: Some(std::sync::Arc::new(descriptor)),
            })
            .collect();
        Self { roots }
    }

    /// The native build's roots: `DIR` (read-only) or `DIR:rw` (read-write) arguments.
    #[cfg(not(target_os = "wasi"))]
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut roots = Vec::new();
        for arg in args {
            let (dir, writable) = match arg.rsplit_once(':') {
                Some((dir, "rw")) => (dir, true),
                Some((dir, "ro")) => (dir, false),
                _ => (arg.as_str(), false),
            };
            let path = std::fs::canonicalize(dir).map_err(|e| format!("cannot use folder {dir}: {e}"))?;
            if !path.is_dir() {
                return Err(format!("{dir} is not a folder"));
            }
            roots.push(Root { path, writable });
        }
        Ok(Self { roots })
    }

    /// Resolves a client's path: absolute under a root (the longest matching one), or relative
    /// to the first root. `..` anywhere and absolute paths outside every root are refused.
    pub fn resolve(&self, input: &str) -> Result<Resolved<'_>, ToolError> {
        let first =
            self.roots.first().ok_or_else(|| ToolError::refused("no folders are granted to this server"))?;
        let path = Path::new(input);
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(ToolError::refused(format!("{input}: paths with '..' are not allowed")));
        }
        let path = normalize(path);
        if path.is_absolute() {
            let root = self
                .roots
                .iter()
                .filter(|r| path.starts_with(&r.path))
                .max_by_key(|r| r.path.components().count())
                .ok_or_else(|| ToolError::refused(format!("{input} is outside the allowed folders")))?;
            return Ok(Resolved { root, path });
        }
        Ok(Resolved { root: first, path: normalize(&first.path.join(path)) })
    }
}

impl Roots {
    /// [`resolve`](Self::resolve), then the symbolic-link check of [`Resolved::contained`]:
    /// what every tool calls. `follow` says whether the tool follows the last component.
    pub fn locate(&self, input: &str, follow: bool) -> Result<Resolved<'_>, ToolError> {
        let resolved = self.resolve(input)?;
        resolved.contained(follow)?;
        Ok(resolved)
    }
}

impl Resolved<'_> {
    /// Natively nothing stops a symbolic link inside a root from leading out of it, so the path
    /// (when `follow`), or else its parent, or its deepest existing ancestor must canonicalize
    /// inside the root. In the component the host's sandbox (cap-std) refuses such a path
    /// itself, and the error says so ([`ToolError::io`]).
    #[cfg(not(target_os = "wasi"))]
    pub fn contained(&self, follow: bool) -> Result<(), ToolError> {
        let mut probe: &Path = match self.path.parent() {
            Some(parent) if !follow && self.path != self.root.path => parent,
            _ => &self.path,
        };
        loop {
            if let Ok(real) = std::fs::canonicalize(probe) {
                if real.starts_with(&self.root.path) {
                    return Ok(());
                }
                return Err(ToolError::refused(format!(
                    "{} leads outside the allowed folders (through a symbolic link)",
                    self.path.display()
                )));
            }
            match probe.parent() {
                Some(parent) => probe = parent,
                None => return Ok(()),
            }
        }
    }

    #[cfg(target_os = "wasi")]
    pub fn contained(&self, _follow: bool) -> Result<(), ToolError> {
        Ok(())
    }
}

/// `path` without `.` components and repeated or trailing separators (`..` is refused before).
fn normalize(path: &Path) -> PathBuf {
    let normal: PathBuf = path.components().filter(|c| *c != Component::CurDir).collect();
    if normal.as_os_str().is_empty() { PathBuf::from(".") } else { normal }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> Roots {
        Roots::new(vec![
            Root { path: "/data".into(), writable: false },
            Root { path: "/data/out".into(), writable: true },
            Root { path: "/work".into(), writable: true },
        ])
    }

    #[test]
    fn absolute_paths_pick_the_longest_root() {
        let roots = roots();
        let r = roots.resolve("/data/out/x.txt").unwrap();
        assert_eq!(r.root.path, Path::new("/data/out"));
        assert!(r.writable().is_ok());
        let r = roots.resolve("/data//a/./b.txt").unwrap();
        assert_eq!(r.path, Path::new("/data/a/b.txt"));
        assert!(
            r.writable().unwrap_err().text().starts_with("refused: /data/a/b.txt is in a read-only folder")
        );
    }

    #[test]
    fn relative_paths_are_under_the_first_root() {
        let roots = roots();
        assert_eq!(roots.resolve("a/b").unwrap().path, Path::new("/data/a/b"));
        assert_eq!(roots.resolve(".").unwrap().path, Path::new("/data"));
        assert_eq!(roots.resolve("").unwrap().path, Path::new("/data"));
    }

    #[test]
    fn dot_dot_and_outside_paths_are_refused() {
        let roots = roots();
        for bad in ["../etc/passwd", "/data/../etc", "a/../../b", "/data/out/.."] {
            let err = roots.resolve(bad).unwrap_err().text();
            assert!(err.starts_with("refused: ") && err.contains("'..'"), "{bad}: {err}");
        }
        let err = roots.resolve("/etc/passwd").unwrap_err().text();
        assert_eq!(err, "refused: /etc/passwd is outside the allowed folders");
        assert!(roots.resolve("/database").unwrap_err().text().contains("outside"));
    }

    #[test]
    fn no_roots_refuses_everything() {
        assert!(Roots::default().resolve("a").unwrap_err().text().starts_with("refused: no folders"));
    }
}
