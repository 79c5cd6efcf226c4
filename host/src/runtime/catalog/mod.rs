//! What servers offer besides tools: each server's resources, templates and prompts, listed
//! (`catalog_list`) and merged into one catalog (`merged`).

pub(super) mod catalog_list;
pub(super) mod merged;
