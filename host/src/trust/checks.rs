//! The definition checks: every rule of [`super::rules`] over every text a server's
//! definitions hold (its instructions, each tool's name, title, description and the
//! descriptions inside its input schema). Pure and deterministic: the same definitions give the
//! same findings in the same order, offline.

use std::collections::{BTreeSet, HashSet};

use regex::RegexSet;
use rmcp::model::Tool;
use serde::Serialize;
use serde_json::Value;

use super::matchers::{self, NameSet};
use super::rules::{Kind, Matcher, Rule, RulesError, Severity, Target, regex_set, rules};
use crate::text::{escape_line, floor_char_boundary, is_bidi_control};

/// Longest excerpt of a match kept in a finding: enough to recognise it, small enough for one
/// line of the text report.
const MAX_EXCERPT_BYTES: usize = 80;

/// Toolport's own name: a description that talks about it talks to the host.
const OWN_NAME: &str = "toolport";

/// One server's definitions as it gave them.
#[derive(Debug, Clone)]
pub struct ServerDefinitions {
    /// The server's name in the config.
    pub name: String,
    /// What it said in `initialize`'s `instructions`, when known.
    pub instructions: Option<String>,
    /// Its tools in the order listed.
    pub tools: Vec<ListedTool>,
}

/// A tool as its server listed it, with the name it has on toolport's surface.
#[derive(Debug, Clone)]
pub struct ListedTool {
    /// Its name on the surface (after the name policy): another name a description may use.
    pub surface_name: String,
    /// The tool exactly as listed.
    pub tool: Tool,
}

/// Where in a text a rule matched, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// One rule matching one place of one definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's id (`TP001`).
    pub rule: String,
    /// How bad it is.
    pub severity: Severity,
    /// The server whose definition it is.
    pub server: String,
    /// The tool (its own name), or none for the server's instructions.
    pub tool: Option<String>,
    /// The text it is in (`description`, `inputSchema.properties.path.description`).
    pub field: String,
    /// Where in that text.
    pub span: Span,
    /// The matched text, clipped and escaped so it is safe to print.
    pub excerpt: String,
    /// The rule's message.
    pub message: String,
}

/// Every finding of the built-in rules over `servers`: by server in the given order, then
/// instructions before tools in listed order, then rule id, field and span. `reserved` are the
/// workspace's reserved tool names (`reservedToolNames`): a definition that names one steers
/// the model towards or away from the host's own tools.
pub fn scan(servers: &[ServerDefinitions], reserved: &[String]) -> Result<Vec<Finding>, RulesError> {
    Ok(scan_with(rules()?, regex_set(), servers, reserved))
}

/// [`scan`] with the given rules; `set` holds their regexes in order, when built (a text it
/// does not match is not searched by each regex again).
pub(super) fn scan_with(
    rules: &[Rule],
    set: Option<&RegexSet>,
    servers: &[ServerDefinitions],
    reserved: &[String],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let names = Names::new(servers, reserved);
    for server in servers {
        let own = own_names(server);
        if let Some(instructions) = &server.instructions {
            let texts = [(Target::Instructions, "instructions".to_string(), instructions.as_str())];
            out.extend(check_unit(rules, set, (&names, &own), &server.name, None, &texts));
        }
        for listed in &server.tools {
            let texts = tool_texts(&listed.tool);
            out.extend(check_unit(rules, set, (&names, &own), &server.name, Some(&listed.tool.name), &texts));
        }
    }
    out
}

/// Findings of every rule over one unit's texts (one tool, or the instructions), in order.
fn check_unit(
    rules: &[Rule],
    set: Option<&RegexSet>,
    names: (&Names, &HashSet<String>),
    server: &str,
    tool: Option<&str>,
    texts: &[(Target, String, &str)],
) -> Vec<Finding> {
    let mut found: Vec<(usize, Finding)> = Vec::new();
    // Which regex rules can match each text, from one pass of the set.
    let possible: Vec<Option<regex::SetMatches>> =
        texts.iter().map(|(_, _, text)| set.map(|set| set.matches(text))).collect();
    let mut regex_index = 0;
    for rule in rules {
        let this_regex = rule.is_regex().then(|| {
            regex_index += 1;
            regex_index - 1
        });
        for (position, (target, field, text)) in texts.iter().enumerate() {
            if !rule.fields.contains(target) {
                continue;
            }
            if let (Some(k), Some(Some(hits))) = (this_regex, possible.get(position))
                && !hits.matched(k)
            {
                continue;
            }
            for span in matches(&rule.matcher, names, text) {
                let finding = Finding {
                    rule: rule.id.clone(),
                    severity: rule.severity,
                    server: server.to_string(),
                    tool: tool.map(str::to_string),
                    field: field.clone(),
                    span,
                    excerpt: excerpt(text, span),
                    message: rule.message.clone(),
                };
                found.push((position, finding));
            }
        }
    }
    found.sort_by(|(a_pos, a), (b_pos, b)| (&a.rule, a_pos, a.span).cmp(&(&b.rule, b_pos, b.span)));
    found.into_iter().map(|(_, finding)| finding).collect()
}

/// Where `matcher` matches in `text`.
/// `names`: the scan's names and the server's own (ASCII lower case), which never count.
fn matches(matcher: &Matcher, (names, own): (&Names, &HashSet<String>), text: &str) -> Vec<Span> {
    let spans: Vec<(usize, usize)> = match matcher {
        Matcher::Regex(regex) => regex.find_iter(text).map(|m| (m.start(), m.end())).collect(),
        Matcher::Builtin(Kind::Bidi) => matchers::char_runs(text, is_bidi_control),
        Matcher::Builtin(Kind::Invisible) => matchers::char_runs(text, matchers::is_invisible),
        Matcher::Builtin(Kind::Tag) => matchers::char_runs(text, matchers::is_tag),
        Matcher::Builtin(Kind::Base64) => matchers::base64_blobs(text),
        Matcher::Builtin(Kind::ShadowingReserved) => matchers::whole_words(text, &names.reserved, own),
        Matcher::Builtin(Kind::ShadowingOther) => matchers::whole_words(text, &names.tools, own),
    };
    spans.into_iter().map(|(start, end)| Span { start, end }).collect()
}

/// The names definitions must not talk about, found with one automaton each for the whole
/// scan (built once, not once a server: hundreds of names). A server's own tools are left out
/// at match time.
struct Names {
    /// Toolport's own name and the reserved tool names that read as identifiers (`read_file`,
    /// not `bash`: "runs a bash command" is an honest description).
    reserved: NameSet,
    /// Every server's tool names (surface and own) that read as identifiers: a plain word
    /// such as `add` or `echo` is too common to mean a tool.
    tools: NameSet,
}

impl Names {
    fn new(servers: &[ServerDefinitions], reserved: &[String]) -> Self {
        let reserved: BTreeSet<String> = reserved
            .iter()
            .map(String::as_str)
            .filter(|name| matchers::is_identifier_like(name))
            .chain([OWN_NAME])
            .map(str::to_string)
            .collect();
        let tools: BTreeSet<String> = servers
            .iter()
            .flat_map(|s| s.tools.iter().flat_map(|t| [t.surface_name.as_str(), t.tool.name.as_ref()]))
            .filter(|name| matchers::is_identifier_like(name))
            .map(str::to_string)
            .collect();
        Self { reserved: NameSet::new(&reserved), tools: NameSet::new(&tools) }
    }
}

/// One server's own tool names (surface and own): naming them is no shadowing.
fn own_names(server: &ServerDefinitions) -> HashSet<String> {
    server
        .tools
        .iter()
        .flat_map(|t| [t.surface_name.to_ascii_lowercase(), t.tool.name.to_ascii_lowercase()])
        .collect()
}

/// A tool's texts with the target each belongs to and its field path.
fn tool_texts(tool: &Tool) -> Vec<(Target, String, &str)> {
    let mut texts = vec![(Target::Name, "name".to_string(), tool.name.as_ref())];
    if let Some(title) = &tool.title {
        texts.push((Target::Title, "title".to_string(), title.as_str()));
    }
    if let Some(title) = tool.annotations.as_ref().and_then(|a| a.title.as_deref()) {
        texts.push((Target::Title, "annotations.title".to_string(), title));
    }
    if let Some(description) = &tool.description {
        texts.push((Target::Description, "description".to_string(), description.as_ref()));
    }
    for (key, value) in tool.input_schema.iter() {
        schema_texts(value, &format!("inputSchema.{key}"), key, &mut texts);
    }
    texts
}

/// Every `description` and `title` string inside a schema, at any depth, with its path.
fn schema_texts<'a>(value: &'a Value, path: &str, key: &str, out: &mut Vec<(Target, String, &'a str)>) {
    match value {
        Value::String(text) if key == "description" || key == "title" => {
            out.push((Target::Parameters, path.to_string(), text.as_str()));
        }
        Value::Object(map) => {
            for (child, value) in map {
                schema_texts(value, &format!("{path}.{child}"), child, out);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                schema_texts(value, &format!("{path}.{i}"), "", out);
            }
        }
        _ => {}
    }
}

/// The matched text, clipped on a character boundary and escaped to one visible line.
fn excerpt(text: &str, span: Span) -> String {
    let matched = &text[span.start..span.end];
    let cut = floor_char_boundary(matched, MAX_EXCERPT_BYTES);
    let ellipsis = if cut < matched.len() { "…" } else { "" };
    format!("{}{ellipsis}", escape_line(&matched[..cut]))
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
