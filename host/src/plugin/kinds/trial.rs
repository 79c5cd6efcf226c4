//! What a one-off run of a policy or a shape leaves behind for its author (`toolport plugin
//! run`): the plugin's log lines, kept as well as logged, and the destinations its sandbox
//! refused. A runtime never asks for either, so nothing is kept unless a caller does.

use super::guard::GuardPlugin;
use super::policy::NamePolicy;
use super::shape::ToolShape;
use crate::plugin::sandbox::log_sink::PluginLogLine;

/// The same three methods on both handles, read from the loaded plugin each wraps.
macro_rules! trial_methods {
    ($handle:ty) => {
        impl $handle {
            /// From now on, keeps this plugin's log lines for `log_lines` (they are logged too).
            pub fn keep_logs(&self) {
                self.plugin.sandbox.keep_logs();
            }

            /// The log lines kept since `keep_logs`, oldest first.
            pub fn log_lines(&self) -> Vec<PluginLogLine> {
                self.plugin.sandbox.log_sink().map(|s| s.lines()).unwrap_or_default()
            }

            /// The destinations its sandbox refused so far (`tcp://…`, `name lookup of …`),
            /// oldest first.
            pub fn denials(&self) -> Vec<String> {
                self.plugin.sandbox.denials().all()
            }
        }
    };
}

trial_methods!(NamePolicy);
trial_methods!(ToolShape);
trial_methods!(GuardPlugin);
