//! The sealed session ids (`sealed_sessions.rs`) this replica saw ended by a `DELETE`, kept
//! until each would have expired anyway. A sealed id carries everything needed to take its
//! session up again, so without this a deleted session came back on the next request (rmcp
//! restored it from the id), though the transport spec says an ended session is 404. Nothing
//! is shared: another replica does not know of the `DELETE` and serves the id until it expires
//! (`docs/src/serve/team.md` "Replicas"). At most [`Ended::LIMIT`] ids are kept; past that, the one
//! that expires soonest is forgotten first (and serves again on this replica until its expiry).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// rmcp's ids of the sessions ended here, each with its expiry (Unix seconds).
#[derive(Default)]
pub struct Ended {
    ids: Mutex<HashMap<String, u64>>,
}

impl Ended {
    /// The most ids kept (about 100 bytes each).
    pub const LIMIT: usize = 100_000;

    fn ids(&self) -> MutexGuard<'_, HashMap<String, u64>> {
        self.ids.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `id`, whose sealed form expires at `expires`, has ended (`now`: Unix seconds).
    pub fn end(&self, id: &str, expires: u64, now: u64) {
        let mut ids = self.ids();
        if ids.len() >= Self::LIMIT && !ids.contains_key(id) {
            ids.retain(|_, until| *until > now);
        }
        if ids.len() >= Self::LIMIT && !ids.contains_key(id) {
            let soonest = ids.iter().min_by_key(|(_, until)| **until).map(|(id, _)| id.clone());
            if let Some(soonest) = soonest {
                tracing::warn!(
                    "{} ended sessions remembered: the one expiring soonest is forgotten",
                    Self::LIMIT
                );
                ids.remove(&soonest);
            }
        }
        ids.insert(id.to_string(), expires);
    }

    /// Whether `id` was ended here.
    pub fn has_ended(&self, id: &str) -> bool {
        self.ids().contains_key(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_id_is_remembered_and_the_soonest_to_expire_goes_first_when_full() {
        let ended = Ended::default();
        assert!(!ended.has_ended("a"));
        ended.end("a", 100, 10);
        assert!(ended.has_ended("a"));
        for n in 1..Ended::LIMIT {
            ended.end(&n.to_string(), 1_000 + n as u64, 10);
        }
        ended.end("b", 5_000_000, 10);
        assert!(!ended.has_ended("a"), "the soonest to expire stays");
        assert!(ended.has_ended("b") && ended.has_ended("1"));
        // Once the clock passed some expiries, those go rather than live ones.
        ended.end("c", 5_000_000, 1_010);
        assert!(!ended.has_ended("1") && !ended.has_ended("9"), "expired ids stay");
        assert!(ended.has_ended("b") && ended.has_ended("c") && ended.has_ended("11"));
    }
}
