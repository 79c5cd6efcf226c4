//! Other agents' config files: `install --client` and `mcp import --from` for every client and
//! scope; and Codex itself in front of `toolport serve`.

mod codex;
mod install;
mod quick_start;
