//! The host's `read-directory` and its `directory-entry-stream`: wasmtime's, with each entry's
//! kind taken from the listing itself instead of a stat per entry.
//!
//! wasmtime-wasi 48 reads the whole folder on the first call and stats every entry (no-follow)
//! for its kind: a `statx` per entry, which for a guest walking 10,000 files was most of its
//! host time beyond the native server's. Linux's `getdents64` already says each entry's kind
//! (`d_type`) on the local file systems the guests are given; only an entry it leaves unknown
//! (some file systems do) is stat'ed, no-follow, as wasmtime would. Everything else is
//! wasmtime's: the folder is read whole on the first call (on the guest's thread or the
//! blocking pool, as the context says: `local_fs`), `.` and `..` are left out, the kinds map
//! the same way (a symbolic link stays one), a name that is not UTF-8 is that entry's
//! `illegal-byte-sequence`, a failing read ends the listing with its error.
//!
//! wasmtime's stream type cannot be built outside its crate, so the resource is replaced too:
//! the component imports `directory-entry-stream` from the linker by name, and every function
//! that takes or gives one (`read-directory`, `read-directory-entry`, its drop) is defined
//! here, against [`Listing`].

use std::ffi::CStr;
use std::io;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{self, DescriptorType, DirectoryEntry, ErrorCode};
use wasmtime_wasi::p2::{FsError, FsResult};

use super::files_gate::{GatedFiles, INTERFACE};

/// One `directory-entry-stream`: the folder's entries as read on the first call, handed out
/// one a call.
pub(crate) struct Listing(std::vec::IntoIter<FsResult<DirectoryEntry>>);

/// Replaces wasmtime's `directory-entry-stream` with [`Listing`], and the functions that use it.
/// Call it after `wasmtime_wasi::p2::add_to_linker_*` with shadowing allowed.
pub(crate) fn add_to_linker<T: GatedFiles>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    let mut types = linker.instance(INTERFACE)?;
    types.resource("directory-entry-stream", ResourceType::host::<Listing>(), |mut store, rep| {
        store.data_mut().filesystem().table.delete(Resource::<Listing>::new_own(rep))?;
        Ok(())
    })?;
    types.func_wrap_async(
        "[method]descriptor.read-directory",
        |mut store, (fd,): (Resource<Descriptor>,)| {
            Box::new(async move {
                let on_thread = store.data().files_on_thread();
                let mut fs = store.data_mut().filesystem();
                let listed = match fs.table.get(&fd)? {
                    Descriptor::Dir(dir) => {
                        let dir = std::sync::Arc::clone(&dir.dir);
                        if on_thread {
                            read_all(&dir)
                        } else {
                            wasmtime_wasi::runtime::spawn_blocking(move || read_all(&dir)).await
                        }
                    }
                    Descriptor::File(_) => Err(ErrorCode::NotDirectory.into()),
                };
                let answer = match listed {
                    Ok(entries) => Ok(fs.table.push(Listing(entries.into_iter()))?),
                    Err(e) => Err(types::Host::convert_error_code(&mut fs, e)?),
                };
                Ok((answer,))
            })
        },
    )?;
    types.func_wrap(
        "[method]directory-entry-stream.read-directory-entry",
        |mut store, (stream,): (Resource<Listing>,)| {
            let mut fs = store.data_mut().filesystem();
            let next = fs.table.get_mut(&stream)?.0.next().transpose();
            let answer = match next {
                Ok(entry) => Ok(entry),
                Err(e) => Err(types::Host::convert_error_code(&mut fs, e)?),
            };
            Ok((answer,))
        },
    )
}

/// Every entry of the folder `dir`, from its start (a descriptor of its own, so earlier reads
/// of `dir` do not move it), each with its kind or its error. An error opening or reading the
/// folder before any entry is the call's.
fn read_all(dir: &std::fs::File) -> FsResult<Vec<FsResult<DirectoryEntry>>> {
    let own = rustix::fs::openat(
        dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)?;
    let mut stream = rustix::fs::Dir::new(own).map_err(io::Error::from)?;
    let mut entries = Vec::new();
    while let Some(read) = stream.read() {
        let entry = match read {
            Ok(entry) => entry,
            // rustix's stream ends after an error, as std's and wasmtime's do.
            Err(e) => {
                entries.push(Err(FsError::from(io::Error::from(e))));
                continue;
            }
        };
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        entries.push(entry_of(dir, name, entry.file_type()));
    }
    Ok(entries)
}

/// One entry: its kind as listed, or (listed as unknown) from a no-follow stat of it in `dir`.
fn entry_of(dir: &std::fs::File, name: &CStr, listed: FileType) -> FsResult<DirectoryEntry> {
    let kind = match listed {
        FileType::Unknown => {
            let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)?;
            FileType::from_raw_mode(stat.st_mode)
        }
        known => known,
    };
    let name = name.to_str().map_err(|_| FsError::from(ErrorCode::IllegalByteSequence))?;
    Ok(DirectoryEntry { type_: descriptor_type(kind), name: name.to_string() })
}

/// wasmtime's mapping of a file type to WASI's.
fn descriptor_type(kind: FileType) -> DescriptorType {
    match kind {
        FileType::Directory => DescriptorType::Directory,
        FileType::Symlink => DescriptorType::SymbolicLink,
        FileType::RegularFile => DescriptorType::RegularFile,
        FileType::BlockDevice => DescriptorType::BlockDevice,
        FileType::CharacterDevice => DescriptorType::CharacterDevice,
        FileType::Fifo => DescriptorType::Fifo,
        FileType::Socket => DescriptorType::Socket,
        FileType::Unknown => DescriptorType::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use super::*;

    fn folder() -> tempfile::TempDir {
        tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"))
    }

    fn open(path: &Path) -> std::fs::File {
        std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
    }

    /// The listing of `path` as name → kind; an entry's error fails the test.
    fn listed(path: &Path) -> BTreeMap<String, DescriptorType> {
        let entries = read_all(&open(path)).unwrap_or_else(|e| panic!("read {}: {e:?}", path.display()));
        entries
            .into_iter()
            .map(|entry| entry.unwrap_or_else(|e| panic!("entry: {e:?}")))
            .map(|entry| (entry.name, entry.type_))
            .collect()
    }

    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(rustix::fs::CWD, path, FileType::Fifo, Mode::from_raw_mode(0o600), 0)
            .unwrap_or_else(|e| panic!("mkfifo {}: {e}", path.display()));
    }

    #[test]
    fn every_kind_is_listed_as_itself_and_a_link_is_not_followed() {
        let dir = folder();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("file"), "x").unwrap_or_else(|e| panic!("file: {e}"));
        std::fs::create_dir(at("sub")).unwrap_or_else(|e| panic!("sub: {e}"));
        std::os::unix::fs::symlink(at("sub"), at("to-sub")).unwrap_or_else(|e| panic!("link: {e}"));
        std::os::unix::fs::symlink("/nowhere/at/all", at("dangling")).unwrap_or_else(|e| panic!("link: {e}"));
        mkfifo(&at("pipe"));
        let _socket =
            std::os::unix::net::UnixListener::bind(at("sock")).unwrap_or_else(|e| panic!("socket: {e}"));

        let kinds = listed(dir.path());
        let expected: BTreeMap<String, DescriptorType> = [
            ("file", DescriptorType::RegularFile),
            ("sub", DescriptorType::Directory),
            ("to-sub", DescriptorType::SymbolicLink),
            ("dangling", DescriptorType::SymbolicLink),
            ("pipe", DescriptorType::Fifo),
            ("sock", DescriptorType::Socket),
        ]
        .into_iter()
        .map(|(name, kind)| (name.to_string(), kind))
        .collect();
        assert_eq!(format!("{kinds:?}"), format!("{expected:?}"), "no `.` or `..` either");
    }

    #[test]
    fn an_entry_listed_as_unknown_is_looked_at_without_following_it() {
        let dir = folder();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("loop"))
            .unwrap_or_else(|e| panic!("link: {e}"));
        mkfifo(&dir.path().join("pipe"));
        let base = open(dir.path());
        let kind = |name: &CStr| match entry_of(&base, name, FileType::Unknown) {
            Ok(entry) => format!("{:?}", entry.type_),
            Err(e) => panic!("entry: {e:?}"),
        };
        assert_eq!(kind(c"loop"), format!("{:?}", DescriptorType::SymbolicLink));
        assert_eq!(kind(c"pipe"), format!("{:?}", DescriptorType::Fifo));
        let gone = entry_of(&base, c"gone", FileType::Unknown).map(|_| ()).map_err(|e| e.downcast().ok());
        assert!(matches!(gone, Err(Some(ErrorCode::NoEntry))), "removed meanwhile: that entry's error");
    }

    #[test]
    fn a_name_that_is_not_utf8_is_that_entrys_error_and_the_rest_are_listed() {
        let dir = folder();
        std::fs::write(dir.path().join(OsStr::from_bytes(b"bad\xffname")), "x")
            .unwrap_or_else(|e| panic!("non-UTF-8 name: {e}"));
        std::fs::write(dir.path().join("good"), "x").unwrap_or_else(|e| panic!("good: {e}"));
        let entries = read_all(&open(dir.path())).unwrap_or_else(|e| panic!("read: {e:?}"));
        let mut names = Vec::new();
        let mut errors = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) => names.push(entry.name),
                Err(e) => errors.push(e.downcast().ok()),
            }
        }
        assert_eq!(names, ["good"]);
        assert!(matches!(errors.as_slice(), [Some(ErrorCode::IllegalByteSequence)]), "{errors:?}");
    }

    #[test]
    fn a_big_folder_is_listed_whole_as_std_lists_it_whatever_was_read_before() {
        let dir = folder();
        for i in 0..3000 {
            let path = dir.path().join(format!("entry-{i:04}-{}", "n".repeat(i % 40)));
            if i % 10 == 0 {
                std::fs::create_dir(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            } else {
                std::fs::write(&path, "").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
        }
        let from_std: BTreeMap<String, bool> = std::fs::read_dir(dir.path())
            .unwrap_or_else(|e| panic!("std read_dir: {e}"))
            .map(|entry| entry.unwrap_or_else(|e| panic!("std entry: {e}")))
            .map(|entry| (entry.file_name().to_string_lossy().into_owned(), entry.path().is_dir()))
            .collect();
        let base = open(dir.path());
        // A first listing read through the same descriptor does not shorten the second.
        for _ in 0..2 {
            let ours: BTreeMap<String, bool> = read_all(&base)
                .unwrap_or_else(|e| panic!("read: {e:?}"))
                .into_iter()
                .map(|entry| entry.unwrap_or_else(|e| panic!("entry: {e:?}")))
                .map(|entry| (entry.name, entry.type_ == DescriptorType::Directory))
                .collect();
            assert_eq!(ours.len(), 3000);
            assert!(ours == from_std, "the same names and folders as std::fs::read_dir");
        }
    }

    #[test]
    fn a_file_is_not_a_folder_to_list() {
        let dir = folder();
        std::fs::write(dir.path().join("file"), "x").unwrap_or_else(|e| panic!("file: {e}"));
        let listed = read_all(&open(&dir.path().join("file"))).map(|_| ()).map_err(|e| e.downcast().ok());
        assert!(matches!(listed, Err(Some(ErrorCode::NotDirectory))), "{listed:?}");
    }
}
