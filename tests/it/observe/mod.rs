//! What toolport lets its operators see (issue 29): the audit log of every call, read, prompt
//! and sign-in.

mod audit;
