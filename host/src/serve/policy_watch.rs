//! `serve` follows its policy file (`--policy FILE`, else `<home>/policy.cedar`): an edit is
//! read and, when it parses, decides every request from then on, and every client is told its
//! lists may have changed. An edit that does not parse is reported (`FILE:line:column: …`) and
//! the policy read last stays in force. A removed file changes nothing either: serving without
//! a policy would open everything to everyone, which only a restart without one may do.

use std::path::PathBuf;
use std::sync::Arc;

use super::config_watch::{ConfigWatch, on_edits};
use super::front::Shared;
use crate::policy::Policy;

/// Follows `file` for `shared` while the returned handle is held.
pub fn watch(shared: Arc<Shared>, file: PathBuf) -> anyhow::Result<ConfigWatch> {
    on_edits(vec![file.clone()], move || {
        reload(&shared, &file);
        std::future::ready(())
    })
}

fn reload(shared: &Shared, file: &std::path::Path) {
    match file.try_exists() {
        Ok(false) => shared.runtime.observer().tell(format_args!(
            "toolport serve: {} was removed; the policy read last stays in force until serve restarts",
            file.display()
        )),
        _ => match Policy::load(file) {
            Ok(policy) => {
                shared.access.set_policy(Some(policy));
                shared.runtime.lists_may_differ();
                shared.runtime.observer().tell(format_args!(
                    "toolport serve: every request is decided by the policy in {} as edited",
                    file.display()
                ));
            }
            Err(e) => shared.runtime.observer().tell(format_args!(
                "toolport serve: the edited policy was not applied, the one read last stays in force: {e}"
            )),
        },
    }
}
