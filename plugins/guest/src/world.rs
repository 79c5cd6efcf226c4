//! The bindings of the one world this build's feature names, generated with a public `export!`
//! that reaches them as `toolport_guest::world::…` from the plugin crate, and the short names
//! re-exported at the crate root.

#[cfg(feature = "name-policy")]
wit_bindgen::generate!({
    world: "name-policy",
    path: "wit/since_v0.1.0",
    pub_export_macro: true,
    default_bindings_module: "toolport_guest::world",
});

#[cfg(feature = "tool-shape")]
wit_bindgen::generate!({
    world: "tool-shape",
    path: "wit/since_v0.1.0",
    pub_export_macro: true,
    default_bindings_module: "toolport_guest::world",
});

#[cfg(feature = "transport")]
wit_bindgen::generate!({
    world: "transport",
    path: "wit/since_v0.1.0",
    pub_export_macro: true,
    default_bindings_module: "toolport_guest::world",
    // wasip2's pollable is the contract's, so inbox and socket pollables go in one `poll`.
    with: { "wasi:io/poll@0.2.12": wasip2::io::poll },
});

#[cfg(feature = "guard")]
wit_bindgen::generate!({
    world: "guard",
    path: "wit/since_v0.1.0",
    pub_export_macro: true,
    default_bindings_module: "toolport_guest::world",
});

#[cfg(not(feature = "guard"))]
use {crate::json::parse_json, serde_json::Value};
#[doc(hidden)]
pub use crate::log::write as __log_write;
pub use toolport::plugin::log::Level;
/// What every kind but the guard is shown (a guard sees requests, not tool lists).
#[cfg(not(feature = "guard"))]
pub use toolport::plugin::types::{Server, Tool};

/// Name policy: implement [`PolicyGuest`]`::review`, one [`Verdict`] per tool in order.
#[cfg(feature = "name-policy")]
pub use {exports::toolport::plugin::policy::Guest as PolicyGuest, toolport::plugin::types::Verdict};

/// Tool shape: implement [`ShapeGuest`]`::convert`, one JSON object (text) per tool in order.
#[cfg(feature = "tool-shape")]
pub use exports::toolport::plugin::shape::Guest as ShapeGuest;

/// Transport: implement [`TransportGuest`]`::run`, the connection's one pump over the host's
/// [`Inbox`] and [`Outbox`]; sockets, streams and `poll` come from [`wasip2`].
#[cfg(feature = "transport")]
pub use {
    exports::toolport::plugin::connection::Guest as TransportGuest,
    toolport::plugin::channel::{Inbox, Outbox, Received},
    wasip2,
};

/// Guard: implement [`GuardGuest`]`::on_request` and `::on_response`; each answers one
/// [`Decision`] about the request its [`Context`] describes (what [`RequestKind`], to which
/// server, for which tool, prompt or URI).
#[cfg(feature = "guard")]
pub use exports::toolport::plugin::hooks::{Context, Decision, Guest as GuardGuest, RequestKind};

#[cfg(not(feature = "guard"))]
/// The tool's `inputSchema` (always an object; `{}` when the server sent none).
pub fn input_schema(tool: &Tool) -> Result<Value, String> {
    parse_json(&format!("tool {}: input-schema", tool.name), &tool.input_schema)
}

#[cfg(not(feature = "guard"))]
/// The tool's `outputSchema`, when the server sent one.
pub fn output_schema(tool: &Tool) -> Result<Option<Value>, String> {
    let what = format!("tool {}: output-schema", tool.name);
    tool.output_schema.as_deref().map(|text| parse_json(&what, text)).transpose()
}

#[cfg(not(feature = "guard"))]
/// The tool's `annotations`, when the server sent them.
pub fn annotations(tool: &Tool) -> Result<Option<Value>, String> {
    let what = format!("tool {}: annotations", tool.name);
    tool.annotations.as_deref().map(|text| parse_json(&what, text)).transpose()
}

#[cfg(not(feature = "guard"))]
/// The server definition's transport-specific `options` (`{}` when none).
pub fn server_options(server: &Server) -> Result<Value, String> {
    parse_json(&format!("server {}: options", server.name), &server.options)
}

#[cfg(not(feature = "guard"))]
/// One shape result: `value` as JSON text, refused unless it is an object (the host wants one
/// object per tool; the error names the tool, so `convert` can return it as is).
pub fn shape_text(tool: &Tool, value: &Value) -> Result<String, String> {
    if value.is_object() {
        Ok(crate::json::json_text(value))
    } else {
        Err(format!("tool {}: a shape must be a JSON object, not {}", tool.name, crate::json::kind_of(value)))
    }
}
