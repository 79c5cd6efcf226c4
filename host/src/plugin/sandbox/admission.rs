//! How many plugin stores may be alive at once, and who may take the last of them.
//!
//! wasmtime's pooling allocator has process-wide pools (instances, memories, tables, stacks).
//! Left to themselves they go to whoever asks first: 333 idle connections of one transport
//! used up every core instance, and then the built-in tool shape that every server's tools go
//! through failed for an unrelated stdio server. So each store is admitted here first, against
//! three caps: a plugin's own ([`PLUGIN_STORES`]), all third-party plugins' together (all slots
//! but [`BUILTIN_RESERVE`]), and the pool's ([`STORE_SLOTS`]). The pool is sized (`engine`) so
//! that this many stores at their per-store caps always fit; the caps, not the pool, say no,
//! and they say it to the plugin that asked.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::plugin::error::Fault;

/// Stores alive at once in the whole process: the pool holds this many at their caps.
pub(crate) const STORE_SLOTS: u32 = 512;
/// Slots only built-in plugins may take: a server's tools always reach its shape.
pub(crate) const BUILTIN_RESERVE: u32 = 128;
/// Stores one third-party plugin may hold at once (its transport connections plus the calls
/// in flight): a quarter of the pool, so one plugin never starves another.
pub(crate) const PLUGIN_STORES: u32 = 128;

/// The process's pool, as admission sees it.
static POOL: Pool = Pool::new(STORE_SLOTS, BUILTIN_RESERVE, PLUGIN_STORES);

/// Live stores against the caps: one per process (tests make their own).
#[derive(Debug)]
pub(crate) struct Pool {
    /// Live stores of any plugin.
    live: AtomicU32,
    /// Live stores of third-party plugins.
    guest_live: AtomicU32,
    slots: u32,
    reserve: u32,
    per_plugin: u32,
}

impl Pool {
    const fn new(slots: u32, reserve: u32, per_plugin: u32) -> Self {
        Self { live: AtomicU32::new(0), guest_live: AtomicU32::new(0), slots, reserve, per_plugin }
    }
}

/// One plugin's share of the pool: its live stores, shared by every store it makes.
#[derive(Debug, Clone)]
pub(crate) struct Admission {
    pool: &'static Pool,
    live: Arc<AtomicU32>,
    builtin: bool,
}

impl Admission {
    /// The share of a plugin. Built-ins may use the reserve and have no cap of their own: how
    /// many stores they hold follows from how many servers the user configured, not from
    /// their code.
    pub fn new(builtin: bool) -> Self {
        Self::in_pool(&POOL, builtin)
    }

    fn in_pool(pool: &'static Pool, builtin: bool) -> Self {
        Self { pool, live: Arc::default(), builtin }
    }

    /// A ticket for one more store, or the fault naming the cap it would pass.
    pub fn admit(&self) -> Result<Ticket, Fault> {
        let pool = self.pool;
        let guest = !self.builtin;
        let caps: [(&AtomicU32, u32, &'static str, bool); 3] = [
            (&self.live, pool.per_plugin, "its instance limit", guest),
            (&pool.guest_live, pool.slots - pool.reserve, "the host's instance limit for plugins", guest),
            (&pool.live, pool.slots, "the host's instance limit", true),
        ];
        let mut taken: Vec<&AtomicU32> = Vec::with_capacity(caps.len());
        for (counter, limit, what, applies) in caps {
            if !applies {
                continue;
            }
            if !take(counter, limit) {
                taken.into_iter().for_each(release);
                return Err(Fault::InstanceLimit { what, limit });
            }
            taken.push(counter);
        }
        Ok(Ticket { admission: self.clone() })
    }
}

/// A store's place in the pool, given back when the store (which owns it) drops.
#[derive(Debug)]
pub(crate) struct Ticket {
    admission: Admission,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let a = &self.admission;
        if !a.builtin {
            release(&a.live);
            release(&a.pool.guest_live);
        }
        release(&a.pool.live);
    }
}

/// Adds one to `counter` unless it is at `limit`.
fn take(counter: &AtomicU32, limit: u32) -> bool {
    counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit).then_some(n + 1)).is_ok()
}

fn release(counter: &AtomicU32) {
    counter.fetch_sub(1, Ordering::AcqRel);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> &'static Pool {
        Box::leak(Box::new(Pool::new(8, 2, 4)))
    }

    #[test]
    fn a_plugin_stops_at_its_own_cap_and_gives_back_what_it_took() {
        let pool = pool();
        let guest = Admission::in_pool(pool, false);
        let tickets: Vec<Ticket> = (0..4).map(|_| guest.admit().unwrap_or_else(|e| panic!("{e}"))).collect();
        let refused = guest.admit().err().map(|f| f.to_string());
        assert_eq!(refused.as_deref(), Some("reached its instance limit (4 live instances)"));
        // Another plugin is not affected by the first one's cap.
        assert!(Admission::in_pool(pool, false).admit().is_ok());
        drop(tickets);
        assert!(guest.admit().is_ok());
        assert_eq!(guest.live.load(Ordering::Acquire), 0, "the ticket of the last admit dropped too");
        assert_eq!(pool.live.load(Ordering::Acquire), 0);
    }

    #[test]
    fn guests_together_leave_the_reserve_to_the_builtins() {
        let pool = pool();
        let guests: Vec<Admission> = (0..3).map(|_| Admission::in_pool(pool, false)).collect();
        let held: Vec<Ticket> = guests.iter().flat_map(|g| [g.admit(), g.admit()]).flatten().collect();
        assert_eq!(held.len(), 6, "6 of 8 slots go to plugins");
        let refused = guests[2].admit().err().map(|f| f.to_string());
        assert_eq!(
            refused.as_deref(),
            Some("reached the host's instance limit for plugins (6 live instances)")
        );
        // The plugin's own count was given back when the shared cap said no.
        assert_eq!(guests[2].live.load(Ordering::Acquire), 2);
        let builtin = Admission::in_pool(pool, true);
        let reserved: Vec<Ticket> = [builtin.admit(), builtin.admit()].into_iter().flatten().collect();
        assert_eq!(reserved.len(), 2, "the reserve is the built-ins'");
        let full = builtin.admit().err().map(|f| f.to_string());
        assert_eq!(full.as_deref(), Some("reached the host's instance limit (8 live instances)"));
    }
}
