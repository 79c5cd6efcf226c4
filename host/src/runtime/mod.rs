//! Placeholder: the live runtime (issue 4).
