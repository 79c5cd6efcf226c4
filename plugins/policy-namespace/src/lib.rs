//! Built-in name policy `namespace`: every tool becomes `<server>__<tool>`, limited to the
//! characters and length every model API accepts.

use toolport_guest::{PolicyGuest, Server, Tool, Verdict};

/// The tightest tool-name limit among the model APIs (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
const MAX_LEN: usize = 64;
/// Hex digits of the hash appended to a truncated name: 40 bits keeps accidental clashes
/// between truncated names of one server negligible while leaving 53 readable characters.
const HASH_DIGITS: usize = 10;

struct PolicyNamespace;

impl PolicyGuest for PolicyNamespace {
    fn review(server: Server, tools: Vec<Tool>) -> Vec<Verdict> {
        tools.iter().map(|t| Verdict::Rename(namespaced(&server.name, &t.name))).collect()
    }
}

/// `<server>__<tool>`, sanitised, and when too long: truncated plus a hash of the full
/// unsanitised name, so two long names that share a prefix stay distinct.
fn namespaced(server: &str, tool: &str) -> String {
    let full = format!("{server}__{tool}");
    let clean: String = full
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if clean.len() <= MAX_LEN {
        return clean;
    }
    let hash = fnv1a64(full.as_bytes());
    let keep = MAX_LEN - HASH_DIGITS - 1;
    // `clean` is ASCII, so byte slicing is on character boundaries.
    format!("{}_{:0width$x}", &clean[..keep], hash >> (64 - 4 * HASH_DIGITS), width = HASH_DIGITS)
}

/// FNV-1a: tiny, dependency-free and stable across versions, which a name hash must be.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

toolport_guest::export!(PolicyNamespace);
