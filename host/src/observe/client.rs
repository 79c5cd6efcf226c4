//! Who asked: the label of the client a host is serving (`serve`: the client's `clientInfo`
//! name and its HTTP session), carried by the task that runs the request so the runtime's call,
//! read and prompt paths need no extra parameter and their public signatures stay as they are.

use std::future::Future;
use std::sync::Arc;

tokio::task_local! {
    static CLIENT: Arc<str>;
    static PERMITTED_BY: Arc<[String]>;
}

/// Runs `work` as asked by `client` (`None`: no one in particular, as the CLI's own calls).
pub async fn acting_for<F: Future>(client: Option<Arc<str>>, work: F) -> F::Output {
    match client {
        Some(client) => CLIENT.scope(client, work).await,
        None => work.await,
    }
}

/// The client the current task acts for, if a host named one.
pub fn current() -> Option<Arc<str>> {
    CLIENT.try_with(Arc::clone).ok()
}

/// Runs `work` as let through by the policies `by` (`serve`'s policy file): its audit line
/// names them.
pub async fn permitted_by<F: Future>(by: Vec<String>, work: F) -> F::Output {
    match by.is_empty() {
        true => work.await,
        false => PERMITTED_BY.scope(by.into(), work).await,
    }
}

/// The policies that let the current task's exchange through, if a host named any.
pub fn permitting() -> Option<Arc<[String]>> {
    PERMITTED_BY.try_with(Arc::clone).ok()
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

    #[tokio::test]
    async fn the_task_carries_its_client() {
        assert_eq!(current(), None);
        let seen = acting_for(Some("a@1".into()), async { current() }).await;
        assert_eq!(seen.as_deref(), Some("a@1"));
    }
}
