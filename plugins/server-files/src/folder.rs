//! One open folder for the tools that go through many entries (`list_directory`, the walk of
//! `search_files` and `search_content`): its entries with their kinds, and its files' sizes
//! and bytes.
//!
//! In the component every file-system call is a host call, and std's go through wasi-libc,
//! which adds its own: an inode hash per directory entry (`metadata-hash-at`, for `d_ino`, which
//! nothing here reads) and per stat, a stream per file read and reads that start at 32 bytes.
//! So there the folder is a `wasi:filesystem` descriptor opened from its root's preopen, its
//! entries come with their kind from `read-directory`, and a file is read in one `read` sized
//! from its stat: about a third of the host calls per file. Natively it is a path and std's
//! calls, as before. In the component, a call that fails here is asked of std again, so errors
//! (and their wording) stay std's.

use std::path::{Path, PathBuf};

use crate::roots::Root;

/// What a directory entry is, without following a symbolic link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    /// A symbolic link, device, FIFO, socket or unknown.
    Other,
}

impl Kind {
    pub fn is_dir(self) -> bool {
        self == Self::Dir
    }

    pub fn is_file(self) -> bool {
        self == Self::File
    }

    fn of(file_type: std::fs::FileType) -> Self {
        if file_type.is_dir() {
            Self::Dir
        } else if file_type.is_file() {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// A folder's entries through std: names (lossy UTF-8) and kinds, unsorted; entries whose kind
/// cannot be read are left out, and a failing listing ends where it failed.
fn std_entries(path: &Path) -> std::io::Result<Vec<(String, Kind)>> {
    Ok(std::fs::read_dir(path)?
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), Kind::of(e.file_type().ok()?))))
        .collect())
}

/// A folder under a root: its path, and in the component its descriptor when it opened.
pub struct Folder {
    path: PathBuf,
    #[cfg(target_os = "wasi")]
    fd: Option<wasi::Descriptor>,
}

impl Folder {
    /// The folder at `path` (under `root`). Nothing is checked here: a folder that cannot be
    /// read fails at [`Self::entries`] with std's error.
    pub fn open(root: &Root, path: &Path) -> Self {
        #[cfg(not(target_os = "wasi"))]
        let _ = root;
        Self {
            path: path.to_path_buf(),
            #[cfg(target_os = "wasi")]
            fd: wasi::open_folder(root, path),
        }
    }

    /// Every entry with its kind, unsorted. Through std, entries whose kind cannot be read are
    /// left out and a listing that fails midway ends there.
    pub fn entries(&self) -> std::io::Result<Vec<(String, Kind)>> {
        #[cfg(target_os = "wasi")]
        if let Some(entries) = self.fd.as_ref().and_then(wasi::entries) {
            return Ok(entries);
        }
        std_entries(&self.path)
    }

    /// The entries as the component's descriptor lists them, all or none; `None` natively or
    /// when that fails, where the caller lists through std (which says why).
    pub fn entries_whole(&self) -> Option<Vec<(String, Kind)>> {
        #[cfg(target_os = "wasi")]
        return self.fd.as_ref().and_then(wasi::entries);
        #[cfg(not(target_os = "wasi"))]
        None
    }

    /// The size of the file `name` in this folder (following a symbolic link).
    pub fn file_len(&self, name: &str) -> Option<u64> {
        #[cfg(target_os = "wasi")]
        if let Some(len) = self.fd.as_ref().and_then(|fd| wasi::file_len(fd, name)) {
            return Some(len);
        }
        std::fs::metadata(self.path.join(name)).ok().map(|m| m.len())
    }

    /// The file `name` in this folder opened for reading (following a symbolic link), or
    /// `None` when it cannot be.
    pub fn open_file(&self, name: &str) -> Option<OpenFile> {
        #[cfg(target_os = "wasi")]
        if let Some(fd) = self.fd.as_ref().and_then(|fd| wasi::open_file(fd, name)) {
            return Some(OpenFile::Wasi(fd));
        }
        std::fs::File::open(self.path.join(name)).ok().map(OpenFile::Std)
    }
}

/// A file open for reading: its size from the open file (no second lookup of its path), then
/// its bytes.
pub enum OpenFile {
    Std(std::fs::File),
    #[cfg(target_os = "wasi")]
    Wasi(wasi::Descriptor),
}

impl OpenFile {
    pub fn size(&self) -> Option<u64> {
        match self {
            Self::Std(file) => file.metadata().ok().map(|m| m.len()),
            #[cfg(target_os = "wasi")]
            Self::Wasi(fd) => fd.stat().ok().map(|s| s.size),
        }
    }

    /// Every byte, the size having been `len` when looked at (room for it and one more: the
    /// whole file in one read, its end learnt with at most one other).
    pub fn read(self, len: u64) -> Option<Vec<u8>> {
        match self {
            Self::Std(mut file) => {
                use std::io::Read;
                let mut bytes = Vec::with_capacity(usize::try_from(len.saturating_add(1)).ok()?);
                file.read_to_end(&mut bytes).ok()?;
                Some(bytes)
            }
            #[cfg(target_os = "wasi")]
            Self::Wasi(fd) => wasi::read_all(&fd, len, u64::MAX),
        }
    }
}

/// In the component, the bytes of the file at `path` (under `root`), whose size was `len` when
/// looked at, at most `cap` of them: opened from the root's preopen and read in one call when
/// it fits in one. `None` natively or when that fails: the caller reads through std (which
/// says why).
pub fn read_capped(root: &Root, path: &Path, len: u64, cap: u64) -> Option<Vec<u8>> {
    #[cfg(target_os = "wasi")]
    return wasi::relative(root, path).and_then(|(base, rel)| wasi::read_file(base, rel, len, cap));
    #[cfg(not(target_os = "wasi"))]
    {
        let _ = (root, path, len, cap);
        None
    }
}

#[cfg(target_os = "wasi")]
mod wasi {
    pub use wasip2::filesystem::types::Descriptor;
    use wasip2::filesystem::types::{DescriptorFlags, DescriptorType, OpenFlags, PathFlags};

    use super::*;

    /// `path` (under `root`) opened from the root's preopen, or `None` (std is asked instead).
    pub fn open_folder(root: &Root, path: &Path) -> Option<Descriptor> {
        let (base, relative) = relative(root, path)?;
        base.open_at(PathFlags::SYMLINK_FOLLOW, relative, OpenFlags::DIRECTORY, DescriptorFlags::READ).ok()
    }

    /// The root's preopen and `path` relative to it (`.` for the root itself).
    pub fn relative<'a>(root: &'a Root, path: &'a Path) -> Option<(&'a Descriptor, &'a str)> {
        let base = root.dir.as_deref()?;
        let relative = path.strip_prefix(&root.path).ok()?.to_str()?;
        Some((base, if relative.is_empty() { "." } else { relative }))
    }

    /// Every entry with its kind, as the host listed them; `None` if any could not be read.
    pub fn entries(fd: &Descriptor) -> Option<Vec<(String, Kind)>> {
        let stream = fd.read_directory().ok()?;
        let mut entries = Vec::new();
        while let Some(entry) = stream.read_directory_entry().ok()? {
            let kind = match entry.type_ {
                DescriptorType::Directory => Kind::Dir,
                DescriptorType::RegularFile => Kind::File,
                _ => Kind::Other,
            };
            entries.push((entry.name, kind));
        }
        Some(entries)
    }

    pub fn file_len(fd: &Descriptor, name: &str) -> Option<u64> {
        fd.stat_at(PathFlags::SYMLINK_FOLLOW, name).ok().map(|s| s.size)
    }

    /// The file `name` under `fd`, as [`read_all`] reads it.
    pub fn read_file(fd: &Descriptor, name: &str, len: u64, cap: u64) -> Option<Vec<u8>> {
        read_all(&open_file(fd, name)?, len, cap)
    }

    /// The file `name` under `fd`, opened for reading.
    pub fn open_file(fd: &Descriptor, name: &str) -> Option<Descriptor> {
        fd.open_at(PathFlags::SYMLINK_FOLLOW, name, OpenFlags::empty(), DescriptorFlags::READ).ok()
    }

    /// At most `cap` bytes of the open `file`, whose size was `len` when looked at: reads until
    /// the host says the file ended, or the cap. A file up to [`HOST_READ_MAX`] takes one `read`
    /// of `len + 1` bytes: exactly `len` back is the whole file as its stat said (std would spend
    /// a second read to learn the end). Any other short answer is not taken for the end (a read
    /// may return less than asked).
    pub fn read_all(file: &Descriptor, len: u64, cap: u64) -> Option<Vec<u8>> {
        let whole = usize::try_from(len.min(cap).saturating_add(1)).ok()?;
        let mut bytes = Vec::new();
        loop {
            let got = bytes.len() as u64;
            let want = if got <= len { len + 1 - got } else { HOST_READ_MAX };
            let want = want.min(cap.saturating_sub(got));
            if want == 0 {
                return Some(bytes);
            }
            let (chunk, end) = file.read(want, got).ok()?;
            let done = chunk.is_empty() || end;
            let short = (chunk.len() as u64) < want;
            if bytes.is_empty() {
                // The host's answer is already a buffer of ours: a file read in one call is
                // not copied again.
                bytes = chunk;
            } else {
                bytes.extend_from_slice(&chunk);
            }
            if done || (short && bytes.len() as u64 == len) {
                return Some(bytes);
            }
            // More to come: room for the rest the stat promised, so later reads do not regrow it.
            bytes.reserve(whole.saturating_sub(bytes.len()));
        }
    }

    /// The most one `read` answers (wasmtime-wasi's `MAX_READ_SIZE_ALLOC`), asked for once a file
    /// has outgrown its stat.
    const HOST_READ_MAX: u64 = 64 * 1024;
}
