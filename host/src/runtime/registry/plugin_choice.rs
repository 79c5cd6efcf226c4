//! The workspace's choice of name policy and tool shape, checked before anything connects. A
//! misspelt `toolShape` is one mistake in one file: it is reported once, naming the file and
//! what exists (exit 2), instead of putting every server in `error` with the same message.

use std::path::Path;

use crate::config::{ConfigError, PluginKind, Resolved};
use crate::plugin::PluginHost;

/// Refuses a workspace whose `namePolicy` or `toolShape` names no plugin of that kind.
pub fn check(resolved: &Resolved, plugins: &PluginHost) -> Result<(), ConfigError> {
    let settings = &resolved.settings;
    let mut choices = vec![("toolShape", PluginKind::ToolShape, settings.tool_shape.as_str())];
    if let Some(policy) = &settings.name_policy {
        choices.push(("namePolicy", PluginKind::NamePolicy, policy.as_str()));
    }
    for (key, kind, name) in choices {
        if let Some(problem) = plugins.misfit(name, kind) {
            let file = resolved.workspace_file.as_deref().unwrap_or(Path::new("workspace"));
            return Err(ConfigError(format!("{}: {key} \"{name}\": {problem}", file.display())));
        }
    }
    Ok(())
}
