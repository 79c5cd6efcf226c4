//! What the client answers when a server asks it something: elicitation (through the host's
//! [`Elicitor`]), sampling (refused unless the host supplies a [`Sampler`]) and roots (what the
//! server's `roots` setting says: the workspace root, the client's, its own list, or none). One [`Answers`] per runtime, shared by every connection's
//! handler and by the input-required rounds of `request_state.rs`, so a question reaches the
//! person the same way whichever revision the server speaks.
// Roots and sampling are deprecated by SEP-2577 in 2026-07-28 but still what 2025-11-25
// servers use, and this file is where toolport answers them.
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationCapability, ErrorCode, FormElicitationCapability, ListRootsResult,
    LoggingMessageNotificationParam, ResourceUpdatedNotificationParam, Root, RootsCapabilities,
    SamplingCapability, UrlElicitationCapability,
};

use super::confirmation::{ConfirmAnswer, Confirmation};
use super::elicitation::{DeclineAll, Elicitor};
use super::elicitation_wire;
use super::person_clock::PersonClock;
use super::related::{Caller, Related};
use super::sampling::{NO_MODEL, Sampler};
use crate::config::Roots;

/// The JSON-RPC error code of a refused sampling request: the one MCP's own example uses for
/// a request the client will not carry out.
const SAMPLING_REFUSED: i32 = -1;

/// A host's own clients (`serve`): who else hears what servers say on their own (besides the
/// log), and whose roots the servers set to `roots: "client"` are told. Set once, after the
/// runtime has started.
pub(crate) trait HostClients: Send + Sync + 'static {
    /// A `notifications/message` of `server`, related to a call as [`Related`] says.
    fn log(&self, server: &str, related: Related, params: &LoggingMessageNotificationParam);
    /// A `notifications/resources/updated` of `server`.
    fn resource_updated(&self, server: &str, params: &ResourceUpdatedNotificationParam);
    /// The roots for a `roots/list` asked during `caller`'s call (`None`: outside any call, or
    /// not known whose): that client's own, or, for no one in particular, only what every
    /// client allows. `None` when no client gave roots (the workspace root is then told).
    fn roots(&self, caller: Option<Caller>) -> Option<Vec<Root>>;
}

/// The runtime's answers to servers' questions.
pub struct Answers {
    elicitor: Arc<dyn Elicitor>,
    sampler: Option<Arc<dyn Sampler>>,
    root: Mutex<Option<PathBuf>>,
    /// A host's own clients (`serve`): where servers' notifications go besides the log, and
    /// the roots for the servers set to `roots: "client"`.
    pub(crate) clients: OnceLock<Arc<dyn HostClients>>,
    /// Time the questions kept a person busy (not counted against call timeouts).
    pub clock: PersonClock,
    /// Where OAuth tokens live; `None`: servers that ask for a sign-in stay unsigned.
    pub(crate) credentials: Option<crate::auth::CredentialsFile>,
    /// Where a connection's sign-ins are recorded and their addresses told.
    pub(crate) observer: crate::observe::Observer,
}

impl Answers {
    /// Answers through `elicitor` (declining when `None`), sampling through `sampler` (refused
    /// when `None`), with `root` as the one root.
    pub fn new(
        elicitor: Option<Arc<dyn Elicitor>>,
        sampler: Option<Arc<dyn Sampler>>,
        root: Option<PathBuf>,
    ) -> Self {
        Self {
            elicitor: elicitor.unwrap_or_else(|| Arc::new(DeclineAll)),
            sampler,
            root: Mutex::new(root),
            clients: OnceLock::new(),
            clock: PersonClock::default(),
            credentials: None,
            observer: crate::observe::Observer::default(),
        }
    }

    /// These answers with sign-ins recorded and told through `observer`.
    pub fn with_observer(mut self, observer: crate::observe::Observer) -> Self {
        self.observer = observer;
        self
    }

    /// These answers with OAuth tokens kept in `path` (`<home>/credentials.json`); `sign_in`:
    /// a person is at hand to sign in again for more scope ([`RuntimeOptions::sign_in`]).
    ///
    /// [`RuntimeOptions::sign_in`]: crate::runtime::options::RuntimeOptions::sign_in
    pub fn with_credentials(mut self, path: Option<PathBuf>, sign_in: bool) -> Self {
        self.credentials = path.map(|path| {
            let file = crate::auth::CredentialsFile::new(path);
            if sign_in { file.signing_in_here() } else { file }
        });
        self
    }

    /// What the client advertises to a server with the `roots` setting `setting`: roots (with
    /// `listChanged`, since the root can be changed; not at all under `"none"`, so the server
    /// keeps its own arguments), sampling (so a server that needs it asks and hears why not),
    /// and the elicitation modes the host's elicitor answers.
    pub fn capabilities(&self, setting: &Roots) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        if *setting != Roots::None {
            let mut roots = RootsCapabilities::default();
            roots.list_changed = Some(true);
            capabilities.roots = Some(roots);
        }
        capabilities.sampling = Some(SamplingCapability::default());
        let modes = self.elicitor.modes();
        if modes.form || modes.url {
            let mut elicitation = ElicitationCapability::new();
            if modes.form {
                elicitation = elicitation.with_form(FormElicitationCapability::new());
            }
            if modes.url {
                elicitation = elicitation.with_url(UrlElicitationCapability::new());
            }
            capabilities.elicitation = Some(elicitation);
        }
        capabilities
    }

    /// Asks the person through the host's elicitor; the call clock stands still meanwhile.
    pub async fn elicit(
        &self,
        server: &str,
        caller: Option<Caller>,
        params: ElicitRequestParams,
    ) -> ElicitResult {
        let Some(mut asked) = elicitation_wire::from_params(server, params) else {
            tracing::warn!(server = %server, "declined an elicitation of a mode toolport does not know");
            return ElicitResult::new(rmcp::model::ElicitationAction::Decline);
        };
        asked.caller = caller;
        let kind = asked.kind.clone();
        tracing::info!(server = %server, "MCP server asks for input");
        let answer = {
            let _asking = self.clock.asking();
            self.elicitor.elicit(asked).await
        };
        elicitation_wire::to_result(answer, &kind)
    }

    /// Asks the person, through the host's elicitor, to allow a call toolport is about to
    /// send; the call clock has not started, but a person's time is theirs all the same.
    pub async fn confirm(&self, request: Confirmation) -> ConfirmAnswer {
        let _asking = self.clock.asking();
        self.elicitor.confirm(request).await
    }

    /// The host's sampler's answer, or the refusal [`NO_MODEL`].
    pub async fn sample(
        &self,
        server: &str,
        caller: Option<Caller>,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, McpError> {
        let Some(sampler) = &self.sampler else {
            tracing::info!(server = %server, "refused a sampling request: no model");
            return Err(refusal(NO_MODEL.to_string()));
        };
        let request = serde_json::to_value(&params).map_err(|e| {
            McpError::internal_error(format!("cannot encode the sampling request: {e}"), None)
        })?;
        let answer = {
            let _asking = self.clock.asking();
            sampler.create_message(server, caller, request).await
        };
        let value = answer.map_err(refusal)?;
        serde_json::from_value(value).map_err(|e| {
            McpError::internal_error(format!("the host's sampler answered no CreateMessageResult: {e}"), None)
        })
    }

    /// `roots/list` for a server with the `roots` setting `setting`, asked during `caller`'s
    /// call: the workspace root (none when the host named none), the client's roots where the
    /// setting is `"client"` and a client gave some ([`HostClients::roots`]), or the setting's
    /// own folders (`~` expanded, relative ones under the workspace root). `"none"` answers an
    /// empty list to a server that asks all the same.
    pub fn roots(&self, setting: &Roots, caller: Option<Caller>) -> ListRootsResult {
        let workspace = self.root.lock().ok().and_then(|r| r.clone());
        let roots = match setting {
            Roots::None => Vec::new(),
            Roots::Client => match self.clients.get().and_then(|clients| clients.roots(caller)) {
                Some(roots) => roots,
                None => workspace.iter().filter_map(|path| root_of(path)).collect(),
            },
            Roots::Workspace => workspace.iter().filter_map(|path| root_of(path)).collect(),
            Roots::Paths(paths) => paths
                .iter()
                .filter_map(|p| listed_folder(p, workspace.as_deref()))
                .filter_map(|p| root_of(&p))
                .collect(),
        };
        ListRootsResult::new(roots)
    }

    /// Replaces the root; `true` if it changed (the servers are then told).
    pub fn set_root(&self, path: PathBuf) -> bool {
        match self.root.lock() {
            Ok(mut root) if root.as_ref() != Some(&path) => {
                *root = Some(path);
                true
            }
            _ => false,
        }
    }
}

fn refusal(message: String) -> McpError {
    McpError::new(ErrorCode(SAMPLING_REFUSED), message, None)
}

/// One folder of a `roots` list as a path: `~` is the home folder, a relative path is under the
/// workspace root (left out, logged, when there is none).
fn listed_folder(written: &str, workspace: Option<&Path>) -> Option<PathBuf> {
    let path = crate::config::expand_home(written);
    if path.is_absolute() {
        return Some(path);
    }
    match workspace {
        Some(root) => Some(root.join(path)),
        None => {
            tracing::warn!("root {written} is relative and there is no workspace root: left out");
            None
        }
    }
}

/// A folder as a root: its `file://` URI and its name (a relative path is made absolute
/// first). A path that still is no folder URI is left out, logged, since a server could not
/// resolve it.
fn root_of(path: &Path) -> Option<Root> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let path = path.as_path();
    match url::Url::from_directory_path(path) {
        Ok(uri) => {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let root = Root::new(uri.to_string());
            Some(match name {
                Some(name) => root.with_name(name),
                None => root,
            })
        }
        Err(()) => {
            tracing::warn!("root {} is not an absolute path: not advertised", path.display());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_the_one_root() {
        let answers = Answers::new(None, None, Some(PathBuf::from("/work/my project")));
        let roots = answers.roots(&Roots::Workspace, None).roots;
        assert_eq!(roots.len(), 1);
        assert_eq!(roots[0].uri, "file:///work/my%20project/");
        assert_eq!(roots[0].name.as_deref(), Some("my project"));
        assert!(!answers.set_root(PathBuf::from("/work/my project")));
        assert!(answers.set_root(PathBuf::from("/other")));
        assert_eq!(answers.roots(&Roots::Workspace, None).roots[0].uri, "file:///other/");
    }

    #[test]
    fn each_setting_answers_its_own_roots() {
        let answers = Answers::new(None, None, Some(PathBuf::from("/work/ws")));
        let uris = |setting: &Roots| -> Vec<String> {
            answers.roots(setting, None).roots.into_iter().map(|r| r.uri).collect()
        };
        assert!(uris(&Roots::None).is_empty());
        assert_eq!(uris(&Roots::Client), ["file:///work/ws/"], "no client roots: the workspace root");
        let listed = Roots::Paths(vec!["/data".into(), "docs/api".into()]);
        assert_eq!(uris(&listed), ["file:///data/", "file:///work/ws/docs/api/"]);
        let rootless = Answers::new(None, None, None);
        assert!(rootless.roots(&Roots::Paths(vec!["docs".into()]), None).roots.is_empty());
    }

    #[test]
    fn capabilities_follow_the_elicitor() {
        let value = |a: &Answers| serde_json::to_value(a.capabilities(&Roots::Workspace)).unwrap_or_default();
        let declining = value(&Answers::new(None, None, None));
        assert_eq!(declining["roots"], serde_json::json!({"listChanged": true}));
        let none = serde_json::to_value(Answers::new(None, None, None).capabilities(&Roots::None));
        assert!(none.is_ok_and(|v| v.get("roots").is_none()), "\"none\" advertises no roots");
        assert!(declining.get("sampling").is_some());
        assert!(declining.get("elicitation").is_none(), "{declining}");
    }

    #[tokio::test]
    async fn sampling_is_refused_without_a_model() {
        let answers = Answers::new(None, None, None);
        let params: CreateMessageRequestParams = serde_json::from_value(serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let refused = answers.sample("s", None, params).await.err().map(|e| e.message.to_string());
        assert!(refused.is_some_and(|m| m.starts_with("this host has no model")));
    }
}
