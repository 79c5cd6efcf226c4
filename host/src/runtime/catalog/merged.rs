//! Resources, resource templates and prompts of every connected server merged into one
//! catalog, with the host's rules for names two servers share, and its text views. Pure: the
//! lists come from `catalog_list.rs`, the requests go out through `catalog_calls.rs`.
//!
//! The rules follow the tools' (`names.rs`) with two differences, both because a prompt or a
//! resource is something a person picks, not a name a model calls: reserved tool names do not
//! apply, and a clash leaves out only the later item (with a warning), never the whole server.
//! Prompt names compare like tool names ([`name_key`]: NFKC, case-folded); URIs compare
//! exactly, since a URI's path is case-sensitive. The first-defined server keeps a contested
//! name or URI whichever finished connecting first.

use std::collections::{HashMap, HashSet};

use rmcp::model::{Prompt, Resource, ResourceTemplate};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::runtime::registry::names::{name_fault, name_key, show_name};
use crate::text::escape_line;

/// What one server offers besides tools, as last listed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerCatalog {
    /// `resources/list`, every page.
    pub resources: Vec<Resource>,
    /// `resources/templates/list`, every page.
    pub templates: Vec<ResourceTemplate>,
    /// `prompts/list`, every page.
    pub prompts: Vec<Prompt>,
}

/// One item of the catalog and the server it goes to.
#[derive(Debug, Clone, PartialEq)]
pub struct Offered<T> {
    /// The server that offers it: where a read or a `prompts/get` goes.
    pub server: String,
    /// The item exactly as the server listed it.
    pub item: T,
}

impl<T: Serialize> Offered<T> {
    /// The item's MCP JSON with `"server"` first.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("server".into(), Value::String(self.server.clone()));
        if let Ok(Value::Object(fields)) = serde_json::to_value(&self.item) {
            out.extend(fields);
        }
        Value::Object(out)
    }
}

/// Every connected server's resources, templates and prompts, in definition order, after the
/// rules for shared names and URIs; the warnings say what the rules left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    /// Resources; a URI appears once, under the first-defined server that lists it.
    pub resources: Vec<Offered<Resource>>,
    /// Resource templates; a URI template appears once, under the first-defined server.
    pub templates: Vec<Offered<ResourceTemplate>>,
    /// Prompts; a name appears once, under the first-defined server that offers it.
    pub prompts: Vec<Offered<Prompt>>,
    /// `Warning: …` lines, one per resource or template left out.
    pub resource_warnings: Vec<String>,
    /// `Warning: …` lines, one per prompt left out.
    pub prompt_warnings: Vec<String>,
}

impl Catalog {
    /// Merges the servers' lists, given in definition order.
    pub fn merge<'a>(servers: impl IntoIterator<Item = (&'a str, &'a ServerCatalog)>) -> Self {
        let mut catalog = Catalog::default();
        let mut uris: HashMap<String, String> = HashMap::new();
        let mut templates: HashMap<String, String> = HashMap::new();
        let mut prompts: HashMap<String, String> = HashMap::new();
        for (server, lists) in servers {
            for resource in &lists.resources {
                if let Some(warning) = claim_uri(&mut uris, server, &resource.uri, "resource URI") {
                    catalog.resource_warnings.push(warning);
                } else {
                    catalog.resources.push(Offered { server: server.to_string(), item: resource.clone() });
                }
            }
            for template in &lists.templates {
                let uri = &template.uri_template;
                if let Some(warning) = claim_uri(&mut templates, server, uri, "resource template") {
                    catalog.resource_warnings.push(warning);
                } else {
                    catalog.templates.push(Offered { server: server.to_string(), item: template.clone() });
                }
            }
            let mut own: HashSet<String> = HashSet::new();
            for prompt in &lists.prompts {
                match claim_prompt(&mut prompts, &mut own, server, &prompt.name) {
                    Some(warning) => catalog.prompt_warnings.push(warning),
                    None => {
                        catalog.prompts.push(Offered { server: server.to_string(), item: prompt.clone() })
                    }
                }
            }
        }
        catalog
    }

    /// The prompt called `name` (exactly) and the server it goes to.
    pub fn prompt(&self, name: &str) -> Option<&Offered<Prompt>> {
        self.prompts.iter().find(|p| p.item.name == name)
    }

    /// `{"resources": [...], "resourceTemplates": [...]}`, each item its MCP JSON plus
    /// `"server"`: what `toolport resources --json` prints.
    pub fn resources_json(&self) -> Value {
        json!({
            "resources": self.resources.iter().map(Offered::to_json).collect::<Vec<_>>(),
            "resourceTemplates": self.templates.iter().map(Offered::to_json).collect::<Vec<_>>(),
        })
    }

    /// Every prompt as its MCP JSON plus `"server"`: what `toolport prompts --json` prints.
    pub fn prompts_json(&self) -> Value {
        Value::Array(self.prompts.iter().map(Offered::to_json).collect())
    }

    /// The resources and templates as a person reads them, one row each in the status view's
    /// style: `- <server> | <uri> | <name> | <mime type>`. Every field is a server's text, so
    /// each is escaped to one line.
    pub fn resources_text(&self) -> String {
        let resources = self.resources.iter().map(|r| {
            let name = r.item.title.as_deref().unwrap_or(&r.item.name);
            row(&[&r.server, &r.item.uri, name, r.item.mime_type.as_deref().unwrap_or("-")])
        });
        let templates = self.templates.iter().map(|t| {
            let name = t.item.title.as_deref().unwrap_or(&t.item.name);
            row(&[&t.server, &t.item.uri_template, name, t.item.mime_type.as_deref().unwrap_or("-")])
        });
        format!("{}{}", section("resources", resources), section("templates", templates))
    }

    /// The prompts as a person reads them: `- <server> | <name> | <arguments> | <description>`,
    /// arguments comma-separated, an optional one marked `?`, `-` for none.
    pub fn prompts_text(&self) -> String {
        let rows = self.prompts.iter().map(|p| {
            let arguments = p.item.arguments.as_deref().unwrap_or_default();
            let arguments: Vec<String> = arguments
                .iter()
                .map(|a| format!("{}{}", a.name, if a.required == Some(true) { "" } else { "?" }))
                .collect();
            let arguments = if arguments.is_empty() { "-".to_string() } else { arguments.join(", ") };
            let description = p.item.description.as_deref().or(p.item.title.as_deref()).unwrap_or("-");
            row(&[&p.server, &p.item.name, &arguments, description])
        });
        section("prompts", rows)
    }
}

/// `<title>:` and its rows, or `<title>: (none)`.
fn section(title: &str, rows: impl Iterator<Item = String>) -> String {
    let rows: String = rows.collect();
    if rows.is_empty() { format!("{title}: (none)\n") } else { format!("{title}:\n{rows}") }
}

/// One `- a | b | …` row of foreign fields, each on one line (CR/LF read as spaces, like the
/// tool view's descriptions; other controls escaped).
fn row(fields: &[&str]) -> String {
    let fields: Vec<String> =
        fields.iter().map(|f| escape_line(f.replace(['\r', '\n'], " ").trim()).into_owned()).collect();
    format!("- {}\n", fields.join(" | "))
}

/// Claims `uri` for `server`, or says why it is left out: blank, listed twice by the same
/// server, or already claimed by an earlier server.
fn claim_uri(claimed: &mut HashMap<String, String>, server: &str, uri: &str, what: &str) -> Option<String> {
    let shown = escape_line(uri);
    let server_shown = escape_line(server);
    if uri.trim().is_empty() {
        return Some(format!("Warning: MCP server {server_shown} returned a {what} that is blank"));
    }
    match claimed.get(uri) {
        Some(owner) if owner == server => {
            Some(format!("Warning: MCP server {server_shown} returned duplicate {what}: {shown}"))
        }
        Some(owner) => Some(format!(
            "Warning: MCP {what} conflict: {shown} already provided by {}; left out of {server_shown}",
            escape_line(owner)
        )),
        None => {
            claimed.insert(uri.to_string(), server.to_string());
            None
        }
    }
}

/// Claims prompt `name` for `server` under the tools' name rules, or says why it is left out.
fn claim_prompt(
    claimed: &mut HashMap<String, String>,
    own: &mut HashSet<String>,
    server: &str,
    name: &str,
) -> Option<String> {
    let server_shown = escape_line(server);
    if name.trim().is_empty() {
        return Some(format!("Warning: MCP server {server_shown} returned a prompt without a name"));
    }
    if let Some(rule) = name_fault(name) {
        return Some(format!(
            "Warning: MCP server {server_shown} returned an invalid prompt name: {} ({rule})",
            show_name(name)
        ));
    }
    let key = name_key(name);
    if !own.insert(key.clone()) {
        return Some(format!("Warning: MCP server {server_shown} returned duplicate prompt: {name}"));
    }
    if let Some(owner) = claimed.get(&key) {
        return Some(format!(
            "Warning: MCP prompt name conflict: {name} already provided by {}; left out of {server_shown}",
            escape_line(owner)
        ));
    }
    claimed.insert(key, server.to_string());
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::PromptArgument;

    fn prompts(names: &[&str]) -> ServerCatalog {
        ServerCatalog {
            prompts: names.iter().map(|n| Prompt::new(*n, None::<String>, None)).collect(),
            ..ServerCatalog::default()
        }
    }

    fn resources(uris: &[&str]) -> ServerCatalog {
        ServerCatalog {
            resources: uris.iter().map(|u| Resource::new(*u, "r")).collect(),
            ..ServerCatalog::default()
        }
    }

    fn names(catalog: &Catalog) -> Vec<(String, String)> {
        catalog.prompts.iter().map(|p| (p.server.clone(), p.item.name.clone())).collect()
    }

    #[test]
    fn first_defined_keeps_a_prompt_name_and_the_other_is_left_out() {
        let (a, b) = (prompts(&["hello", "only-a"]), prompts(&["Hello", "only-b"]));
        let catalog = Catalog::merge([("a", &a), ("b", &b)]);
        assert_eq!(
            names(&catalog),
            [("a", "hello"), ("a", "only-a"), ("b", "only-b")].map(|(s, n)| (s.to_string(), n.to_string()))
        );
        assert_eq!(
            catalog.prompt_warnings,
            ["Warning: MCP prompt name conflict: Hello already provided by a; left out of b"]
        );
    }

    #[test]
    fn bad_and_duplicate_prompt_names_are_left_out_alone() {
        let a = prompts(&["ok", " ", "ok", "bell\u{7}", "ｏｋ"]);
        let catalog = Catalog::merge([("a", &a)]);
        assert_eq!(names(&catalog), [("a".to_string(), "ok".to_string())]);
        assert_eq!(
            catalog.prompt_warnings,
            [
                "Warning: MCP server a returned a prompt without a name",
                "Warning: MCP server a returned duplicate prompt: ok",
                "Warning: MCP server a returned an invalid prompt name: bell\\u{7} (control or format character U+0007)",
                "Warning: MCP server a returned duplicate prompt: ｏｋ",
            ]
        );
    }

    #[test]
    fn reserved_tool_names_do_not_apply_to_prompts() {
        let a = prompts(&["bash", "read_file"]);
        assert_eq!(Catalog::merge([("a", &a)]).prompts.len(), 2);
    }

    #[test]
    fn a_shared_uri_goes_to_the_first_defined_server() {
        let (a, b) = (resources(&["file:///x", "file:///A"]), resources(&["file:///x", "file:///a"]));
        let catalog = Catalog::merge([("a", &a), ("b", &b)]);
        let listed: Vec<(&str, &str)> =
            catalog.resources.iter().map(|r| (r.server.as_str(), r.item.uri.as_str())).collect();
        // URIs compare exactly: `file:///a` is not `file:///A`.
        assert_eq!(listed, [("a", "file:///x"), ("a", "file:///A"), ("b", "file:///a")]);
        assert_eq!(
            catalog.resource_warnings,
            ["Warning: MCP resource URI conflict: file:///x already provided by a; left out of b"]
        );
    }

    #[test]
    fn text_views_escape_server_text() {
        let mut a = resources(&["demo://x\u{1b}[2J"]);
        a.resources[0].mime_type = Some("text/plain".into());
        let arguments = vec![PromptArgument::new("city").with_required(true), PromptArgument::new("state")];
        a.prompts = vec![Prompt::new("weather", Some("Asks\nabout weather"), Some(arguments))];
        let catalog = Catalog::merge([("a", &a)]);
        assert_eq!(
            catalog.resources_text(),
            "resources:\n- a | demo://x\\u{1b}[2J | r | text/plain\ntemplates: (none)\n"
        );
        assert_eq!(catalog.prompts_text(), "prompts:\n- a | weather | city, state? | Asks about weather\n");
        assert_eq!(Catalog::default().prompts_text(), "prompts: (none)\n");
        assert_eq!(catalog.prompts_json()[0]["server"], "a");
        assert_eq!(catalog.resources_json()["resources"][0]["mimeType"], "text/plain");
    }
}
