//! Files, signals and abstract sockets under Landlock: the server may read (and execute)
//! beneath the read-only paths, do anything beneath the read-write ones, use the device files
//! it is given, and nothing else; it may not signal a process outside its own domain nor reach
//! an abstract Unix socket made outside it. Landlock allows only, so "all of `/etc` but its
//! secrets" is spelled as the entries of `/etc` that are not secrets (`paths.rs`).

use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};

use super::error::SandboxError;

/// The newest Landlock this build knows; an older kernel gets what it has (best effort), as
/// long as it enforces files at all.
const NEWEST: ABI = ABI::V10;

/// What the kernel enforced, for `toolport sandbox check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforced {
    /// Every requested right (files, scopes) is enforced.
    pub fully: bool,
    /// The Landlock ABI the kernel enforced (`0` when it did not say).
    pub abi: u32,
}

/// Restricts the calling thread (the launcher, before it starts the server: the server and
/// every child it makes inherit the domain). Fails unless the kernel enforces at least the file
/// rules: a server never starts with less than was asked, silently.
pub fn restrict(
    read_only: &[PathBuf],
    read_write: &[PathBuf],
    devices: &[PathBuf],
) -> Result<Enforced, SandboxError> {
    let read = AccessFs::from_read(NEWEST);
    let all = AccessFs::from_all(NEWEST);
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
    let status = Ruleset::default()
        // Files are the point: without them there is no sandbox.
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|r| r.set_compatibility(CompatLevel::BestEffort).handle_access(all))
        .and_then(|r| r.scope(Scope::from_all(NEWEST)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(read_only, read)))
        .and_then(|r| r.add_rules(path_beneath_rules(read_write, all)))
        .and_then(|r| r.add_rules(path_beneath_rules(devices, device)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| unavailable(&e.to_string()))?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, kernel_abi } => {
            kernel_abi.and_then(|v| u32::try_from(v).ok()).unwrap_or(effective_abi as u32)
        }
        _ => 0,
    };
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(unavailable("the kernel enforced no Landlock rule").into()),
        RulesetStatus::PartiallyEnforced => Ok(Enforced { fully: false, abi }),
        RulesetStatus::FullyEnforced => Ok(Enforced { fully: true, abi }),
    }
}

fn unavailable(why: &str) -> String {
    format!(
        "Landlock is not available ({why}): it needs Linux 5.13 or later with landlock in the lsm= list; {}",
        super::spec::UNCONFINED_HINT
    )
}
