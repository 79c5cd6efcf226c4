//! The workspace's choice of name policy and tool shape, checked before anything connects. A
//! misspelt `toolShape` is one mistake in one file: it is reported once, naming the file and
//! what exists (exit 2), instead of putting every server in `error` with the same message.

use std::path::Path;

use crate::config::{ConfigError, PluginKind, Resolved};
use crate::plugin::{Origin, PluginHost};

/// Refuses a workspace whose `namePolicy` or `toolShape` names no plugin of that kind.
pub fn check(resolved: &Resolved, plugins: &PluginHost) -> Result<(), ConfigError> {
    let settings = &resolved.settings;
    let mut choices = vec![("toolShape", PluginKind::ToolShape, settings.tool_shape.as_str())];
    if let Some(policy) = &settings.name_policy {
        choices.push(("namePolicy", PluginKind::NamePolicy, policy.as_str()));
    }
    let available = plugins.list();
    for (key, kind, name) in choices {
        let of_kind = |builtin: bool| -> String {
            let names: Vec<&str> = available
                .iter()
                .filter(|p| p.kind == kind && matches!(p.origin, Origin::Builtin) == builtin)
                .map(|p| p.name.as_str())
                .collect();
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        };
        let problem = match available.iter().find(|p| p.name == name) {
            Some(p) if p.kind == kind => continue,
            Some(p) => {
                format!("plugin {name} is a {} plugin, not a {} plugin", p.kind.as_str(), kind.as_str())
            }
            None => "unknown plugin".to_string(),
        };
        let file = resolved.workspace_file.as_deref().unwrap_or(Path::new("workspace"));
        return Err(ConfigError(format!(
            "{}: {key} \"{name}\": {problem} (built-in: {}; configured: {})",
            file.display(),
            of_kind(true),
            of_kind(false)
        )));
    }
    Ok(())
}
