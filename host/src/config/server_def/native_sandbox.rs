//! TEMPORARY stub (replaced by the config branch's file on merge).
use crate::config::Grants;
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NativeLimits {
    pub memory_mb: u64,
    pub processes: u64,
    pub open_files: u64,
}
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NativeSandbox {
    pub grants: Grants,
    pub limits: NativeLimits,
    pub required: bool,
}
