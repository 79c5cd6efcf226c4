//! [`Runtime`], the handle every entry point holds: a clone of the supervisor's `Arc`. In a
//! leaf of its own so the files of the front door (`mod.rs`: the start, calls and changes;
//! `views.rs`: what the runtime shows) each implement on it and none imports another.

use std::sync::Arc;

use super::supervisor::Supervisor;

/// The live runtime. Cheap to clone; every clone is the same runtime.
#[derive(Clone)]
pub struct Runtime {
    pub(super) supervisor: Arc<Supervisor>,
}
