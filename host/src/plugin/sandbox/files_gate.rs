//! The host's `open-at`, `symlink-at` and `link-at`: wasmtime's own, refusing to open anything
//! under a granted folder that is not a regular file, a folder or a symlink to one, and to make
//! a link whose target leaves its folder.
//!
//! wasmtime opens a file on a blocking thread. Opening a FIFO for reading blocks until some
//! writer comes, and a terminal or device can block a read forever: the plugin's time limit
//! then ends the call, but not the thread, which stays stuck in `open` (each `/mcp retry` left
//! one more, and the process could not exit). A stat does not block on such files, so the
//! path is looked at first (sandboxed to the folder, as wasmtime resolves it; one plain name
//! not followed through a link needs no sandboxing, so it costs one `statx`, not three) and
//! refused as `access`, the error a granted folder's permissions give. A FIFO made between the look and
//! the open could slip through; WASI has no call that makes one, so only another program of
//! the host's user could, in a folder granted to a guest.
//!
//! wasmtime keeps a new link's own path inside the folder, and refuses an absolute target
//! (unrecorded), but writes any relative target text: `symlink-at("../../x", "l")` plants a
//! link the guest cannot follow and the host's programs do. The sandbox's link rule
//! ([`LinksGate::allows_link`]: down only) is asked first, and a refusal is `not-permitted`, as
//! wasmtime answers for an absolute one. `link-at` of a symlink copies the link with its target
//! (linkat does not follow it), so it is asked the same question of the target it copies.

use std::path::{Path, PathBuf};

use cap_primitives::fs::{FollowSymlinks, read_link_contents, stat};
use rustix::fs::{AtFlags, FileType};
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, DescriptorFlags, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
};

use super::context::LinksGate;

/// The interface wasmtime defines these functions in, by the name its linker uses (guests
/// importing any 0.2 version are matched to it).
pub(crate) const INTERFACE: &str = "wasi:filesystem/types@0.2.12";

/// What the replaced functions need of a store's data: wasmtime's filesystem, which does the
/// work, and the gate that decides which links the guest may make.
pub(crate) trait GatedFiles: WasiView + 'static {
    /// This store's link gate.
    fn links(&self) -> &LinksGate;

    /// Whether the guest's file-system calls run on its own thread (`local_fs`), as the
    /// context's folders were opened with: wasmtime keeps that setting to itself, and the
    /// host's replacements (`dir_listing`) must run where its own would.
    fn files_on_thread(&self) -> bool;
}

/// Replaces wasmtime's `[method]descriptor.open-at`, `symlink-at` and `link-at`. Call it after
/// `wasmtime_wasi::p2::add_to_linker_*` with shadowing allowed.
pub(crate) fn add_to_linker<T: GatedFiles>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    let mut types = linker.instance(INTERFACE)?;
    type Params = (Resource<Descriptor>, PathFlags, String, OpenFlags, DescriptorFlags);
    types.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store, (fd, path_flags, path, oflags, flags): Params| {
            Box::new(async move {
                let mut fs = store.data_mut().filesystem();
                if blocks_when_opened(&fs, &fd, path_flags, &path) {
                    tracing::warn!(path = %path.escape_debug(), "refused to open a file that is not a regular file or folder");
                    return Ok((Err(ErrorCode::Access),));
                }
                let opened = HostDescriptor::open_at(&mut fs, fd, path_flags, path, oflags, flags).await;
                Ok((answer(&mut fs, opened)?,))
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.symlink-at",
        |mut store, (fd, target, link): (Resource<Descriptor>, String, String)| {
            Box::new(async move {
                let data = store.data_mut();
                if !data.links().allows_link(&link, Path::new(&target)) {
                    return Ok((Err(ErrorCode::NotPermitted),));
                }
                let mut fs = data.filesystem();
                let made = HostDescriptor::symlink_at(&mut fs, fd, target, link).await;
                Ok((answer(&mut fs, made)?,))
            })
        },
    )?;
    type LinkParams = (Resource<Descriptor>, PathFlags, String, Resource<Descriptor>, String);
    types.func_wrap_async(
        "[method]descriptor.link-at",
        |mut store, (fd, flags, old, new_fd, new): LinkParams| {
            Box::new(async move {
                let data = store.data_mut();
                let copied = link_target(&data.filesystem(), &fd, &old);
                if copied.is_some_and(|target| !data.links().allows_link(&new, &target)) {
                    return Ok((Err(ErrorCode::NotPermitted),));
                }
                let mut fs = data.filesystem();
                let made = HostDescriptor::link_at(&mut fs, fd, flags, old, new_fd, new).await;
                Ok((answer(&mut fs, made)?,))
            })
        },
    )
}

/// wasmtime's result as the guest sees it: its error as a WASI error code, or the trap it is
/// (a host failure, not the guest's).
fn answer<V>(
    fs: &mut WasiFilesystemCtxView<'_>,
    result: FsResult<V>,
) -> wasmtime::Result<Result<V, ErrorCode>> {
    match result {
        Ok(value) => Ok(Ok(value)),
        Err(e) => Ok(Err(types::Host::convert_error_code(fs, e)?)),
    }
}

/// The target text of `path` under the folder `fd` when it is a symbolic link, which a hard
/// link to it would copy. Anything else, or a path that cannot be read, is left to wasmtime.
fn link_target(fs: &WasiFilesystemCtxView<'_>, fd: &Resource<Descriptor>, path: &str) -> Option<PathBuf> {
    let Ok(Descriptor::Dir(dir)) = fs.table.get(fd) else { return None };
    read_link_contents(&dir.dir, Path::new(path)).ok()
}

/// Whether `path` under the folder `fd` names something other than a regular file or a folder
/// (a FIFO, socket or device). A path that does not exist yet, or that cannot be looked at,
/// is left to wasmtime, which gives the proper error.
fn blocks_when_opened(
    fs: &WasiFilesystemCtxView<'_>,
    fd: &Resource<Descriptor>,
    path_flags: PathFlags,
    path: &str,
) -> bool {
    let Ok(Descriptor::Dir(dir)) = fs.table.get(fd) else { return false };
    let follow = path_flags.contains(PathFlags::SYMLINK_FOLLOW);
    if let Some(kind) = own_kind(&dir.dir, path) {
        match kind {
            FileType::RegularFile | FileType::Directory => return false,
            FileType::Symlink if follow => {}
            FileType::Symlink => return false,
            _ => return true,
        }
    }
    let follow = if follow { FollowSymlinks::Yes } else { FollowSymlinks::No };
    match stat(&dir.dir, Path::new(path), follow) {
        Ok(meta) => !(meta.is_file() || meta.is_dir() || meta.is_symlink()),
        Err(_) => false,
    }
}

/// The kind of `path` in `dir` itself, not following a link, when `path` is one plain name (no
/// `/`, not `.` or `..`): one `statx` where the sandboxed stat of cap-primitives takes three
/// (open beneath the folder, stat, close). A lookup of one name with no link followed cannot
/// leave the folder, so it needs no sandboxing. `None` for any other path or on any error:
/// the caller then asks cap-primitives.
fn own_kind(dir: &std::fs::File, path: &str) -> Option<FileType> {
    if path.is_empty() || path.contains('/') || path == "." || path == ".." {
        return None;
    }
    let stat = rustix::fs::statat(dir, path, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(FileType::from_raw_mode(stat.st_mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_name_is_looked_at_in_the_folder_itself_and_anything_else_is_left_to_cap_primitives() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("outside: {e}"));
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("file"), "x").unwrap_or_else(|e| panic!("file: {e}"));
        std::fs::create_dir(at("sub")).unwrap_or_else(|e| panic!("sub: {e}"));
        let pipe = outside.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &pipe,
            FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
        rustix::fs::mknodat(
            rustix::fs::CWD,
            at("pipe"),
            FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap_or_else(|e| panic!("mkfifo: {e}"));
        std::os::unix::fs::symlink(&pipe, at("out")).unwrap_or_else(|e| panic!("link: {e}"));
        let base = std::fs::File::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}"));

        assert_eq!(own_kind(&base, "file"), Some(FileType::RegularFile));
        assert_eq!(own_kind(&base, "sub"), Some(FileType::Directory));
        assert_eq!(own_kind(&base, "pipe"), Some(FileType::Fifo));
        assert_eq!(own_kind(&base, "out"), Some(FileType::Symlink), "a link is not followed, in or out");
        for other in ["", ".", "..", "sub/file", "../pipe", "/etc/passwd", "missing", "nul\0name"] {
            assert_eq!(own_kind(&base, other), None, "{other:?}");
        }
    }
}
