//! Whether a guest's file-system calls may run on the thread that runs the guest.
//!
//! wasmtime-wasi runs every file-system call of a guest (a stat, an open, a read, a directory
//! listing) on tokio's blocking pool unless the context allows blocking the current thread:
//! a hand-off to another thread and back per call, which for a guest walking a folder is most
//! of its time (BENCHMARKS.md, "Sandboxed servers": ~18 host calls per file searched, each
//! with its futex wake-ups). Run on the thread instead, a call blocks the runtime worker that
//! polls the guest while it runs: microseconds on a local disk or in memory, but a network
//! file system can take seconds or, with its server gone, hang (an NFS hard mount retries for
//! ever). A worker stuck there stalls every other task queued on it, and neither the guest's
//! time limit nor its stop can interrupt a call that is not a future any more. So blocking is
//! allowed only when every granted folder, and every mount below one, is a file system known
//! to be local ([`LOCAL_TYPES`]); anything else or unknown keeps the blocking pool. Mounts
//! made below a folder after the store was built are not seen (the check runs per store).

use std::path::{Path, PathBuf};

/// File-system types (as `/proc/self/mountinfo` names them) whose calls finish in the time of
/// a local disk or memory. FUSE (`fuse`, `fuseblk`: a user-space daemon answers), network file
/// systems (`nfs`, `cifs`, `smb3`, `9p`, `ceph`, …), `autofs` (a lookup may mount a network
/// share) and kernel pseudo-files (`proc`, `sysfs`: a read may wait on a driver) are left out
/// on purpose, and so is every type not listed.
const LOCAL_TYPES: &[&str] = &[
    "ext2", "ext3", "ext4", "xfs", "btrfs", "bcachefs", "zfs", "f2fs", "jfs", "reiserfs", "nilfs2", "tmpfs",
    "ramfs", "overlay", "squashfs", "erofs", "iso9660", "udf", "vfat", "msdos", "exfat", "ntfs3", "hfsplus",
];

/// Whether every folder in `dirs` (host paths) lies on a local file system, with nothing but
/// local file systems mounted below it. No folders, an unreadable mount table (not Linux) or a
/// folder that cannot be resolved: no.
pub(crate) fn all_local<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> bool {
    let dirs: Option<Vec<PathBuf>> = dirs.into_iter().map(|d| std::fs::canonicalize(d).ok()).collect();
    let Some(dirs) = dirs.filter(|d| !d.is_empty()) else { return false };
    match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(table) => local_in(&parse_mounts(&table), &dirs),
        Err(error) => {
            tracing::debug!(%error, "no mount table: a sandbox's file-system calls stay on the blocking pool");
            false
        }
    }
}

/// One line of the mount table: where it is mounted and its file-system type.
#[derive(Debug, PartialEq)]
struct Mount {
    point: PathBuf,
    fs_type: String,
}

/// The mounts of a `/proc/PID/mountinfo` text, in its order (a later mount on the same point
/// hides an earlier one). Lines that do not parse are skipped: a mount missing from the list
/// can only make a folder's own mount look like a parent's, whose type is then checked.
fn parse_mounts(table: &str) -> Vec<Mount> {
    table
        .lines()
        .filter_map(|line| {
            let (before, after) = line.split_once(" - ")?;
            let point = before.split(' ').nth(4)?;
            let fs_type = after.split(' ').next()?;
            Some(Mount { point: PathBuf::from(unescape(point)), fs_type: fs_type.to_string() })
        })
        .collect()
}

/// The kernel writes a space, tab, newline and backslash in a mount point as `\040`, `\011`,
/// `\012` and `\134`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The decision on a parsed table: each folder's own mount (the last one listed on the longest
/// mount point above or at it) and every mount strictly below it must be of a local type.
fn local_in(mounts: &[Mount], dirs: &[PathBuf]) -> bool {
    let local = |m: &Mount| LOCAL_TYPES.contains(&m.fs_type.as_str());
    dirs.iter().all(|dir| {
        let own = mounts
            .iter()
            .enumerate()
            .filter(|(_, m)| dir.starts_with(&m.point))
            .max_by_key(|(i, m)| (m.point.components().count(), *i))
            .map(|(_, m)| m);
        own.is_some_and(local)
            && mounts.iter().filter(|m| m.point.starts_with(dir) && m.point != *dir).all(local)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw,nosuid shared:5 - proc proc rw
24 22 0:22 / /tmp rw shared:6 - tmpfs tmpfs rw
25 22 0:40 / /home/me/share rw shared:7 - nfs4 server:/export rw,vers=4.2
26 22 0:41 / /home/me/my\\040files rw shared:8 - fuse.sshfs me@host:/ rw
27 24 0:42 / /tmp/nfs rw - cifs //server/share rw
28 22 8:2 / /data rw - xfs /dev/sda2 rw
29 28 0:43 / /data rw - nfs server:/data rw
30 22 8:3 / /srv rw - nfs server:/srv rw
31 30 8:4 / /srv rw - btrfs /dev/sdb rw
";

    fn local(dirs: &[&str]) -> bool {
        let dirs: Vec<PathBuf> = dirs.iter().map(PathBuf::from).collect();
        local_in(&parse_mounts(TABLE), &dirs)
    }

    #[test]
    fn a_folder_on_a_local_disk_or_in_memory_blocks_on_the_thread() {
        assert!(local(&["/home/me/src"]));
        assert!(local(&["/tmp/x", "/var"]));
        assert!(local(&["/tmp/nfsx"]), "a sibling named like a mount is not below it");
    }

    #[test]
    fn a_network_or_fuse_folder_or_one_with_such_a_mount_below_keeps_the_pool() {
        assert!(!local(&["/home/me/share/docs"]), "on NFS");
        assert!(!local(&["/home/me/my files"]), "on FUSE (escaped mount point)");
        assert!(!local(&["/home/me"]), "NFS and FUSE mounted below");
        assert!(!local(&["/tmp"]), "CIFS mounted below");
        assert!(!local(&["/"]), "proc below");
        assert!(!local(&["/home/me/src", "/home/me/share"]), "one remote folder of two");
    }

    #[test]
    fn the_last_mount_on_a_point_is_the_one_seen() {
        assert!(!local(&["/data/x"]), "NFS mounted over the xfs one");
        assert!(local(&["/srv/x"]), "btrfs mounted over the NFS one");
    }

    #[test]
    fn no_folders_or_no_mount_table_keeps_the_pool() {
        assert!(!all_local(std::iter::empty::<&Path>()));
        assert!(!all_local([Path::new("/no/such/folder/anywhere")]));
        assert!(!local_in(&[], &[PathBuf::from("/x")]));
    }

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape("/a\\040b\\011c\\134d"), "/a b\tc\\d");
        assert_eq!(unescape("/plain\\x"), "/plain\\x");
    }
}
