//! What Landlock does not cover, refused by a seccomp filter: debugging other processes
//! (`ptrace`, `process_vm_*`), new namespaces (`unshare`, `setns`, `clone` with a `CLONE_NEW*`
//! flag), mounts, the kernel keyring, BPF, perf events, io_uring (whose operations bypass
//! seccomp), `userfaultfd`, module and kexec loading, file handles (`open_by_handle_at`, the
//! classic way out of a container), and Unix sockets made by `socket(2)`: before Landlock's
//! `ResolveUnix` (ABI 9), a pathname socket such as `/run/docker.sock` or an SSH agent's is
//! reachable whatever the file rules say. `socketpair(2)`, which connects only to itself, stays.
//!
//! Every refusal is `EPERM`, which programs already handle as "not allowed here"; `clone3` is
//! `ENOSYS`, since its flags sit behind a pointer the filter cannot read, and libc then falls
//! back to `clone`, whose flags it can.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::error::SandboxError;

/// System calls refused outright.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_userfaultfd,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
];

/// Installs the filters on the calling thread; its children inherit them. `no_new_privs` is
/// already set (Landlock's restriction sets it), which an unprivileged filter needs.
pub fn install() -> Result<(), SandboxError> {
    for program in [refusals()?, clone3()?] {
        seccompiler::apply_filter(&program)
            .map_err(|e| SandboxError(format!("cannot install the seccomp filter: {e}")))?;
    }
    Ok(())
}

fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|_| SandboxError(format!("no seccomp filter for {} yet", std::env::consts::ARCH)))
}

/// `rules` compiled into one filter that answers `errno` to what they match, and lets the rest
/// through.
fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, SandboxError> {
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch()?)
        .map_err(|e| SandboxError(format!("the seccomp filter is malformed: {e}")))?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SandboxError(format!("the seccomp filter is malformed: {e}")))
}

fn refusals() -> Result<BpfProgram, SandboxError> {
    let bad = |e: seccompiler::BackendError| format!("the seccomp filter is malformed: {e}");
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = REFUSED.iter().map(|&n| (n, Vec::new())).collect();
    // `clone(flags, …)`: one rule per namespace flag (a rule matches when all its conditions do).
    let mut clone_rules = Vec::new();
    for flag in [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ] {
        let flag = flag as u64;
        let cond = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
            .map_err(bad)?;
        clone_rules.push(SeccompRule::new(vec![cond]).map_err(bad)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::AF_UNIX as u64)
        .map_err(bad)?;
    rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![unix]).map_err(bad)?]);
    compile(rules, libc::EPERM)
}

fn clone3() -> Result<BpfProgram, SandboxError> {
    compile(BTreeMap::from([(libc::SYS_clone3, Vec::new())]), libc::ENOSYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_filters_compile_for_this_machine() -> Result<(), String> {
        assert!(!refusals()?.is_empty());
        assert!(!clone3()?.is_empty());
        Ok(())
    }
}
