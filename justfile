# Thin wrappers over cargo; every recipe works without just (see the README).

# Build the host (its build.rs builds and embeds the plugins).
build:
    cargo build --workspace --all-targets

# The README's test command.
test:
    cargo test --workspace

# Format and lint gates, as CI runs them.
lint:
    cargo fmt --all --check
    cargo fmt --all --check --manifest-path plugins/Cargo.toml
    cargo clippy --workspace --all-targets -- -D warnings

# Criterion benchmarks (release build).
bench:
    cargo bench --workspace

# The built-in tour.
demo:
    cargo run --release -- demo

# Build every guest crate for wasm32-wasip2 into target/plugins/wasm32-wasip2/release/.
plugins:
    rustup target add wasm32-wasip2
    cargo build --release --target wasm32-wasip2 --manifest-path plugins/Cargo.toml --target-dir target/plugins

# Build one guest crate, e.g. `just plugin transport-tcp`.
plugin NAME:
    rustup target add wasm32-wasip2
    cargo build --release --target wasm32-wasip2 --manifest-path plugins/Cargo.toml --target-dir target/plugins -p {{NAME}}

# Everything CI runs.
ci:
    bash .ci/run
