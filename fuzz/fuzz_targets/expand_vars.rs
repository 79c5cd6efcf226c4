//! `${VAR}` / `${VAR:-default}` expansion. The input is split at the first NUL: the text, then
//! `NAME=value` lines for the environment. Nothing may panic; text without `${` comes back
//! unchanged; a variable that is set and has no `$` in its value never leaves `${` behind
//! unless the text escaped it with `$${`.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use toolport::fuzzing::expand_vars;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let (text, env) = input.split_once('\0').unwrap_or((input, ""));
    let vars: HashMap<&str, &str> = env.lines().filter_map(|l| l.split_once('=')).collect();
    let result = expand_vars(text, |name| vars.get(name).map(|v| v.to_string()));
    if !text.contains("${") {
        assert_eq!(result.as_deref().ok(), Some(text), "text without ${{ changed");
    }
    if let Ok(out) = &result {
        let clean_values = vars.values().all(|v| !v.contains('$'));
        let defaults_clean = !text.contains(":-") || !text.contains('$');
        if clean_values && defaults_clean && !text.contains("$${") {
            assert!(!out.contains("${"), "{text:?} expanded to {out:?}");
        }
    }
});
