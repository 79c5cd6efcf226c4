//! Placeholder: the built-in tour (issue 4).
