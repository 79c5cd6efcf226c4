//! What a tool call comes back with and the checks on the way back: the outcome or the
//! error, the result against its own `outputSchema`, results over the token budget stored
//! whole, and the outcome as JSON. Below everything else in the runtime.

pub(super) mod large_results;
pub(super) mod outcome;
pub(super) mod outcome_json;
pub(super) mod structured_output;
