//! From listed tools to the surface: the pipeline (filters, the name policy, the collision
//! rules, the tool shape), the records it makes, the surface it fills, and what is read off it
//! (search, token costs).

pub(super) mod convert;
pub(super) mod names;
pub(super) mod pipeline;
pub(super) mod plugin_choice;
pub(super) mod record;
pub(super) mod surface;
pub(super) mod token_costs;
pub(super) mod tool_search;
pub(super) mod trust_gate;
