//! The host's `open-at`: wasmtime's own, refusing anything under a granted folder that is not
//! a regular file, a folder or a symlink to one.
//!
//! wasmtime opens a file on a blocking thread. Opening a FIFO for reading blocks until some
//! writer comes, and a terminal or device can block a read forever: the plugin's time limit
//! then ends the call, but not the thread, which stays stuck in `open` (each `/mcp retry` left
//! one more, and the process could not exit). A stat does not block on such files, so the
//! path is looked at first (sandboxed to the folder, as wasmtime resolves it) and refused as
//! `access`, the error a granted folder's permissions give. A FIFO made between the look and
//! the open could slip through; WASI has no call that makes one, so only another program of
//! the host's user could, in a folder granted to a guest.

use std::path::Path;

use cap_primitives::fs::{FollowSymlinks, stat};
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, DescriptorFlags, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
};

/// The interface wasmtime defines `open-at` in, by the name its linker uses (guests importing
/// any 0.2 version are matched to it).
const INTERFACE: &str = "wasi:filesystem/types@0.2.12";

/// Replaces wasmtime's `[method]descriptor.open-at`. Call it after
/// `wasmtime_wasi::p2::add_to_linker_*` with shadowing allowed.
pub(crate) fn add_to_linker<T: WasiView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    type Params = (Resource<Descriptor>, PathFlags, String, OpenFlags, DescriptorFlags);
    linker.instance(INTERFACE)?.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store, (fd, path_flags, path, oflags, flags): Params| {
            Box::new(async move {
                let mut fs = store.data_mut().filesystem();
                if blocks_when_opened(&fs, &fd, path_flags, &path) {
                    tracing::warn!(path = %path.escape_debug(), "refused to open a file that is not a regular file or folder");
                    return Ok((Err(ErrorCode::Access),));
                }
                let opened = match HostDescriptor::open_at(&mut fs, fd, path_flags, path, oflags, flags).await {
                    Ok(fd) => Ok(fd),
                    Err(e) => Err(types::Host::convert_error_code(&mut fs, e)?),
                };
                Ok((opened,))
            })
        },
    )
}

/// Whether `path` under the folder `fd` names something other than a regular file or a folder
/// (a FIFO, socket or device). A path that does not exist yet, or that cannot be looked at,
/// is left to wasmtime, which gives the proper error.
fn blocks_when_opened(
    fs: &wasmtime_wasi::filesystem::WasiFilesystemCtxView<'_>,
    fd: &Resource<Descriptor>,
    path_flags: PathFlags,
    path: &str,
) -> bool {
    let Ok(Descriptor::Dir(dir)) = fs.table.get(fd) else { return false };
    let follow =
        if path_flags.contains(PathFlags::SYMLINK_FOLLOW) { FollowSymlinks::Yes } else { FollowSymlinks::No };
    match stat(&dir.dir, Path::new(path), follow) {
        Ok(meta) => !(meta.is_file() || meta.is_dir() || meta.is_symlink()),
        Err(_) => false,
    }
}
