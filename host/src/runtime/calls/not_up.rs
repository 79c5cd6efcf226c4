//! Why a name is on no route while servers are not up. The tool's own server, when something
//! says which one it is: its pins in `.toolport/tools.lock`, its name written out in the
//! server's `tools.include`, or a host's [`ToolOwners`] (a listing kept from an earlier run);
//! else every server that is not up. Each with its state: connecting, in error with the
//! reason, or paused with the command that resumes it. A tool of a server that died in this
//! process is told apart before this (`state::Gone`).
//!
//! Names are matched as the server lists them: under a `namePolicy` that renames tools, a
//! pin or an `include` names the server's own tool, not the final name, and the message
//! falls back to every server that is not up.

use crate::runtime::results::outcome::{CallError, NotUp, NotUpState};
use crate::runtime::state::{CONNECTING, Slot};
use crate::runtime::supervisor::Supervisor;
use crate::status::ServerState;

/// [`CallError::UnknownWhileDown`] for `name` when an active server is not up (none is:
/// `None`, the plain unknown tool). The owners are looked up only then, without the state lock
/// held (the pins are a file).
pub(super) fn explain(supervisor: &Supervisor, name: &str) -> Option<CallError> {
    if !supervisor.lock().slots.iter().any(|slot| not_up(slot).is_some()) {
        return None;
    }
    let mut known = supervisor.pinned_owners(name);
    if let Some(source) = &supervisor.options.tool_owners {
        known.extend(source.owners_of(name));
    }
    let state = supervisor.lock();
    let down: Vec<(&Slot, NotUp)> =
        state.slots.iter().filter_map(|slot| Some((slot, not_up(slot)?))).collect();
    if down.is_empty() {
        return None;
    }
    let owns = |slot: &Slot| {
        let filter = &slot.resolved.def.tools;
        let named =
            known.iter().any(|server| server == slot.name()) || filter.include().iter().any(|g| g == name);
        named && filter.allows(name)
    };
    let owned: Vec<NotUp> = down.iter().filter(|(slot, _)| owns(slot)).map(|(_, d)| d.clone()).collect();
    let (owner, servers) = match owned.is_empty() {
        false => (true, owned),
        true => (false, down.into_iter().map(|(_, d)| d).collect()),
    };
    Some(CallError::UnknownWhileDown { name: name.to_string(), owner, servers })
}

/// `slot`'s server when it is active in the workspace but not up: paused in this session,
/// connecting, or in `error`. A disabled server is not counted (the workspace does not use it).
fn not_up(slot: &Slot) -> Option<NotUp> {
    let row = slot.status();
    let state = match row.state {
        ServerState::Paused => NotUpState::Paused,
        ServerState::Error => match row.error {
            Some(reason) if reason != CONNECTING => NotUpState::Error(reason),
            _ => NotUpState::Connecting,
        },
        _ => return None,
    };
    Some(NotUp { server: row.name, state })
}
