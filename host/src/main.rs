//! The `toolport` binary: the command line, the built-in tour and the built-in demo server.
//! All three are clients of the library (`lib.rs`); nothing here is part of its API.

mod cli;
mod demo;
mod demo_server;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
