//! Generated host bindings, one module per world, kept private to the plugin host. The shared
//! `types` and `log` interfaces are generated once (with the name-policy world) and reused by
//! the others through `with:`, so there is one `Tool`, one `Server` and one log `Host` trait.

pub(crate) mod policy {
    wasmtime::component::bindgen!({
        world: "name-policy",
        path: "../wit/since_v0.1.0",
        exports: { default: async },
    });
}

pub(crate) mod shape {
    wasmtime::component::bindgen!({
        world: "tool-shape",
        path: "../wit/since_v0.1.0",
        exports: { default: async },
        with: {
            "toolport:plugin/types": super::policy::toolport::plugin::types,
            "toolport:plugin/log": super::policy::toolport::plugin::log,
        },
    });
}

pub(crate) mod transport {
    wasmtime::component::bindgen!({
        world: "transport",
        path: "../wit/since_v0.1.0",
        // `send` waits while the connection's queue is full (backpressure, `queue`).
        imports: {
            "toolport:plugin/channel.[method]outbox.send": async | trappable,
            "toolport:plugin/channel": trappable,
        },
        exports: { default: async },
        with: {
            "toolport:plugin/types": super::policy::toolport::plugin::types,
            "toolport:plugin/log": super::policy::toolport::plugin::log,
            "wasi:io/poll": wasmtime_wasi::p2::bindings::io::poll,
            "toolport:plugin/channel.inbox": crate::plugin::messages::mailbox::Inbox,
            "toolport:plugin/channel.outbox": crate::plugin::messages::mailbox::Outbox,
        },
    });
}

pub(crate) mod guard {
    wasmtime::component::bindgen!({
        world: "guard",
        path: "../wit/since_v0.1.0",
        exports: { default: async },
        with: {
                        "toolport:plugin/log": super::policy::toolport::plugin::log,
        },
    });
}

pub(crate) use policy::toolport::plugin::log::Level;
pub(crate) use policy::toolport::plugin::types::{Server, Tool, Verdict};
