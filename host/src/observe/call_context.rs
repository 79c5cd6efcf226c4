//! Who asked for a call, a read or a prompt, passed with it as an argument
//! ([`CallContext`]): the client's label, the policies that let it through, and the host's
//! number for the call. The runtime records the first two in the audit log
//! (`Observer::finished`) and matches a server's questions during the call to the third
//! (`runtime/questions/related.rs`). An argument rather than a task-local: what the audit log
//! says of a call is what its caller passed, visible in every signature it crosses, and an
//! embedder calling from another task loses nothing.

use std::sync::Arc;

/// One call of the host's, as the host numbered it: `serve` gives every client call its own,
/// so the server's questions during the call reach that client and no other. Calls without
/// one (the CLI, the session: one person) have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Caller(pub u64);

/// Who a call is made for. [`CallContext::default`] is no one in particular: the CLI's, the
/// session's and ACP's own calls, and an embedder's that names nobody.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallContext {
    /// The client's label for the audit log ([`label`]): its subject when a token named one,
    /// its `clientInfo` name and session.
    pub client: Option<Arc<str>>,
    /// The policies that let the call through (`serve`'s policy file); empty: none named.
    pub permitted_by: Arc<[String]>,
    /// The host's number for the call, which the server's questions during it are matched to.
    pub caller: Option<Caller>,
    /// Who the caller's token named (`serve --http` with a checked token), for guard plugins.
    pub subject: Option<Arc<str>>,
    /// The client's `clientInfo` name as it gave it, for guard plugins.
    pub client_name: Option<Arc<str>>,
}

impl CallContext {
    /// This context, for the client labelled `client` ([`label`]).
    pub fn with_client(mut self, client: Option<Arc<str>>) -> Self {
        self.client = client;
        self
    }

    /// This context, for the caller `subject` of the client `name` (what a guard is told).
    pub fn with_parties(mut self, subject: Option<&str>, name: Option<&str>) -> Self {
        self.subject = subject.map(Into::into);
        self.client_name = name.map(Into::into);
        self
    }

    /// This context, let through by the policies `by`: its audit line names them.
    pub fn with_permitted_by(mut self, by: Vec<String>) -> Self {
        self.permitted_by = by.into();
        self
    }

    /// This context, for the host's call `caller`.
    pub fn with_caller(mut self, caller: Caller) -> Self {
        self.caller = Some(caller);
        self
    }
}

/// A client's label for the audit log: its `clientInfo` name (escaped to printable text and
/// clipped: it is the client's word) and, over HTTP, the first characters of its
/// `Mcp-Session-Id`, enough to tell two sessions of one client apart (`claude-code@3f2a9c1e`);
/// when the caller was identified by a token (`serve --http --auth oidc`), its subject first:
/// `alice via claude-code@3f2a9c1e`.
pub fn label(subject: Option<&str>, name: Option<&str>, session: Option<&str>) -> Option<Arc<str>> {
    let clean = |text: &str, max: usize| -> String {
        text.chars().filter(|c| !c.is_control()).take(max).collect::<String>()
    };
    let name = name.map(|n| clean(n.trim(), 64)).filter(|n| !n.is_empty());
    let session = session.map(|s| clean(s.trim(), 8)).filter(|s| !s.is_empty());
    let client = match (name, session) {
        (Some(name), Some(session)) => Some(format!("{name}@{session}")),
        (Some(name), None) => Some(name),
        (None, Some(session)) => Some(format!("@{session}")),
        (None, None) => None,
    };
    // A subject is the issuer's word, not the client's, but may be long (an email, a URL).
    match (subject.map(|s| clean(s.trim(), 128)).filter(|s| !s.is_empty()), client) {
        (Some(subject), Some(client)) => Some(format!("{subject} via {client}").into()),
        (Some(subject), None) => Some(subject.into()),
        (None, client) => client.map(Into::into),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_names_the_client_and_its_session() {
        assert_eq!(
            label(None, Some("claude-code"), Some("3f2a9c1e-77")).as_deref(),
            Some("claude-code@3f2a9c1e")
        );
        assert_eq!(label(None, Some(" mcp\u{1b}[31m "), None).as_deref(), Some("mcp[31m"));
        assert_eq!(label(None, None, Some("abc")).as_deref(), Some("@abc"));
        assert_eq!(label(None, Some(""), None), None);
        assert_eq!(
            label(Some("alice"), Some("claude-code"), Some("3f2a9c1e-77")).as_deref(),
            Some("alice via claude-code@3f2a9c1e")
        );
        assert_eq!(label(Some("alice"), None, None).as_deref(), Some("alice"));
    }

    #[test]
    fn a_context_is_built_from_its_parts() {
        let context = CallContext::default()
            .with_client(label(Some("alice"), Some("claude-code"), None))
            .with_permitted_by(vec!["team-read".into()])
            .with_caller(Caller(7));
        assert_eq!(context.client.as_deref(), Some("alice via claude-code"));
        assert_eq!(&context.permitted_by[..], ["team-read".to_string()]);
        assert_eq!(context.caller, Some(Caller(7)));
        assert_eq!(CallContext::default().permitted_by.len(), 0);
    }
}
