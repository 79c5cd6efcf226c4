//! `toolport acp`: the agent driven by raw JSON-RPC lines and by the official ACP SDK, and
//! what one client can make it hold.

mod agent;
mod limits;
