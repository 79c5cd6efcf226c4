//! Name patterns for `search_files` and `search_content`'s `include`: a glob (`*`, `?`,
//! `[a-z]`, `[!x]`, and `**` across folders when the pattern has a `/`), or, without any glob
//! character, a case-insensitive substring of the name.

/// Patterns longer than this are refused: matching is backtracking.
const MAX_PATTERN: usize = 256;
/// `**` segments allowed in one pattern (each multiplies the work on deep paths).
const MAX_DOUBLE_STARS: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Char(char),
    AnyChar,
    Star,
    Class { negated: bool, ranges: Vec<(char, char)> },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    DoubleStar,
    Tokens(Vec<Token>),
}

#[derive(Debug, Clone)]
pub enum NamePattern {
    /// Lower-cased.
    Substring(String),
    /// Matched against the file name alone.
    Name(Vec<Token>),
    /// Matched against the path relative to the search folder, `/`-separated.
    Path(Vec<Segment>),
}

impl NamePattern {
    pub fn parse(pattern: &str) -> Result<Self, String> {
        if pattern.is_empty() {
            return Err("the pattern is empty".to_string());
        }
        if pattern.chars().count() > MAX_PATTERN {
            return Err(format!("the pattern is longer than {MAX_PATTERN} characters"));
        }
        if !pattern.contains(['*', '?', '[']) {
            return Ok(Self::Substring(pattern.to_lowercase()));
        }
        if !pattern.contains('/') {
            return Ok(Self::Name(tokens(pattern)));
        }
        let segments: Vec<Segment> = pattern
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| if s == "**" { Segment::DoubleStar } else { Segment::Tokens(tokens(s)) })
            .collect();
        if segments.iter().filter(|s| **s == Segment::DoubleStar).count() > MAX_DOUBLE_STARS {
            return Err(format!("the pattern has more than {MAX_DOUBLE_STARS} '**'"));
        }
        Ok(Self::Path(segments))
    }

    /// Whether [`Self::matches`] reads the entry's relative path (a pattern with `/`); when
    /// not, a walk need not make one for every entry.
    pub fn needs_relative(&self) -> bool {
        matches!(self, Self::Path(_))
    }

    /// Whether the entry `relative` (to the search folder, `/`-separated) named `name` matches.
    pub fn matches(&self, relative: &str, name: &str) -> bool {
        match self {
            Self::Substring(needle) => name.to_lowercase().contains(needle.as_str()),
            Self::Name(tokens) => match_tokens(tokens, &name.chars().collect::<Vec<_>>()),
            Self::Path(segments) => {
                let parts: Vec<&str> = relative.split('/').filter(|s| !s.is_empty()).collect();
                match_segments(segments, &parts)
            }
        }
    }
}

fn tokens(pattern: &str) -> Vec<Token> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => {
                // `**` inside a segment is one star.
                if out.last() != Some(&Token::Star) {
                    out.push(Token::Star);
                }
            }
            '?' => out.push(Token::AnyChar),
            '\\' if i + 1 < chars.len() => {
                i += 1;
                out.push(Token::Char(chars[i]));
            }
            '[' => match class(&chars[i + 1..]) {
                Some((token, used)) => {
                    out.push(token);
                    i += used;
                }
                None => out.push(Token::Char('[')),
            },
            c => out.push(Token::Char(c)),
        }
        i += 1;
    }
    out
}

/// A `[...]` class after its `[`: the token and how many characters it used (with the `]`).
fn class(chars: &[char]) -> Option<(Token, usize)> {
    let mut i = 0;
    let negated = matches!(chars.first(), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    while i < chars.len() {
        let c = chars[i];
        if c == ']' && !first {
            return Some((Token::Class { negated, ranges }, i + 1));
        }
        first = false;
        if i + 2 < chars.len() && chars[i + 1] == '-' && chars[i + 2] != ']' {
            ranges.push((c, chars[i + 2]));
            i += 3;
        } else {
            ranges.push((c, c));
            i += 1;
        }
    }
    None
}

fn token_matches(token: &Token, c: char) -> bool {
    match token {
        Token::Char(want) => *want == c,
        Token::AnyChar => true,
        Token::Star => false,
        Token::Class { negated, ranges } => {
            ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
        }
    }
}

/// Glob match of one name; `*` backtracks to the latest star only, so this is O(len²) at worst.
fn match_tokens(tokens: &[Token], text: &[char]) -> bool {
    let (mut t, mut x) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while x < text.len() {
        if t < tokens.len() {
            if tokens[t] == Token::Star {
                star = Some((t, x));
                t += 1;
                continue;
            }
            if token_matches(&tokens[t], text[x]) {
                t += 1;
                x += 1;
                continue;
            }
        }
        match star {
            Some((star_t, star_x)) => {
                t = star_t + 1;
                x = star_x + 1;
                star = Some((star_t, star_x + 1));
            }
            None => return false,
        }
    }
    tokens[t..].iter().all(|token| *token == Token::Star)
}

fn match_segments(segments: &[Segment], parts: &[&str]) -> bool {
    match segments.split_first() {
        None => parts.is_empty(),
        Some((Segment::DoubleStar, rest)) => {
            (0..=parts.len()).any(|skip| match_segments(rest, &parts[skip..]))
        }
        Some((Segment::Tokens(tokens), rest)) => match parts.split_first() {
            Some((part, others)) => {
                match_tokens(tokens, &part.chars().collect::<Vec<_>>()) && match_segments(rest, others)
            }
            None => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, relative: &str) -> bool {
        let name = relative.rsplit('/').next().unwrap_or(relative);
        NamePattern::parse(pattern).unwrap().matches(relative, name)
    }

    #[test]
    fn substrings_ignore_case() {
        assert!(m("READ", "docs/ReadMe.md"));
        assert!(!m("docs", "docs/ReadMe.md"));
    }

    #[test]
    fn name_globs() {
        assert!(m("*.rs", "src/main.rs"));
        assert!(!m("*.rs", "src/main.rs.bak"));
        assert!(m("ma?n.*", "main.rs"));
        assert!(m("[a-m]*.rs", "lib.rs"));
        assert!(!m("[!a-m]*.rs", "lib.rs"));
        assert!(m("*a*b*c*", "xxaxxbxxcxx"));
        assert!(!m("*a*b*c*d", "xxaxxbxxcxx"));
        assert!(m("\\*", "*"));
        assert!(!m("[", "a[b"));
        assert!(m("[", "["));
    }

    #[test]
    fn path_globs() {
        assert!(m("**/*.rs", "main.rs"));
        assert!(m("**/*.rs", "a/b/c/main.rs"));
        assert!(m("src/**/test?.txt", "src/x/y/test1.txt"));
        assert!(!m("src/*.txt", "src/x/a.txt"));
        assert!(m("src/*.txt", "src/a.txt"));
    }

    #[test]
    fn bounds() {
        assert!(NamePattern::parse("").is_err());
        assert!(NamePattern::parse(&"a".repeat(300)).is_err());
        assert!(NamePattern::parse("**/**/**/**/**/x*").is_err());
    }
}
