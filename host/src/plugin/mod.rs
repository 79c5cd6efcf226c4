//! Placeholder: the plugin host (issue 3).
