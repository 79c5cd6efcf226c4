//! Other agents' config files: `install --client` and `mcp import --from` for every client and
//! scope.

mod install;
mod quick_start;
