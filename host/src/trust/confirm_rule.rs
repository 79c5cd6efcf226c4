//! Whether a tool call is confirmed by a person before toolport sends it, by the workspace's
//! `confirm` setting (`config/confirm_setting.rs`) and the tool's annotations as its server
//! listed them. Pure: the asking is the runtime's (`runtime/calls/confirm.rs`).
//!
//! Annotations are the server's own claims, so they can only add questions, never excuse a
//! tool a glob names; and the default reads `destructiveHint` only when it is `true` outright:
//! MCP's default for a tool without it is "may be destructive", but asking about every
//! unannotated call would teach a person to say yes without reading (`"writes"` asks that way).

use rmcp::model::ToolAnnotations;

use crate::config::ConfirmSetting;

/// The rule's name in the audit trail.
pub const CONFIRM_RULE: &str = "confirm";

/// Why a call of the tool `name` (its final name) must be confirmed first, in words that
/// complete "toolport asks before calling …"; `None` when it is sent without asking.
pub fn confirm_reason(
    setting: &ConfirmSetting,
    name: &str,
    annotations: Option<&ToolAnnotations>,
) -> Option<&'static str> {
    let said = |hint: fn(&ToolAnnotations) -> Option<bool>| annotations.and_then(hint);
    match setting {
        ConfirmSetting::Never => None,
        ConfirmSetting::Destructive => {
            (said(|a| a.destructive_hint) == Some(true)).then_some("destructive tools")
        }
        ConfirmSetting::Writes => (said(|a| a.read_only_hint) != Some(true))
            .then_some("tools not annotated read-only (the workspace's confirm is \"writes\")"),
        ConfirmSetting::Tools(globs) => {
            globs.matches(name).then_some("the tools the workspace's confirm list names")
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn setting(value: serde_json::Value) -> ConfirmSetting {
        ConfirmSetting::read(Some(&value)).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn each_setting_picks_its_tools() {
        let destructive = ToolAnnotations::new().destructive(true).read_only(false);
        let read_only = ToolAnnotations::new().read_only(true);
        let additive = ToolAnnotations::new().destructive(false);
        let tools: [(&str, Option<&ToolAnnotations>); 4] = [
            ("delete_note", Some(&destructive)),
            ("read_note", Some(&read_only)),
            ("add_note", Some(&additive)),
            ("plain", None),
        ];
        let asked = |s: &ConfirmSetting| -> Vec<&str> {
            tools.iter().filter(|(n, a)| confirm_reason(s, n, *a).is_some()).map(|(n, _)| *n).collect()
        };
        assert_eq!(asked(&ConfirmSetting::Destructive), ["delete_note"]);
        assert_eq!(asked(&ConfirmSetting::Writes), ["delete_note", "add_note", "plain"]);
        assert!(asked(&ConfirmSetting::Never).is_empty());
        // Globs name tools whatever the annotations claim, read-only ones too.
        assert_eq!(asked(&setting(json!(["read_*", "plain"]))), ["read_note", "plain"]);
        assert!(asked(&setting(json!([]))).is_empty());
    }

    #[test]
    fn the_reason_says_which_rule() {
        let destructive = ToolAnnotations::new().destructive(true);
        assert_eq!(
            confirm_reason(&ConfirmSetting::Destructive, "x", Some(&destructive)),
            Some("destructive tools")
        );
        assert_eq!(
            confirm_reason(&ConfirmSetting::Writes, "x", None),
            Some("tools not annotated read-only (the workspace's confirm is \"writes\")")
        );
        assert_eq!(
            confirm_reason(&setting(json!(["x"])), "x", None),
            Some("the tools the workspace's confirm list names")
        );
    }
}
