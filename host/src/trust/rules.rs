//! The rules of the definition checks, read from `rules.json` beside this file: data rather
//! than code, so a rule is added with its test case and no change to the matcher, and so the
//! tests can read the same list to require a case for every rule.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};

/// The rules file, in the binary: checks run offline and the same everywhere.
const RULES_JSON: &str = include_str!("rules.json");

/// How bad a finding is; ordered, so `--fail-on` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth a look.
    Low,
    /// Suspicious.
    Medium,
    /// What a poisoned definition does.
    High,
}

impl Severity {
    /// The word used in the rules file, the text output and `--fail-on`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// Which text of a definition a rule looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Target {
    /// A tool's name.
    Name,
    /// A tool's `title` and its annotations' title.
    Title,
    /// A tool's description.
    Description,
    /// The server's instructions.
    Instructions,
    /// The descriptions and titles inside a tool's input and output schemas, at any depth, and
    /// a prompt argument's: prose about a parameter.
    Parameters,
    /// Every other string and every key of a tool's schemas (`default`, `enum`, `examples`,
    /// property names), and a prompt argument's name: data the model reads all the same.
    Schema,
}

/// A matcher built into the checks: what a regex says badly (character classes by Unicode
/// property, blobs by their mix of characters, names known only at scan time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    /// Explicit bidi formatting characters.
    Bidi,
    /// Zero-width and other invisible format or control characters (not bidi, not tags), but
    /// not inside a word.
    Invisible,
    /// The same inside a word (between two letters of an alphabet written with spaces): it
    /// splits a word so that a rule in plain text does not see it.
    InvisibleInWord,
    /// Unicode tag characters (U+E0000–U+E007F).
    Tag,
    /// A long run of base64 that mixes cases and digits.
    Base64,
    /// `toolport` or a reserved tool name that is not the server's own.
    ShadowingReserved,
    /// Another server's tool, by its final or original name.
    ShadowingOther,
}

/// How a rule finds its matches.
#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    /// A compiled regular expression.
    Regex(Regex),
    /// A built-in matcher.
    Builtin(Kind),
}

/// One rule of `rules.json`.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Stable id (`TP001`), what findings and SARIF name.
    pub id: String,
    /// Short name (`bidi-control`).
    pub name: String,
    /// How bad a match is.
    pub severity: Severity,
    /// The texts it looks at.
    pub(crate) fields: Vec<Target>,
    /// How it matches.
    pub(crate) matcher: Matcher,
    /// One line saying what a match means.
    pub message: String,
}

impl Rule {
    /// Whether it matches by a regex (one of [`regex_set`]'s patterns).
    pub(crate) fn is_regex(&self) -> bool {
        matches!(self.matcher, Matcher::Regex(_))
    }
}

/// A rule as written in the file, before its regex is compiled.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    name: String,
    severity: Severity,
    fields: Vec<Target>,
    #[serde(default)]
    regex: Option<String>,
    #[serde(default)]
    kind: Option<Kind>,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    /// For the people editing the file; not read.
    #[serde(default, rename = "comment")]
    _comment: Option<String>,
    rules: Vec<RawRule>,
}

/// `rules.json` could not be read: a build shipped a broken file (its unit test fails first).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the built-in scan rules (host/src/trust/rules.json) are malformed: {0}")]
pub struct RulesError(String);

static RULES: LazyLock<Result<Vec<Rule>, RulesError>> = LazyLock::new(|| parse(RULES_JSON));

/// Every regex of the built-in rules in one set, in rule order: one pass over a text says
/// which of them can match, so a text none matches (nearly all) is read once, not once a rule.
/// `None` if the set cannot be built (it can whenever each regex can; then each runs alone).
static REGEX_SET: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    let rules = rules().ok()?;
    RegexSet::new(rules.iter().filter_map(|r| match &r.matcher {
        Matcher::Regex(regex) => Some(regex.as_str()),
        Matcher::Builtin(_) => None,
    }))
    .ok()
});

/// The built-in rules' regexes as one set, the `k`-th pattern being the `k`-th regex rule.
pub(crate) fn regex_set() -> Option<&'static RegexSet> {
    REGEX_SET.as_ref()
}

/// The built-in rules, in file order, parsed once.
pub fn rules() -> Result<&'static [Rule], RulesError> {
    RULES.as_ref().map(Vec::as_slice).map_err(Clone::clone)
}

/// Reads a rules file: every rule needs a unique id and exactly one of `regex` and `kind`.
fn parse(text: &str) -> Result<Vec<Rule>, RulesError> {
    let file: RawFile = serde_json::from_str(text).map_err(|e| RulesError(e.to_string()))?;
    let mut rules: Vec<Rule> = Vec::with_capacity(file.rules.len());
    for raw in file.rules {
        if rules.iter().any(|r| r.id == raw.id) {
            return Err(RulesError(format!("rule {} is defined twice", raw.id)));
        }
        let matcher = match (raw.regex, raw.kind) {
            (Some(pattern), None) => Matcher::Regex(
                Regex::new(&pattern).map_err(|e| RulesError(format!("rule {}: bad regex: {e}", raw.id)))?,
            ),
            (None, Some(kind)) => Matcher::Builtin(kind),
            _ => return Err(RulesError(format!("rule {}: needs exactly one of `regex` and `kind`", raw.id))),
        };
        rules.push(Rule {
            id: raw.id,
            name: raw.name,
            severity: raw.severity,
            fields: raw.fields,
            matcher,
            message: raw.message,
        });
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_rules_parse() {
        let rules = rules().unwrap();
        assert!(rules.len() >= 14);
        assert!(rules.iter().all(|r| r.id.starts_with("TP") && !r.message.is_empty()));
    }

    #[test]
    fn a_malformed_file_is_an_error_that_names_the_rule() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        let rule = r#"{"id":"TP1","name":"n","severity":"low","fields":["name"],"message":"m""#;
        assert_eq!(
            err(&format!(r#"{{"rules":[{rule},"regex":"("}}]}}"#)).lines().next().unwrap(),
            "the built-in scan rules (host/src/trust/rules.json) are malformed: rule TP1: bad regex: regex parse error:"
        );
        assert!(
            err(&format!(r#"{{"rules":[{rule}}}]}}"#))
                .ends_with("rule TP1: needs exactly one of `regex` and `kind`")
        );
        assert!(
            err(&format!(r#"{{"rules":[{rule},"kind":"tag"}},{rule},"kind":"tag"}}]}}"#))
                .ends_with("rule TP1 is defined twice")
        );
        assert!(err(r#"{"rules":[{"id":"TP1","severity":"dire"}]}"#).contains("unknown variant `dire`"));
    }
}
