//! OAuth sign-in to a remote MCP server against a real authorization server: `mcp login` on a
//! terminal and with a browser, the machine-to-machine grant, and sign-in inside `session`.

mod login;
mod machine;
mod session;
