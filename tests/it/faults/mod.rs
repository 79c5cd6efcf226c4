//! The fault suite: misbehaving servers, clients, processes, sign-ins and project files next
//! to healthy neighbours that must keep answering; `guests/` holds the misbehaving plugins and
//! sandboxed servers.

mod browser;
mod clients;
mod foreign_text;
mod guests;
mod import;
mod jwt_bearer;
mod not_up;
pub(crate) mod processes;
mod results;
mod secrets_in_logs;
mod serve_http;
mod servers;
mod sign_in;
mod stdout_noise;
