//! The transport plugin's message plumbing: bounded queues between host and guest, the
//! mailbox a guest reads, and the channel resource it writes.

pub(super) mod channel;
pub(super) mod mailbox;
pub(super) mod queue;
