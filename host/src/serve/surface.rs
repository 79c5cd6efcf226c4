//! What `serve` shows a client, read from the runtime: the catalog's resources, templates and
//! prompts (the tools are the request's scope's, `scope.rs`),
//! where a resource URI or a completion goes, and the instructions naming the servers behind.

use rmcp::model::{Prompt, Resource, ResourceTemplate};

use crate::runtime::{CONNECTING, Catalog};
use crate::status::{ServerState, ServerStatus, summarize_error};

/// The catalog's resources, templates and prompts as MCP lists them, those `listed(server,
/// uri or name)` keeps (the request's scope, `scope.rs`).
pub fn resources(catalog: &Catalog, listed: impl Fn(&str, &str) -> bool) -> Vec<Resource> {
    catalog.resources.iter().filter(|r| listed(&r.server, &r.item.uri)).map(|r| r.item.clone()).collect()
}

/// See [`resources`].
pub fn templates(catalog: &Catalog, listed: impl Fn(&str, &str) -> bool) -> Vec<ResourceTemplate> {
    let kept = catalog.templates.iter().filter(|t| listed(&t.server, &t.item.uri_template));
    kept.map(|t| t.item.clone()).collect()
}

/// See [`resources`].
pub fn prompts(catalog: &Catalog, listed: impl Fn(&str, &str) -> bool) -> Vec<Prompt> {
    catalog.prompts.iter().filter(|p| listed(&p.server, &p.item.name)).map(|p| p.item.clone()).collect()
}

/// The server a `resources/read` (or subscription) of `uri` goes to: the one that lists the
/// URI; else the one whose template's fixed start is the longest start of it; else, when only
/// one connected server offers resources at all, that one.
pub fn resource_owner(catalog: &Catalog, uri: &str) -> Option<String> {
    if let Some(listed) = catalog.resources.iter().find(|r| r.item.uri == uri) {
        return Some(listed.server.clone());
    }
    let by_template = catalog
        .templates
        .iter()
        .filter_map(|t| {
            let fixed = t.item.uri_template.split('{').next().unwrap_or_default();
            (!fixed.is_empty() && uri.starts_with(fixed)).then_some((fixed.len(), &t.server))
        })
        .max_by_key(|(len, _)| *len);
    if let Some((_, server)) = by_template {
        return Some(server.clone());
    }
    let mut owners: Vec<&String> = catalog
        .resources
        .iter()
        .map(|r| &r.server)
        .chain(catalog.templates.iter().map(|t| &t.server))
        .collect();
    owners.dedup();
    match owners.as_slice() {
        [only] => Some((*only).clone()),
        _ => None,
    }
}

/// The server that offers the resource template `uri_template`.
pub fn template_owner(catalog: &Catalog, uri_template: &str) -> Option<String> {
    let exact = catalog.templates.iter().find(|t| t.item.uri_template == uri_template);
    exact.map(|t| t.server.clone()).or_else(|| resource_owner(catalog, uri_template))
}

/// What `initialize` and `server/discover` tell the client: toolport fronts these servers,
/// and which of them it can reach now.
pub fn instructions(rows: &[ServerStatus]) -> String {
    let mut out = String::from(
        "toolport fronts these MCP servers; their tools, resources and prompts are listed here under \
         the workspace's names.\n",
    );
    let mut any = false;
    for row in rows.iter().filter(|r| !matches!(r.state, ServerState::Disabled)) {
        any = true;
        let what = match row.state {
            ServerState::Connected => format!("connected, {}", crate::text::counted(row.tools, "tool")),
            _ if row.error.as_deref() == Some(CONNECTING) => {
                "still connecting; its tools are added when it is up (notifications/tools/list_changed)"
                    .to_string()
            }
            _ => {
                let state = format!("{:?}", row.state).to_lowercase();
                match &row.error {
                    Some(error) => format!("{state}: {}", summarize_error(error)),
                    None => state,
                }
            }
        };
        out.push_str(&format!("- {} ({what})\n", row.name));
    }
    if !any {
        out.push_str("- none is enabled in this workspace yet (toolport mcp enable NAME)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Offered;

    fn catalog() -> Catalog {
        let resource =
            |server: &str, uri: &str| Offered { server: server.into(), item: Resource::new(uri, uri) };
        let template =
            |server: &str, t: &str| Offered { server: server.into(), item: ResourceTemplate::new(t, t) };
        Catalog {
            resources: vec![resource("a", "demo://item/1"), resource("b", "file:///x")],
            templates: vec![template("a", "demo://item/{id}"), template("b", "demo://item/special/{id}")],
            ..Catalog::default()
        }
    }

    #[test]
    fn a_uri_goes_to_who_lists_it_then_to_the_closest_template() {
        let catalog = catalog();
        assert_eq!(resource_owner(&catalog, "file:///x").as_deref(), Some("b"));
        assert_eq!(resource_owner(&catalog, "demo://item/9").as_deref(), Some("a"));
        assert_eq!(resource_owner(&catalog, "demo://item/special/3").as_deref(), Some("b"));
        assert_eq!(resource_owner(&catalog, "other://y"), None);
        assert_eq!(template_owner(&catalog, "demo://item/special/{id}").as_deref(), Some("b"));
    }
}
