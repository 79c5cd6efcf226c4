//! `toolport scan` (issue 28 item 2): the definition checks against a poisoned fixture server
//! of our own (`tests/trust/poisoned_server.py`) and against clean real servers, and its SARIF
//! against the published SARIF 2.1.0 schema.

mod pins;
mod scan;
