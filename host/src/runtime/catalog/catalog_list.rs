//! Listing what one server offers besides tools: its resources, resource templates and
//! prompts, every page, bounded like `tools/list`, under the server's list timeout. What the
//! lists mean together (which server owns a prompt name or a URI) is `catalog.rs`'s; this file
//! only talks to one server.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{PaginatedRequestParams, Prompt, Resource, ResourceTemplate, ServerCapabilities};
use rmcp::service::{Peer, ServiceError};

use super::merged::ServerCatalog;
use crate::runtime::connection::{Connection, MAX_LIST_PAGES};
use crate::runtime::failed_request::service_error;

/// Lists what `conn`'s server offers besides tools, each list only if the server declares
/// its capability (`resources`, `prompts`). A list that fails or times out is logged as a
/// warning and left empty: resources and prompts are extras, and a server whose tools work
/// must not go to `error` because `resources/list` is broken.
pub async fn list_catalog(server: &str, conn: &Connection, timeout: Duration) -> ServerCatalog {
    let mut catalog = ServerCatalog::default();
    let (resources, templates) = list_resources(server, conn, timeout).await;
    catalog.resources = resources;
    catalog.templates = templates;
    catalog.prompts = list_prompts(server, conn, timeout).await;
    catalog
}

/// The server's resources and resource templates (empty when it declares no `resources`).
pub async fn list_resources(
    server: &str,
    conn: &Connection,
    timeout: Duration,
) -> (Vec<Resource>, Vec<ResourceTemplate>) {
    if !declares(&conn.peer, |c| c.resources.is_some()) {
        return (Vec::new(), Vec::new());
    }
    let peer = &conn.peer;
    let resources = bounded(server, "resources/list", timeout, |params| async move {
        peer.list_resources(params).await.map(|page| (page.resources, page.next_cursor))
    })
    .await;
    let templates = bounded(server, "resources/templates/list", timeout, |params| async move {
        peer.list_resource_templates(params).await.map(|page| (page.resource_templates, page.next_cursor))
    })
    .await;
    (resources, templates)
}

/// The server's prompts (empty when it declares no `prompts`).
pub async fn list_prompts(server: &str, conn: &Connection, timeout: Duration) -> Vec<Prompt> {
    if !declares(&conn.peer, |c| c.prompts.is_some()) {
        return Vec::new();
    }
    let peer = &conn.peer;
    bounded(server, "prompts/list", timeout, |params| async move {
        peer.list_prompts(params).await.map(|page| (page.prompts, page.next_cursor))
    })
    .await
}

/// Whether the server declared a capability. A server rmcp has no info for (it always has
/// after the handshake) is asked anyway: a refusal is only a warning.
fn declares(peer: &Peer<RoleClient>, has: impl Fn(&ServerCapabilities) -> bool) -> bool {
    peer.peer_info().is_none_or(|info| has(&info.capabilities))
}

/// One list, every page, under `timeout` for the whole walk; on failure a warning and nothing.
async fn bounded<T, F, Fut>(server: &str, method: &str, timeout: Duration, page: F) -> Vec<T>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    match tokio::time::timeout(timeout, walk(method, page)).await {
        Ok(Ok(items)) => items,
        Ok(Err(why)) => {
            tracing::warn!(server = %server, "{method} failed, listing none: {why}");
            Vec::new()
        }
        Err(_) => {
            tracing::warn!(server = %server, "{method} timed out after {} ms, listing none", timeout.as_millis());
            Vec::new()
        }
    }
}

/// Follows `nextCursor` through every page, refusing a cursor seen before and stopping after
/// [`MAX_LIST_PAGES`] (a server that keeps inventing cursors), as the `tools/list` walk does.
async fn walk<T, F, Fut>(method: &str, mut page: F) -> Result<Vec<T>, String>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = cursor.take().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let (listed, next) = page(params).await.map_err(|e| service_error(&e))?;
        items.extend(listed);
        match next {
            None => return Ok(items),
            Some(next) if !seen.insert(next.clone()) => {
                return Err(format!("{method} repeated cursor {}", crate::text::escape_line(&next)));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(format!("{method} returned more than {MAX_LIST_PAGES} pages"))
}
