//! What servers ask while they work: elicitation and sampling answered for the client whose
//! call it is (`related`), roots, log messages, and the clock that stops while a person
//! answers.

pub(super) mod confirmation;
pub(super) mod elicitation;
pub(super) mod elicitation_wire;
pub(super) mod person_clock;
pub(super) mod related;
pub(super) mod sampling;
pub(super) mod server_log;
pub(super) mod server_requests;
