//! From a component's bytes to something to instantiate: the engine and its configuration,
//! the compiled-code cache and when it is trusted, reading a component's interface
//! (`inspect`), and loading it with its sandbox (`load`).

pub(super) mod cache;
pub(super) mod cache_trust;
pub(super) mod engine;
pub(super) mod inspect;
pub(super) mod load;
