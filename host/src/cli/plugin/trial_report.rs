//! What every `plugin run` prints after a plugin's answers, whatever its kind: its log lines,
//! then what its sandbox refused; as text and as `--json`'s `logs` and `denials`.

use serde_json::{Map, Value, json};
use toolport::display::escape_line;
use toolport::plugins::PluginLogLine;

/// What every trial prints after its answers: the plugin's log lines, then what its sandbox
/// refused.
pub fn trailer_text(logs: &[PluginLogLine], denials: &[String]) -> String {
    let mut out = String::new();
    for line in logs {
        out.push_str(&format!("log {}: {}\n", line.level, line.message));
    }
    for denial in denials {
        out.push_str(&format!("denied: {}\n", escape_line(denial)));
    }
    out
}

/// [`trailer_text`] as `--json`'s `logs` and `denials`.
pub fn trailer_json(out: &mut Map<String, Value>, logs: &[PluginLogLine], denials: &[String]) {
    let logs: Vec<Value> = logs.iter().map(|l| json!({ "level": l.level, "message": l.message })).collect();
    out.insert("logs".into(), logs.into());
    out.insert("denials".into(), denials.to_vec().into());
}
