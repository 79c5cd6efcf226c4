//! OAuth sign-in to a remote MCP server against a real authorization server: `mcp login` on a
//! terminal and with a browser, the machine-to-machine grant, sign-in inside `session`, and
//! when a stored token is sent as is or refreshed.

mod login;
mod machine;
mod session;
mod stored_token;
