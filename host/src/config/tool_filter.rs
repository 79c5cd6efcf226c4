//! A server's tool filter, `tools: { include, exclude }`: shell-style globs (`*`, `?`, `[..]`,
//! `{a,b}`) on the server's own tool names, compiled once when the definition is read so a bad
//! glob is a configuration error (exit 2) rather than a surprise at connect time. The runtime
//! applies it before the name policy, so a filtered tool never reaches a plugin, the surface or
//! the executor.
//!
//! The rule: a name is kept when no `include` glob is given or one matches, and no `exclude`
//! glob matches (exclude wins). Matching is case-sensitive and whole-name; `*` also matches `/`
//! (tool names are not paths).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::store_keys::tools::{EXCLUDE, INCLUDE};

/// A glob that does not compile, with the field it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadGlob {
    /// `include` or `exclude`.
    pub field: &'static str,
    /// The glob as written.
    pub glob: String,
    /// What is wrong with it (globset's words).
    pub reason: String,
}

/// The compiled filter. Equality and `Debug` look at the globs as written (the compiled sets
/// follow from them), so a definition whose filter changed is a changed definition.
#[derive(Clone, Default)]
pub struct ToolFilter {
    include: Vec<String>,
    exclude: Vec<String>,
    include_set: GlobSet,
    exclude_set: GlobSet,
}

impl ToolFilter {
    /// Compiles both lists; the first glob that does not compile is the error.
    pub fn new(include: Vec<String>, exclude: Vec<String>) -> Result<Self, BadGlob> {
        let include_set = compile(INCLUDE, &include)?;
        let exclude_set = compile(EXCLUDE, &exclude)?;
        Ok(Self { include, exclude, include_set, exclude_set })
    }

    /// The `include` globs as written.
    pub fn include(&self) -> &[String] {
        &self.include
    }

    /// The `exclude` globs as written.
    pub fn exclude(&self) -> &[String] {
        &self.exclude
    }

    /// No globs at all: every tool is kept.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// Whether the server's tool `name` stays: included (or no `include`), and not excluded.
    pub fn allows(&self, name: &str) -> bool {
        (self.include.is_empty() || self.include_set.is_match(name)) && !self.exclude_set.is_match(name)
    }
}

impl PartialEq for ToolFilter {
    fn eq(&self, other: &Self) -> bool {
        self.include == other.include && self.exclude == other.exclude
    }
}

impl Eq for ToolFilter {}

impl std::fmt::Debug for ToolFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolFilter").field("include", &self.include).field("exclude", &self.exclude).finish()
    }
}

/// One list as a set. Options are spelled out rather than left to globset's platform defaults:
/// `\` escapes everywhere, and `*` crosses `/`.
pub(super) fn compile(field: &'static str, globs: &[String]) -> Result<GlobSet, BadGlob> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let compiled = GlobBuilder::new(glob)
            .literal_separator(false)
            .backslash_escape(true)
            .case_insensitive(false)
            .build()
            .map_err(|e| BadGlob { field, glob: glob.clone(), reason: e.kind().to_string() })?;
        set.add(compiled);
    }
    // Every glob compiled alone; a set of them fails only on limits far beyond a config file.
    set.build().map_err(|e| BadGlob { field, glob: globs.join(" "), reason: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> ToolFilter {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        ToolFilter::new(own(include), own(exclude)).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn kept<'a>(f: &ToolFilter, names: &[&'a str]) -> Vec<&'a str> {
        names.iter().copied().filter(|n| f.allows(n)).collect()
    }

    const NAMES: [&str; 7] =
        ["read_file", "read_dir", "search", "search_all", "file_delete", "Read_x", "a/b"];

    #[test]
    fn no_globs_keep_everything() {
        let f = ToolFilter::default();
        assert!(f.is_empty());
        assert_eq!(kept(&f, &NAMES), NAMES);
    }

    #[test]
    fn include_keeps_only_matches_whole_name_and_case_sensitive() {
        let f = filter(&["read_*", "search"], &[]);
        assert_eq!(kept(&f, &NAMES), ["read_file", "read_dir", "search"]);
    }

    #[test]
    fn exclude_drops_matches_and_wins_over_include() {
        assert_eq!(
            kept(&filter(&[], &["*_delete"]), &NAMES),
            ["read_file", "read_dir", "search", "search_all", "Read_x", "a/b"]
        );
        let f = filter(&["read_*", "*_delete"], &["*_delete", "read_dir"]);
        assert_eq!(kept(&f, &NAMES), ["read_file"]);
    }

    #[test]
    fn question_mark_classes_alternates_and_escapes() {
        let names = ["tool_1", "tool_2", "tool_10", "tool_x", "a*b", "ab"];
        assert_eq!(kept(&filter(&["tool_?"], &[]), &names), ["tool_1", "tool_2", "tool_x"]);
        assert_eq!(kept(&filter(&["tool_[0-9]"], &[]), &names), ["tool_1", "tool_2"]);
        assert_eq!(kept(&filter(&["tool_[!0-9]"], &[]), &names), ["tool_x"]);
        assert_eq!(kept(&filter(&["tool_{1,10}"], &[]), &names), ["tool_1", "tool_10"]);
        assert_eq!(kept(&filter(&[r"a\*b"], &[]), &names), ["a*b"]);
        // `*` is not a path glob here: it crosses `/`.
        assert_eq!(kept(&filter(&["a*"], &[]), &NAMES), ["a/b"]);
    }

    #[test]
    fn a_bad_glob_names_its_field_and_itself() {
        let err = ToolFilter::new(vec!["ok*".into()], vec!["[a".into()]).err();
        assert_eq!(
            err,
            Some(BadGlob {
                field: "exclude",
                glob: "[a".into(),
                reason: "unclosed character class; missing ']'".into()
            })
        );
        let err = ToolFilter::new(vec!["{a,b".into()], vec![]).err().map(|e| (e.field, e.glob));
        assert_eq!(err, Some(("include", "{a,b".to_string())));
    }

    #[test]
    fn equality_is_by_the_globs_as_written() {
        assert_eq!(filter(&["a*"], &[]), filter(&["a*"], &[]));
        assert_ne!(filter(&["a*"], &[]), filter(&[], &["a*"]));
        assert_eq!(
            format!("{:?}", filter(&["a"], &["b"])),
            r#"ToolFilter { include: ["a"], exclude: ["b"] }"#
        );
    }
}
