//! `serve` follows its policy file (`--policy FILE`, else `<home>/policy.cedar`): an edit is
//! read and, when it parses, decides every request from then on, and every client is told its
//! lists may have changed. An edit that does not parse is reported (`FILE:line:column: …`) and
//! the policy read last stays in force. A removed file changes nothing either: serving without
//! a policy would open everything to everyone, which only a restart without one may do.

use std::path::PathBuf;
use std::sync::Arc;

use super::access::Access;
use super::config_watch::{ConfigWatch, on_edits};
use crate::policy::Policy;
use crate::runtime::Runtime;

/// Follows `file` for `access` while the returned handle is held; `runtime`'s clients are told
/// when it changed.
pub fn watch(runtime: Runtime, access: Arc<Access>, file: PathBuf) -> anyhow::Result<ConfigWatch> {
    on_edits(vec![file.clone()], move || {
        reload(&runtime, &access, &file);
        std::future::ready(())
    })
}

fn reload(runtime: &Runtime, access: &Access, file: &std::path::Path) {
    match file.try_exists() {
        Ok(false) => runtime.observer().tell(format_args!(
            "toolport serve: {} was removed; the policy read last stays in force until serve restarts",
            file.display()
        )),
        _ => match Policy::load(file) {
            Ok(policy) => {
                access.set_policy(Some(policy));
                runtime.lists_may_differ();
                runtime.observer().tell(format_args!(
                    "toolport serve: every request is decided by the policy in {} as edited",
                    file.display()
                ));
            }
            Err(e) => runtime.observer().tell(format_args!(
                "toolport serve: the edited policy was not applied, the one read last stays in force: {e}"
            )),
        },
    }
}
