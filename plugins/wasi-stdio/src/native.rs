//! [`run`] and [`stdio`] for a native build: tokio's own runtime and stdio.

use std::future::Future;
use std::io;

/// tokio's stdin and stdout, for rmcp's `(read, write)` transport.
pub fn stdio() -> (tokio::io::Stdin, tokio::io::Stdout) {
    (tokio::io::stdin(), tokio::io::stdout())
}

/// Runs `main` to completion on a current-thread runtime.
pub fn run<F: Future>(main: F) -> io::Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    let output = runtime.block_on(main);
    // tokio's stdin reads on a blocking thread that may still be inside `read`: don't wait for it.
    runtime.shutdown_background();
    Ok(output)
}
