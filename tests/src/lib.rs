//! Black-box tests live in `it/`.
