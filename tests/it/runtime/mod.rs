//! The runtime behind every entry point: `tools` and `call`, the library API, a call while it
//! runs, results, names, filters, resources and prompts, roots and a server's own questions.

mod calls_live;
mod large_results;
mod live;
mod names_checked;
mod printed_fixes;
mod resources_prompts;
mod roots_per_server;
mod server_questions;
mod structured_output;
mod tool_filters;
mod tool_tokens;
mod tools_and_call;
