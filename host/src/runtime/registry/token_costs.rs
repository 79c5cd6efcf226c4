//! What the tool surface costs a model's context before anyone types: each tool's definition,
//! in the shape the model is sent, counted under the host's tokenizer (`tokens.rs`), summed per
//! server. `tools --tokens` and the session's `/tools tokens` print it; it is how a person finds
//! the server to filter (`"tools": {"exclude": …}`) or the reason to go lazy.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::text::escape_line;
use crate::tokens;

/// One tool's definition and its cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCost {
    /// The server that lists it.
    pub server: String,
    /// Its final name (after the name policy).
    pub name: String,
    /// Tokens of its shaped definition as compact JSON, the way a request carries it.
    pub tokens: usize,
}

/// One server's tools together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCost {
    /// The server's name.
    pub server: String,
    /// How many of its tools are on the surface.
    pub tools: usize,
    /// The sum of its tools' tokens.
    pub tokens: usize,
}

/// The surface's cost: servers and tools, each sorted dearest first, and the total, which is
/// the sum of the tools' (and of the servers') tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCosts {
    /// The shape the definitions were counted in.
    pub shape: String,
    /// Per server, dearest first (ties by name).
    pub servers: Vec<ServerCost>,
    /// Per tool, dearest first (ties by server, then name).
    pub tools: Vec<ToolCost>,
    /// Every tool's tokens added up.
    pub total: usize,
}

impl TokenCosts {
    /// Counts `tools`: (server, final name, shaped definition) in surface order.
    pub fn count<'a>(shape: &str, tools: impl IntoIterator<Item = (&'a str, &'a str, &'a Value)>) -> Self {
        let mut costs: Vec<ToolCost> = tools
            .into_iter()
            .map(|(server, name, shaped)| ToolCost {
                server: server.to_string(),
                name: name.to_string(),
                tokens: tokens::count(&shaped.to_string()),
            })
            .collect();
        let mut by_server: HashMap<&str, ServerCost> = HashMap::new();
        for cost in &costs {
            let entry = by_server.entry(cost.server.as_str()).or_insert_with(|| ServerCost {
                server: cost.server.clone(),
                tools: 0,
                tokens: 0,
            });
            entry.tools += 1;
            entry.tokens += cost.tokens;
        }
        let mut servers: Vec<ServerCost> = by_server.into_values().collect();
        servers.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.server.cmp(&b.server)));
        costs.sort_by(|a, b| {
            b.tokens.cmp(&a.tokens).then_with(|| a.server.cmp(&b.server)).then_with(|| a.name.cmp(&b.name))
        });
        let total = costs.iter().map(|c| c.tokens).sum();
        Self { shape: shape.to_string(), servers, tools: costs, total }
    }

    /// A server's share of the total, in percent with one decimal (0 for an empty surface).
    fn share(&self, tokens: usize) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        (tokens as f64 * 1000.0 / self.total as f64).round() / 10.0
    }

    /// `tools --tokens --json`: `{tokenizer, shape, total, servers: [{server, tools, tokens,
    /// share}], tools: [{server, name, tokens}]}`.
    pub fn to_json(&self) -> Value {
        let servers: Vec<Value> = self
            .servers
            .iter()
            .map(|s| json!({"server": s.server, "tools": s.tools, "tokens": s.tokens, "share": self.share(s.tokens)}))
            .collect();
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|t| json!({"server": t.server, "name": t.name, "tokens": t.tokens}))
            .collect();
        json!({
            "tokenizer": tokens::TOKENIZER,
            "shape": self.shape,
            "total": self.total,
            "servers": servers,
            "tools": tools,
        })
    }

    /// Two aligned tables (servers, then tools) and the total line.
    pub fn render_text(&self) -> String {
        if self.tools.is_empty() {
            return format!("(no tools) 0 tokens ({}, {} shape)\n", tokens::TOKENIZER, self.shape);
        }
        let servers: Vec<[String; 4]> = self
            .servers
            .iter()
            .map(|s| {
                [
                    escape_line(&s.server).into_owned(),
                    s.tools.to_string(),
                    s.tokens.to_string(),
                    format!("{:.1}%", self.share(s.tokens)),
                ]
            })
            .collect();
        let tools: Vec<[String; 3]> = self
            .tools
            .iter()
            .map(|t| {
                [escape_line(&t.name).into_owned(), escape_line(&t.server).into_owned(), t.tokens.to_string()]
            })
            .collect();
        let mut out = table(["SERVER", "TOOLS", "TOKENS", "SHARE"], &servers);
        out.push('\n');
        out.push_str(&table(["TOOL", "SERVER", "TOKENS"], &tools));
        let plural = if self.tools.len() == 1 { "" } else { "s" };
        out.push_str(&format!(
            "\ntotal: {} tokens in {} tool{plural} ({}, {} shape)\n",
            self.total,
            self.tools.len(),
            tokens::TOKENIZER,
            self.shape
        ));
        out
    }
}

/// Columns padded to their widest cell; the first column left-aligned, the others (numbers)
/// right-aligned.
fn table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            let pad = " ".repeat(width - cell.chars().count());
            match i {
                0 => text.push_str(&format!("{cell}{pad}")),
                1 if N == 3 => text.push_str(&format!("  {cell}{pad}")),
                _ => text.push_str(&format!("  {pad}{cell}")),
            }
        }
        text.truncate(text.trim_end().len());
        text.push('\n');
        text
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Value {
        json!({"type": "function", "function": {"name": name, "description": description}})
    }

    #[test]
    fn each_definition_is_counted_as_its_compact_json_and_the_parts_add_up() {
        let (a, b, c) = (tool("echo", "Echoes"), tool("add", "Adds two numbers together"), tool("x", ""));
        let costs = TokenCosts::count("openai", [("one", "echo", &a), ("two", "add", &b), ("one", "x", &c)]);
        assert_eq!(costs.tools[0].name, "add");
        assert_eq!(costs.tools[0].tokens, tokens::count(&b.to_string()));
        assert_eq!(costs.total, costs.tools.iter().map(|t| t.tokens).sum::<usize>());
        assert_eq!(costs.total, costs.servers.iter().map(|s| s.tokens).sum::<usize>());
        let one = costs.servers.iter().find(|s| s.server == "one").map(|s| (s.tools, s.tokens));
        assert_eq!(one, Some((2, tokens::count(&a.to_string()) + tokens::count(&c.to_string()))));
        let shares: f64 = costs.to_json()["servers"]
            .as_array()
            .map(|s| s.iter().filter_map(|s| s["share"].as_f64()).sum())
            .unwrap_or_default();
        assert!((shares - 100.0).abs() < 0.2, "{shares}");
    }

    #[test]
    fn text_is_two_sorted_tables_and_a_total() {
        let (a, b) = (tool("echo", "Echoes"), tool("add", "Adds two numbers together, carefully"));
        let costs = TokenCosts::count("openai", [("s1", "echo", &a), ("s2", "add", &b)]);
        let text = costs.render_text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("SERVER  TOOLS  TOKENS  SHARE"), "{text}");
        assert!(lines[1].starts_with("s2 "), "dearest first: {text}");
        assert!(lines[4].starts_with("TOOL"), "{text}");
        assert!(lines[5].starts_with("add   s2"), "{text}");
        assert!(
            text.ends_with(&format!("total: {} tokens in 2 tools (o200k_base, openai shape)\n", costs.total))
        );
        assert_eq!(
            TokenCosts::count("openai", []).render_text(),
            "(no tools) 0 tokens (o200k_base, openai shape)\n"
        );
    }
}
