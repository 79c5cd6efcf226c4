//! The lazy surface's search (`search_tools`): BM25 over each tool of the registry — its final
//! name, title, description, parameter names and server — so a model can find the one tool it
//! needs among hundreds without holding their definitions. Pure: built from records, read only;
//! whoever serves the lazy surface builds a new index when the runtime's tool revision changes.
//!
//! Tool names are identifiers (`get_weather`, `readFile`, `memory.search-nodes`), so they are
//! split into words before the English tokenizer of the `bm25` crate (lower case, stop words,
//! Snowball stemming) sees them: "weather" then finds `get_weather`, "numbers" finds "Adds two
//! numbers".

use std::borrow::Borrow;

use bm25::{DefaultTokenizer, Document, Language, SearchEngine, SearchEngineBuilder, Tokenizer};
use serde_json::Value;

use super::record::ToolRecord;

/// Longest one-line description a hit carries, in characters.
const HIT_DESCRIPTION_CHARS: usize = 160;

/// How many times a tool's name words count: a tool is first of all what it is called.
const NAME_WEIGHT: usize = 2;

/// One tool found.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolHit {
    /// Its final name: what `describe_tool` and `call_tool` take.
    pub name: String,
    /// The server that lists it.
    pub server: String,
    /// The first line of its description (or its title), clipped.
    pub description: String,
    /// The BM25 score: higher is a better match; only comparable within one search.
    pub score: f32,
}

/// The search index over one registry snapshot.
pub struct ToolIndex {
    /// Document ids are places on the surface; tokens are embedded as the crate's `u32` hashes.
    engine: SearchEngine<u32, u32, ToolTokenizer>,
    /// Per document id (the record's place on the surface): name, server, one-line description.
    tools: Vec<(String, String, String)>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex").field("tools", &self.tools.len()).finish()
    }
}

impl ToolIndex {
    /// Indexes `records` (the surface, in its order).
    pub fn build<R: Borrow<ToolRecord>>(records: &[R]) -> ToolIndex {
        let records = records.iter().map(Borrow::borrow);
        let documents: Vec<Document<u32>> =
            records.clone().enumerate().map(|(i, r)| Document::new(i as u32, document_text(r))).collect();
        let tools = records.map(|r| (r.name.clone(), r.server.clone(), one_line(r))).collect();
        // An empty corpus has no average length to fit; any positive one does for no documents.
        let engine = if documents.is_empty() {
            SearchEngineBuilder::<u32, u32, ToolTokenizer>::with_avgdl(1.0).build()
        } else {
            SearchEngineBuilder::with_tokenizer_and_documents(ToolTokenizer::default(), documents).build()
        };
        ToolIndex { engine, tools }
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether it holds no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The `limit` best matches of `query`, best first; equal scores in surface order. A query
    /// with no word any tool has finds nothing.
    pub fn search(&self, query: &str, limit: usize) -> Vec<ToolHit> {
        let mut found = self.engine.search(query, None);
        found.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.document.id.cmp(&b.document.id)));
        found
            .into_iter()
            .filter_map(|hit| {
                let (name, server, description) = self.tools.get(hit.document.id as usize)?;
                Some(ToolHit {
                    name: name.clone(),
                    server: server.clone(),
                    description: description.clone(),
                    score: hit.score,
                })
            })
            .take(limit)
            .collect()
    }
}

/// What is searched of a record: its name (weighted), title, description, parameter names
/// and server name.
fn document_text(record: &ToolRecord) -> String {
    let tool = &record.tool;
    let mut parts: Vec<String> = Vec::new();
    for _ in 0..NAME_WEIGHT {
        parts.push(record.name.clone());
    }
    parts.extend(tool.title.clone());
    parts.extend(tool.description.as_ref().map(|d| d.to_string()));
    if let Some(Value::Object(properties)) = tool.input_schema.get("properties") {
        parts.extend(properties.keys().cloned());
    }
    parts.push(record.server.clone());
    parts.join("\n")
}

/// The first line of the description (else the title), clipped to [`HIT_DESCRIPTION_CHARS`].
fn one_line(record: &ToolRecord) -> String {
    let tool = &record.tool;
    let text = tool.description.as_deref().filter(|d| !d.trim().is_empty()).or(tool.title.as_deref());
    let line = text.unwrap_or_default().trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() <= HIT_DESCRIPTION_CHARS {
        return line.to_string();
    }
    let mut clipped: String = line.chars().take(HIT_DESCRIPTION_CHARS - 1).collect();
    clipped.push('…');
    clipped
}

/// Identifiers split into words, then the `bm25` crate's English tokenizer (lower case, stop
/// words, stemming); queries and documents go through the same one.
struct ToolTokenizer {
    words: DefaultTokenizer,
}

impl Default for ToolTokenizer {
    fn default() -> Self {
        Self { words: DefaultTokenizer::new(Language::English) }
    }
}

impl Tokenizer for ToolTokenizer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        self.words.tokenize(&split_identifiers(input_text))
    }
}

/// `get_weather` → `get weather`, `readFile` → `read File`, `HTTPServer` → `HTTP Server`,
/// `a.b-c` → `a b c`: word breaks where an identifier has them, the rest of the text kept.
fn split_identifiers(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '_' | '-' | '.' | '/' | ':') {
            out.push(' ');
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let before = chars[i - 1];
            let after = chars.get(i + 1).copied();
            let lower_then_upper = before.is_lowercase() || before.is_ascii_digit();
            let acronym_end = before.is_uppercase() && after.is_some_and(char::is_lowercase);
            if lower_then_upper || acronym_end {
                out.push(' ');
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::Tool;
    use serde_json::json;

    use super::*;

    fn record(server: &str, name: &str, description: &str, params: &[&str]) -> ToolRecord {
        let properties: serde_json::Map<String, Value> =
            params.iter().map(|p| (p.to_string(), json!({"type": "string"}))).collect();
        let schema = json!({"type": "object", "properties": properties});
        let schema = schema.as_object().cloned().unwrap_or_default();
        ToolRecord::listed(server, Tool::new(name.to_string(), description.to_string(), Arc::new(schema)))
    }

    fn tokens(text: &str) -> Vec<String> {
        ToolTokenizer::default().tokenize(text)
    }

    #[test]
    fn identifiers_split_on_separators_and_case() {
        assert_eq!(split_identifiers("get_weather"), "get weather");
        assert_eq!(split_identifiers("readFile"), "read File");
        assert_eq!(split_identifiers("HTTPServer"), "HTTP Server");
        assert_eq!(split_identifiers("memory.search-nodes"), "memory search nodes");
        assert_eq!(split_identifiers("base64Decode"), "base64 Decode");
        assert_eq!(split_identifiers("Adds two numbers"), "Adds two numbers");
    }

    #[test]
    fn tokens_are_lower_case_stemmed_and_without_stop_words() {
        assert_eq!(tokens("get_weather"), ["get", "weather"]);
        assert_eq!(tokens("Adds the two numbers"), ["add", "two", "number"]);
        assert_eq!(tokens("searchNodes"), ["search", "node"]);
        assert!(tokens("").is_empty());
    }

    #[test]
    fn a_word_of_the_name_finds_the_tool() {
        let index = ToolIndex::build(&[
            record("w", "get_weather", "Current conditions for a city", &["city"]),
            record("m", "add", "Adds two numbers", &["a", "b"]),
            record("f", "readFile", "Reads a file's text", &["path"]),
        ]);
        assert_eq!(index.len(), 3);
        let first = |q: &str| index.search(q, 1).first().map(|h| h.name.clone());
        assert_eq!(first("weather").as_deref(), Some("get_weather"));
        assert_eq!(first("add two numbers together").as_deref(), Some("add"));
        assert_eq!(first("read a file").as_deref(), Some("readFile"));
        assert_eq!(first("city").as_deref(), Some("get_weather"), "parameter names are searched");
        let hit = &index.search("weather", 5)[0];
        assert_eq!((hit.server.as_str(), hit.description.as_str()), ("w", "Current conditions for a city"));
        assert!(hit.score > 0.0);
        assert!(index.search("zebra", 5).is_empty());
    }

    #[test]
    fn hits_are_ranked_limited_and_ties_keep_surface_order() {
        let index = ToolIndex::build(&[
            record("a", "tool_1", "Generated tool", &[]),
            record("a", "tool_2", "Generated tool", &[]),
            record("a", "tool_3", "Generated tool", &[]),
        ]);
        let names: Vec<String> = index.search("generated", 2).into_iter().map(|h| h.name).collect();
        assert_eq!(names, ["tool_1", "tool_2"]);
    }

    #[test]
    fn an_empty_registry_finds_nothing() {
        let index = ToolIndex::build::<ToolRecord>(&[]);
        assert!(index.is_empty());
        assert!(index.search("anything", 5).is_empty());
    }

    #[test]
    fn a_hit_carries_one_clipped_line() {
        let long = format!("{}\nsecond line", "word ".repeat(60));
        let index = ToolIndex::build(&[record("s", "t", &long, &[])]);
        let hit = &index.search("word", 1)[0];
        assert!(!hit.description.contains('\n'));
        assert_eq!(hit.description.chars().count(), HIT_DESCRIPTION_CHARS);
        assert!(hit.description.ends_with('…'));
    }
}
