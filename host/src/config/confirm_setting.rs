//! The workspace's `confirm` setting: which tool calls toolport asks a person about before it
//! sends them (the rule itself is `trust/confirm_rule.rs`). Read here so a wrong value is a
//! configuration error naming the file and the key, not a surprise at the first call.
//!
//! - `"destructive"` (the default): tools whose annotations say `destructiveHint: true`
//!   outright. MCP's own default for a tool with no annotations is "may be destructive", but
//!   asking about every unannotated tool would ask about nearly every call; `"writes"` is that
//!   stricter reading.
//! - `"writes"`: every tool not annotated `readOnlyHint: true`.
//! - `"never"`: nothing is asked.
//! - an array of globs over the final tool names (as `toolport tools` shows them): exactly
//!   those tools, whatever their annotations say (a server could annotate anything).

use globset::GlobSet;
use serde_json::Value;

use super::tool_filter::compile;
use crate::config::ConfigError;

/// The workspace key.
pub const CONFIRM_KEY: &str = "confirm";

/// Which calls are confirmed first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ConfirmSetting {
    /// Tools annotated `destructiveHint: true` (the default).
    #[default]
    Destructive,
    /// Tools not annotated `readOnlyHint: true`.
    Writes,
    /// No tool.
    Never,
    /// The tools whose final names match one of these globs.
    Tools(ToolGlobs),
}

/// Globs over final tool names, compiled once. Equality and `Debug` look at the globs as
/// written (the compiled set follows from them).
#[derive(Clone)]
pub struct ToolGlobs {
    written: Vec<String>,
    set: GlobSet,
}

impl ToolGlobs {
    /// The globs as written.
    pub fn written(&self) -> &[String] {
        &self.written
    }

    /// Whether the final tool name `name` matches one (whole name, case-sensitive).
    pub fn matches(&self, name: &str) -> bool {
        self.set.is_match(name)
    }
}

impl PartialEq for ToolGlobs {
    fn eq(&self, other: &Self) -> bool {
        self.written == other.written
    }
}

impl Eq for ToolGlobs {}

impl std::fmt::Debug for ToolGlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ToolGlobs").field(&self.written).finish()
    }
}

impl ConfirmSetting {
    /// The value of `confirm` (absent: the default); the error is the message after the file's
    /// name.
    pub fn read(value: Option<&Value>) -> Result<Self, ConfigError> {
        const EXPECTED: &str =
            "\"confirm\" must be \"destructive\", \"writes\", \"never\" or an array of tool-name globs";
        match value {
            None => Ok(Self::default()),
            Some(Value::String(word)) => match word.trim() {
                "destructive" => Ok(Self::Destructive),
                "writes" => Ok(Self::Writes),
                "never" => Ok(Self::Never),
                _ => {
                    Err(ConfigError(format!("{EXPECTED}, not {value}", value = Value::String(word.clone()))))
                }
            },
            Some(Value::Array(items)) => {
                let written = items
                    .iter()
                    .map(|item| item.as_str().map(|s| s.trim().to_string()).ok_or(()))
                    .collect::<Result<Vec<String>, ()>>()
                    .map_err(|()| format!("{EXPECTED}; an array holds strings only"))?;
                let written: Vec<String> = written.into_iter().filter(|g| !g.is_empty()).collect();
                let set = compile(CONFIRM_KEY, &written).map_err(|bad| {
                    format!("\"confirm\": glob {} is not valid: {}", Value::String(bad.glob), bad.reason)
                })?;
                Ok(Self::Tools(ToolGlobs { written, set }))
            }
            Some(other) => Err(ConfigError(format!("{EXPECTED}, not {other}"))),
        }
    }

    /// The setting as `workspace.json` spells it (a list as its JSON).
    pub fn describe(&self) -> String {
        match self {
            Self::Destructive => "destructive".into(),
            Self::Writes => "writes".into(),
            Self::Never => "never".into(),
            Self::Tools(globs) => Value::from(globs.written().to_vec()).to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn words_and_globs_are_read() {
        assert_eq!(ConfirmSetting::read(None), Ok(ConfirmSetting::Destructive));
        assert_eq!(ConfirmSetting::read(Some(&json!("writes"))), Ok(ConfirmSetting::Writes));
        assert_eq!(ConfirmSetting::read(Some(&json!(" never "))), Ok(ConfirmSetting::Never));
        let Ok(ConfirmSetting::Tools(globs)) =
            ConfirmSetting::read(Some(&json!(["delete_*", " ", "fs__write"])))
        else {
            panic!("a list is globs")
        };
        assert_eq!(globs.written(), ["delete_*", "fs__write"]);
        assert!(globs.matches("delete_note") && globs.matches("fs__write"));
        assert!(!globs.matches("fs__write_all") && !globs.matches("Delete_note"));
    }

    #[test]
    fn a_wrong_value_says_what_is_allowed() {
        let message = |v: Value| ConfirmSetting::read(Some(&v)).err().unwrap_or_default();
        assert_eq!(
            message(json!("always")),
            "\"confirm\" must be \"destructive\", \"writes\", \"never\" or an array of tool-name globs, not \"always\""
        );
        assert_eq!(
            message(json!(true)),
            "\"confirm\" must be \"destructive\", \"writes\", \"never\" or an array of tool-name globs, not true"
        );
        assert_eq!(
            message(json!(["a", 1])),
            "\"confirm\" must be \"destructive\", \"writes\", \"never\" or an array of tool-name globs; an array \
             holds strings only"
        );
        assert_eq!(
            message(json!(["a[b"])),
            "\"confirm\": glob \"a[b\" is not valid: unclosed character class; missing ']'"
        );
    }
}
