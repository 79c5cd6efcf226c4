//! `toolport scan` (issue 28 item 2): the definition checks against a poisoned fixture server
//! of our own (`tests/trust/poisoned_server.py`) and against clean real servers, and its SARIF
//! against the published SARIF 2.1.0 schema; the workspace's `confirm` (item 3): a call asked
//! about before it is sent, against a fixture that logs what reaches it
//! (`tests/trust/confirm_server.py`); `secrets`: secrets kept out of calls (item 4).

pub mod confirm;
mod pins;
mod scan;
mod secrets;
