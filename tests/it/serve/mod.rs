//! `toolport serve` in front of real servers, seen by real clients over stdio and HTTP: the
//! surface it shows (eager and lazy), its HTTP gate, hung servers, signals, and the official
//! conformance suite's server scenarios.

pub(crate) mod clients;
mod conformance;
mod first_contact;
mod front;
mod http;
mod hung;
mod lazy_surface;
mod sdk_server;
mod signals;
