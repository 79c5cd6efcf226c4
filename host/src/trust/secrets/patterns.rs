//! gitleaks' rules (`gitleaks.toml` beside this file, see `gitleaks.NOTICE.md`), read once:
//! each rule's regex, keywords, entropy floor, secret group and allowlists. The file is the
//! maintained pattern set, not ours: an update is replacing it.
//!
//! Cheap to hold: parsing reads the TOML, and one Aho-Corasick automaton over every rule's
//! keywords says which rules a text could match at all (gitleaks' own pre-filter). A rule's
//! regexes are compiled the first time a text has one of its keywords, so a `toolport call`
//! that meets no secret compiles none of the 220. The unit test compiles them all: a rule the
//! `regex` crate cannot read fails the build's tests, never a call.
//!
//! Rules that only match file paths (`path` with no `regex`) or only within paths (`path` with
//! a `regex`, such as PHP or YAML files) do not apply to call arguments and results, which
//! have no path; an allowlist that needs a path never matches, for the same reason.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::bytes::{Regex, RegexBuilder};
use toml_edit::{DocumentMut, Item, Table};

/// The rules file, in the binary: scans run offline and the same everywhere.
const GITLEAKS_TOML: &str = include_str!("gitleaks.toml");

/// gitleaks compiles with Go's RE2 and no size limit to speak of; the `regex` crate's default
/// (10 MB) refuses a few of the generic rules' Unicode classes.
const REGEX_SIZE_LIMIT: usize = 64 * 1024 * 1024;

/// Where an allowlist's regexes look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// The secret (the rule's secret group), the default.
    Secret,
    /// The rule's whole match.
    Match,
    /// The line the match stands on.
    Line,
}

/// What is not a secret even when a rule matches it: known examples, placeholders, words.
pub(super) struct Allowlist {
    target: Target,
    regexes: Vec<String>,
    /// Lower-cased; a secret containing one is allowed.
    stopwords: Vec<String>,
    /// `condition = "AND"` with `paths`: every part must match, and a path never does here.
    needs_path: bool,
    compiled: OnceLock<Vec<Regex>>,
}

impl Allowlist {
    /// Whether this allowlist lets `secret` (matched as `whole`, on `line`) through.
    pub(super) fn allows(&self, secret: &str, whole: &str, line: &str) -> bool {
        if self.needs_path {
            return false;
        }
        let lower = secret.to_ascii_lowercase();
        if self.stopwords.iter().any(|w| lower.contains(w.as_str())) {
            return true;
        }
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        self.regexes().iter().any(|r| r.is_match(target.as_bytes()))
    }

    fn regexes(&self) -> &[Regex] {
        self.compiled.get_or_init(|| self.regexes.iter().filter_map(|r| compile_or_warn(r)).collect())
    }
}

/// One rule of the file.
pub(super) struct Pattern {
    /// gitleaks' id (`aws-access-token`): what notes and the audit trail name.
    pub id: String,
    regex: String,
    /// Shannon entropy the secret must exceed, when the rule sets one.
    pub entropy: Option<f64>,
    /// The capture group that is the secret; else the first that matched, else the match.
    pub secret_group: Option<usize>,
    pub allowlists: Vec<Allowlist>,
    compiled: OnceLock<Option<Regex>>,
}

impl Pattern {
    /// The rule's regex, compiled on first use (`None`, warned about, if it cannot be: the
    /// unit test keeps that from shipping).
    pub(super) fn regex(&self) -> Option<&Regex> {
        self.compiled.get_or_init(|| compile_or_warn(&self.regex)).as_ref()
    }
}

/// Every applicable rule, the keyword automaton over them and the global allowlist.
pub(super) struct PatternSet {
    pub patterns: Vec<Pattern>,
    keywords: Option<AhoCorasick>,
    /// For each keyword of the automaton, the index of its rule.
    keyword_rule: Vec<usize>,
    pub global: Allowlist,
}

impl PatternSet {
    /// Which rules `text` could match: those with a keyword in it, ASCII case ignored, as
    /// gitleaks lower-cases both. In the rules' order, each once; nothing is allocated when
    /// no keyword is in `text` (most texts).
    pub(super) fn candidates(&self, text: &str) -> Vec<&Pattern> {
        let Some(keywords) = &self.keywords else { return Vec::new() };
        let mut rules: Vec<usize> = keywords
            .find_overlapping_iter(text)
            .filter_map(|m| self.keyword_rule.get(m.pattern().as_usize()).copied())
            .collect();
        rules.sort_unstable();
        rules.dedup();
        rules.into_iter().filter_map(|rule| self.patterns.get(rule)).collect()
    }
}

/// The rules, read on first use. The file is ours at build time, so a malformed one is a bug
/// caught by the unit tests; at run time it would mean an empty set (and a warning).
pub(super) fn patterns() -> &'static PatternSet {
    static SET: LazyLock<PatternSet> = LazyLock::new(|| {
        parse(GITLEAKS_TOML).unwrap_or_else(|e| {
            tracing::warn!("the secret patterns cannot be read: {e}");
            empty()
        })
    });
    &SET
}

fn empty() -> PatternSet {
    PatternSet {
        patterns: Vec::new(),
        keywords: None,
        keyword_rule: Vec::new(),
        global: allowlist(&Table::new()),
    }
}

/// Reads gitleaks' TOML: `[[rules]]` with a `regex` and no `path`, `[allowlist]` the global.
pub(super) fn parse(text: &str) -> Result<PatternSet, String> {
    let doc: DocumentMut = text.parse().map_err(|e| format!("gitleaks.toml: {e}"))?;
    let rules = doc
        .get("rules")
        .and_then(Item::as_array_of_tables)
        .ok_or_else(|| "gitleaks.toml: no [[rules]]".to_string())?;
    let mut patterns = Vec::new();
    let mut words = Vec::new();
    let mut keyword_rule = Vec::new();
    for rule in rules.iter() {
        let id = rule.get("id").and_then(Item::as_str).ok_or("gitleaks.toml: a rule without an id")?;
        let (Some(regex), None) = (rule.get("regex").and_then(Item::as_str), rule.get("path")) else {
            continue;
        };
        let keywords = strings(rule.get("keywords"));
        if keywords.is_empty() {
            return Err(format!("gitleaks.toml: rule {id} has no keywords"));
        }
        for word in keywords {
            words.push(word.to_ascii_lowercase());
            keyword_rule.push(patterns.len());
        }
        let allowlists = match rule.get("allowlists").and_then(Item::as_array_of_tables) {
            Some(lists) => lists.iter().map(allowlist).collect(),
            None => Vec::new(),
        };
        patterns.push(Pattern {
            id: id.to_string(),
            regex: regex.to_string(),
            entropy: rule.get("entropy").and_then(number),
            secret_group: rule
                .get("secretGroup")
                .and_then(Item::as_integer)
                .and_then(|g| usize::try_from(g).ok())
                .filter(|g| *g > 0),
            allowlists,
            compiled: OnceLock::new(),
        });
    }
    let keywords = aho_corasick::AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .build(&words)
        .map_err(|e| format!("gitleaks.toml: keywords: {e}"))?;
    let global = doc
        .get("allowlist")
        .and_then(Item::as_table)
        .map(allowlist)
        .unwrap_or_else(|| allowlist(&Table::new()));
    Ok(PatternSet { patterns, keywords: Some(keywords), keyword_rule, global })
}

fn allowlist(table: &Table) -> Allowlist {
    let target = match table.get("regexTarget").and_then(Item::as_str) {
        Some("match") => Target::Match,
        Some("line") => Target::Line,
        _ => Target::Secret,
    };
    let and = table.get("condition").and_then(Item::as_str).is_some_and(|c| c.eq_ignore_ascii_case("and"));
    Allowlist {
        target,
        regexes: strings(table.get("regexes")),
        stopwords: strings(table.get("stopwords")).into_iter().map(|w| w.to_ascii_lowercase()).collect(),
        needs_path: and && table.get("paths").is_some(),
        compiled: OnceLock::new(),
    }
}

fn strings(item: Option<&Item>) -> Vec<String> {
    item.and_then(Item::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str()).map(str::to_string).collect())
        .unwrap_or_default()
}

/// `entropy = 3` and `entropy = 3.5` both.
fn number(item: &Item) -> Option<f64> {
    item.as_float().or_else(|| item.as_integer().map(|i| i as f64))
}

/// A gitleaks regex under the `regex` crate, read as RE2 reads it: `\w`, `\d`, `\s`, `\b` and
/// `(?i)` are ASCII (Unicode mode off, over bytes). Besides being gitleaks' meaning, it is
/// what keeps the generic rule cheap: its leading `[\w.-]{0,50}?` over Unicode classes made
/// the lazy DFA give up, about 500 times slower on a 100 KB result. A match can then end
/// inside a multi-byte character (`[^"]` takes one byte); the scanner widens it to whole ones.
pub(super) fn compile(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&literal_braces(source)).unicode(false).size_limit(REGEX_SIZE_LIMIT).build()
}

/// `source` with every `{` that does not open a repetition (`{2}`, `{2,}`, `{2,5}`) escaped.
/// Go's RE2 reads such a brace as itself (`${VAR}`, `{{ .x }}` in gitleaks' allowlists); the
/// `regex` crate refuses it. The one difference of syntax the file runs into; the unit test
/// would name any other.
fn literal_braces(source: &str) -> std::borrow::Cow<'_, str> {
    if !source.contains('{') {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len() + 8);
    let mut chars = source.char_indices().peekable();
    let mut in_class = false;
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first in a class (after an optional `^`) is itself.
                if let Some(&(_, '^')) = chars.peek() {
                    out.push('^');
                    chars.next();
                }
                if let Some(&(_, ']')) = chars.peek() {
                    out.push(']');
                    chars.next();
                }
                continue;
            }
            ']' if in_class => in_class = false,
            '{' if !in_class && !opens_repetition(&source[at + 1..]) => {
                out.push_str("\\{");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `rest` (what follows a `{`) is `n}`, `n,}` or `n,m}`.
fn opens_repetition(rest: &str) -> bool {
    let Some(end) = rest.find('}') else { return false };
    let inner = &rest[..end];
    let (low, high) = inner.split_once(',').unwrap_or((inner, "0"));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    !low.is_empty() && digits(low) && digits(high)
}

fn compile_or_warn(source: &str) -> Option<Regex> {
    compile(source).map_err(|e| tracing::warn!("a secret pattern does not compile: {e}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_reads_and_every_rule_and_allowlist_compiles() {
        let set = match parse(GITLEAKS_TOML) {
            Ok(set) => set,
            Err(e) => panic!("{e}"),
        };
        // 222 rules in v8.30.1, of which 5 need a file path.
        assert_eq!(set.patterns.len(), 217);
        let mut broken = Vec::new();
        for p in &set.patterns {
            if let Err(e) = compile(&p.regex) {
                broken.push(format!("{}: {e}", p.id));
            }
            for list in &p.allowlists {
                for r in &list.regexes {
                    if let Err(e) = compile(r) {
                        broken.push(format!("{} (allowlist): {e}", p.id));
                    }
                }
            }
        }
        for r in &set.global.regexes {
            if let Err(e) = compile(r) {
                broken.push(format!("global allowlist: {e}"));
            }
        }
        assert!(broken.is_empty(), "rules the regex crate cannot compile:\n{}", broken.join("\n"));
    }

    #[test]
    fn braces_that_open_no_repetition_are_literal_as_in_re2() {
        assert_eq!(literal_braces(r"^\${(?:[A-Z_]+)}$"), r"^\$\{(?:[A-Z_]+)}$");
        assert_eq!(literal_braces(r"a{2}b{2,}c{2,5}"), r"a{2}b{2,}c{2,5}");
        assert_eq!(literal_braces(r"[{]\{x{{y"), r"[{]\{x\{\{y");
        assert!(compile(r"^\$(?:\d+|{\d+})$").is_ok_and(|r| r.is_match(b"${1}")));
    }

    #[test]
    fn keywords_pick_the_rules_to_run() {
        let set = patterns();
        let ids = |text: &str| set.candidates(text).iter().map(|p| p.id.clone()).collect::<Vec<_>>();
        assert!(ids("key: AKIA0000").contains(&"aws-access-token".to_string()));
        assert!(ids("token ghp_x").contains(&"github-pat".to_string()));
        assert!(ids("42").is_empty());
    }
}
