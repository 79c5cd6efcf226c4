//! What a sandboxed server may read with nothing granted: the system's programs and libraries,
//! `/etc` without the files that hold secrets, `/proc` (another process's private files stay
//! shut: Landlock refuses what `ptrace` would be refused) and the folders its command and
//! interpreter were installed in. Pure apart from reading `/etc`'s entries, a script's first
//! line and where `PATH` finds a program.

use std::path::{Path, PathBuf};

/// Folders of programs and libraries, read-only when they exist.
const SYSTEM: [&str; 8] = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"];
/// What runtimes read of `/sys` (CPU count and cgroup limits); nothing there is a secret.
const SYS: [&str; 2] = ["/sys/fs/cgroup", "/sys/devices/system/cpu"];
/// Entries of `/etc` that hold secrets (password hashes, host keys, private keys, Kerberos
/// keys, sudo rules): everything else in `/etc` is readable.
const ETC_SECRETS: [&str; 12] = [
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "ssh",
    "ssl",
    "sudoers",
    "sudoers.d",
    "krb5.keytab",
    "security",
    "credstore",
    "credstore.encrypted",
];
/// What of `/etc/ssl` stays readable: the certificates, never `private/`.
const ETC_SSL_PUBLIC: [&str; 3] = ["/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ssl/cert.pem"];
/// Device files every program may use. Not `/dev/tty`: that is toolport's terminal, where a
/// server could type into the person's shell (`TIOCSTI`) or read what they type.
pub const DEVICES: [&str; 5] = ["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];
/// Interpreters whose first non-option argument is the program that runs: its install folder
/// is readable too.
const INTERPRETERS: [&str; 6] = ["node", "nodejs", "python", "python3", "bun", "deno"];

/// The read-only paths of a server started as `program` (absolute) with `args`.
pub fn read_only(program: &Path, args: &[String], path_var: Option<&str>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = SYSTEM.iter().chain(SYS.iter()).map(PathBuf::from).collect();
    out.push(PathBuf::from("/proc"));
    out.extend(etc_entries());
    out.extend(install_roots(program));
    if let Some(interpreter) = interpreter_of(program, path_var) {
        out.extend(install_roots(&interpreter));
    }
    let named = program.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let interpreter = INTERPRETERS.iter().any(|i| named == *i || named.starts_with(&format!("{i}.")));
    if interpreter
        && let Some(script) = args.iter().find(|a| !a.starts_with('-')).map(Path::new).filter(|p| p.is_file())
    {
        out.extend(install_roots(script));
    }
    out.sort();
    out.dedup();
    out
}

/// `/etc`'s entries but its secrets, and of `/etc/ssl` only the certificates.
fn etc_entries() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/etc") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !ETC_SECRETS.iter().any(|s| e.file_name() == *s))
        .map(|e| e.path())
        .collect();
    out.extend(ETC_SSL_PUBLIC.iter().map(PathBuf::from).filter(|p| p.exists()));
    out
}

/// Where a program was installed, as found and after its links: a `bin` folder's parent (a
/// prefix, a virtual environment), the outermost `node_modules` (a package and its
/// dependencies), else the program's own folder.
pub fn install_roots(program: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in [Some(program.to_path_buf()), program.canonicalize().ok()].into_iter().flatten() {
        if let Some(root) = install_root(&path) {
            out.push(root);
        }
    }
    out
}

fn install_root(path: &Path) -> Option<PathBuf> {
    if let Some(modules) =
        path.ancestors().filter(|a| a.file_name().is_some_and(|n| n == "node_modules")).last()
    {
        return Some(modules.to_path_buf());
    }
    let folder = path.parent()?;
    if folder.file_name().is_some_and(|n| n == "bin" || n == ".bin") {
        let prefix = folder.parent()?;
        // `/usr/bin`'s prefix is a system folder already; `/bin`'s would be `/`.
        return (prefix != Path::new("/")).then(|| prefix.to_path_buf());
    }
    Some(folder.to_path_buf())
}

/// The interpreter a script's `#!` line names (`#!/usr/bin/env node` found on `PATH`).
fn interpreter_of(program: &Path, path_var: Option<&str>) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let read = std::fs::File::open(program).and_then(|mut f| f.read(&mut head)).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = String::from_utf8_lossy(line.split(|b| *b == b'\n').next()?).into_owned();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    if first.ends_with("/env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        return find_on_path(name, path_var);
    }
    Some(PathBuf::from(first))
}

/// `name` as `PATH` finds it (an absolute or relative path is taken as it is).
pub fn find_on_path(name: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    std::env::split_paths(path_var?).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_root_is_a_prefix_a_package_tree_or_the_folder() {
        let root = |p: &str| install_root(Path::new(p)).map(|r| r.display().to_string());
        assert_eq!(root("/usr/bin/python3").as_deref(), Some("/usr"));
        assert_eq!(root("/bin/sh"), None);
        assert_eq!(root("/home/me/.venv/bin/mcp-server-git").as_deref(), Some("/home/me/.venv"));
        assert_eq!(
            root("/srv/app/node_modules/a/node_modules/b/dist/index.js").as_deref(),
            Some("/srv/app/node_modules")
        );
        assert_eq!(root("/srv/app/node_modules/.bin/x").as_deref(), Some("/srv/app/node_modules"));
        assert_eq!(root("/opt/tools/server").as_deref(), Some("/opt/tools"));
    }

    #[test]
    fn etc_keeps_no_secret() {
        let etc = etc_entries();
        for secret in ["/etc/shadow", "/etc/ssh", "/etc/ssl", "/etc/sudoers"] {
            assert!(!etc.contains(&PathBuf::from(secret)), "{secret}");
        }
        assert!(etc.contains(&PathBuf::from("/etc/passwd")));
    }
}
