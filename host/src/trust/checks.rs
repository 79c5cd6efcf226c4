//! The definition checks: every rule of [`super::rules`] over every text a server's
//! definitions hold (`definitions.rs` cuts them out: instructions, tools with both schemas,
//! prompts, resources and templates), each read as a model reads it (`normalise.rs`). Pure and
//! deterministic: the same definitions give the same findings in the same order, offline.

use std::collections::{BTreeSet, HashSet};

use regex::RegexSet;
use serde::Serialize;

use super::definitions::{
    ServerDefinitions, Text, instructions_texts, prompt_texts, resource_texts, template_texts, tool_texts,
};
use super::matchers::{self, NameSet};
use super::normalise::Normalised;
use super::rules::{Kind, Matcher, Rule, RulesError, Severity, regex_set, rules};
use crate::text::{escape_line, floor_char_boundary, is_bidi_control};

/// Longest excerpt of a match kept in a finding: enough to recognise it, small enough for one
/// line of the text report.
const MAX_EXCERPT_BYTES: usize = 80;

/// Toolport's own name: a description that talks about it talks to the host.
const OWN_NAME: &str = "toolport";

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
    /// The tool (its own name) the finding is in; none for the server's instructions, a
    /// prompt or a resource.
    pub tool: Option<String>,
    /// The prompt (its name) the finding is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The resource (its URI) the finding is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The resource template (its URI template) the finding is in.
    #[serde(rename = "resourceTemplate", skip_serializing_if = "Option::is_none")]
    pub resource_template: Option<String>,
    /// The text it is in (`description`, `inputSchema.properties.path.description`; a key of a
    /// schema object is `inputSchema.properties.<key> (key)`).
    pub field: String,
    /// Where in that text, in bytes of the text as the server sent it.
    pub span: Span,
    /// The matched text as the server sent it, clipped and escaped so it is safe to print.
    pub excerpt: String,
    /// The same text as the rule read it, when that differs (invisible characters dropped,
    /// look-alikes read as ASCII): what shows why `іgnore` with a Cyrillic `і` matched.
    #[serde(rename = "readAs", skip_serializing_if = "Option::is_none")]
    pub read_as: Option<String>,
    /// The rule's message.
    pub message: String,
}

/// What one unit of a server's definitions is: the findings name it.
#[derive(Clone, Copy)]
enum Subject<'a> {
    Instructions,
    Tool(&'a str),
    Prompt(&'a str),
    Resource(&'a str),
    Template(&'a str),
}

/// Every finding of the built-in rules over `servers`: by server in the given order, then its
/// instructions, tools, prompts, resources and resource templates in listed order, then rule
/// id, field and span. `reserved` are the workspace's reserved tool names
/// (`reservedToolNames`): a definition that names one steers the model towards or away from
/// the host's own tools.
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
        let check = |subject: Subject<'_>, texts: &[Text<'_>]| {
            check_unit(rules, set, (&names, &own), &server.name, subject, texts)
        };
        out.extend(check(Subject::Instructions, &instructions_texts(server)));
        for listed in &server.tools {
            out.extend(check(Subject::Tool(&listed.tool.name), &tool_texts(&listed.tool)));
        }
        for prompt in &server.prompts {
            out.extend(check(Subject::Prompt(&prompt.name), &prompt_texts(prompt)));
        }
        for resource in &server.resources {
            out.extend(check(Subject::Resource(&resource.uri), &resource_texts(resource)));
        }
        for template in &server.templates {
            out.extend(check(Subject::Template(&template.uri_template), &template_texts(template)));
        }
    }
    out
}

/// Findings of every rule over one unit's texts (one tool, prompt, resource, or the
/// instructions), in order.
fn check_unit(
    rules: &[Rule],
    set: Option<&RegexSet>,
    names: (&Names, &HashSet<String>),
    server: &str,
    subject: Subject<'_>,
    texts: &[Text<'_>],
) -> Vec<Finding> {
    let mut found: Vec<(usize, Finding)> = Vec::new();
    // Each text as the rules read it, once.
    let read: Vec<Normalised<'_>> = texts.iter().map(|(_, _, text)| Normalised::new(text)).collect();
    // Which regex rules can match each text, from one pass of the set.
    let possible: Vec<Option<regex::SetMatches>> =
        read.iter().map(|read| set.map(|set| set.matches(&read.text))).collect();
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
            let Some(read) = read.get(position) else { continue };
            for (span, read_span) in matches(&rule.matcher, names, text, read) {
                let original = &text[span.start..span.end];
                let read_as = read_span
                    .map(|(start, end)| &read.text[start..end])
                    .filter(|read_as| *read_as != original)
                    .map(clip);
                let [tool, prompt, resource, resource_template] = subject.names();
                let finding = Finding {
                    rule: rule.id.clone(),
                    severity: rule.severity,
                    server: server.to_string(),
                    tool,
                    prompt,
                    resource,
                    resource_template,
                    field: field.clone(),
                    span,
                    excerpt: clip(original),
                    read_as,
                    message: rule.message.clone(),
                };
                found.push((position, finding));
            }
        }
    }
    found.sort_by(|(a_pos, a), (b_pos, b)| (&a.rule, a_pos, a.span).cmp(&(&b.rule, b_pos, b.span)));
    found.into_iter().map(|(_, finding)| finding).collect()
}

impl Subject<'_> {
    /// `[tool, prompt, resource, resource template]` of a finding, one of them set.
    fn names(self) -> [Option<String>; 4] {
        let name = |s: &str| Some(s.to_string());
        match self {
            Self::Instructions => [None, None, None, None],
            Self::Tool(tool) => [name(tool), None, None, None],
            Self::Prompt(prompt) => [None, name(prompt), None, None],
            Self::Resource(uri) => [None, None, name(uri), None],
            Self::Template(uri) => [None, None, None, name(uri)],
        }
    }
}

/// Where `matcher` matches in `text` (spans of the original), and for the rules that read the
/// normalised text `read`, where in that.
/// `names`: the scan's names and the server's own (ASCII lower case), which never count.
fn matches(
    matcher: &Matcher,
    (names, own): (&Names, &HashSet<String>),
    text: &str,
    read: &Normalised<'_>,
) -> Vec<(Span, Option<(usize, usize)>)> {
    // The character rules look at the characters sent (the normalised text has none of
    // them); the others read the text as the model does, their spans mapped back.
    let sent = |spans: Vec<(usize, usize)>| {
        spans.into_iter().map(|(start, end)| (Span { start, end }, None)).collect()
    };
    let read_as = |spans: Vec<(usize, usize)>| {
        spans
            .into_iter()
            .map(|at| {
                let (start, end) = read.original(at);
                (Span { start, end }, Some(at))
            })
            .collect()
    };
    let normalised = read.text.as_ref();
    match matcher {
        Matcher::Builtin(Kind::Bidi) => sent(matchers::char_runs(text, is_bidi_control)),
        Matcher::Builtin(Kind::Invisible) => sent(matchers::invisible_runs(text).1),
        Matcher::Builtin(Kind::InvisibleInWord) => sent(matchers::invisible_runs(text).0),
        Matcher::Builtin(Kind::Tag) => sent(matchers::char_runs(text, matchers::is_tag)),
        Matcher::Regex(regex) => read_as(regex.find_iter(normalised).map(|m| (m.start(), m.end())).collect()),
        Matcher::Builtin(Kind::Base64) => read_as(matchers::base64_blobs(normalised)),
        Matcher::Builtin(Kind::ShadowingReserved) => {
            read_as(matchers::whole_words(normalised, &names.reserved, own))
        }
        Matcher::Builtin(Kind::ShadowingOther) => {
            read_as(matchers::whole_words(normalised, &names.tools, own))
        }
    }
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

/// A matched text, clipped on a character boundary and escaped to one visible line.
fn clip(matched: &str) -> String {
    let cut = floor_char_boundary(matched, MAX_EXCERPT_BYTES);
    let ellipsis = if cut < matched.len() { "…" } else { "" };
    format!("{}{ellipsis}", escape_line(&matched[..cut]))
}

#[cfg(test)]
#[path = "checks_tests.rs"]
mod tests;
