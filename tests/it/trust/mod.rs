//! `toolport scan` (issue 28 item 2): the definition checks against a poisoned fixture server
//! of our own (`tests/trust/poisoned_server.py`) and against clean real servers, and its SARIF
//! against the published SARIF 2.1.0 schema; the workspace's `confirm` (item 3): a call asked
//! about before it is sent, against a fixture that logs what reaches it
//! (`tests/trust/confirm_server.py`); `secrets`: secrets kept out of calls (item 4);
//! `secret_places`: out of every other place a server answers with, and of the audit log
//! (issue 44 item 9, `tests/trust/leaky_server.py`). The pins (`pins.rs`), their coverage of
//! every forwarded field and of look-alike names (`pins_fields.rs`), and a lock that cannot be
//! written (`pins_unwritable.rs`).

pub mod confirm;
mod pins;
mod pins_fields;
mod pins_unwritable;
mod scan;
mod secret_places;
mod secrets;
