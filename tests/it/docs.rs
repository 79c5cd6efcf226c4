//! The docs a newcomer reads stay true: README.md and ARCHITECTURE.md stay short, the book
//! under `docs/` has every page in its `SUMMARY.md` and nothing more, every relative link of
//! README.md, ARCHITECTURE.md and the book reaches a file (and its `#anchor` a heading of that
//! file), every path ARCHITECTURE.md names under `host/src` exists, the CLI reference has a
//! section for every subcommand the binary has, and a page a comment cites is there. No
//! `mdbook` needed: this is the check CI runs.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use crate::support::common::toolport;

/// README.md is the front door: what toolport is, how to start, where to read on.
const README_MAX_LINES: usize = 350;
/// ARCHITECTURE.md is read whole before a first change; longer, it stops being read.
const ARCHITECTURE_MAX_LINES: usize = 300;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every Markdown file under `dir`, sorted.
fn markdown_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The lines of a Markdown text outside fenced code blocks, numbered from 1.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            lines.push((n + 1, line));
        }
    }
    lines
}

/// A heading's anchor as GitHub and mdBook make it: the text of its links, lowercased,
/// punctuation dropped except `-` and `_`, spaces turned into `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` counts as its text.
    while let Some(open) = rest.find('[') {
        let Some((label, after)) = rest[open + 1..].split_once("](") else { break };
        let Some(close) = after.find(')') else { break };
        text.push_str(&rest[..open]);
        text.push_str(label);
        rest = &after[close + 1..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings; a repeated one gets `-1`, `-2`, … as on GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The text with its inline code spans removed, so an example link inside backticks is not one.
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The targets of a text's links, `[text](target)` and `[label]: target`, with their lines.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose(text) {
        let line = without_code_spans(line);
        if let Some(target) = line.trim_start().strip_prefix('[').and_then(|l| l.split_once("]: ")) {
            found.push((n, target.1.trim().to_string()));
            continue;
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(|c: char| c == ')' || c.is_whitespace()).unwrap_or(after.len());
            found.push((n, after[..end].to_string()));
            rest = &after[end..];
        }
    }
    found
}

/// `a/b/../c` as `a/c`, without asking the file system (a link may name a missing file).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every relative link of `files` (paths under `root`) that reaches no file, or no heading of
/// it: one line each, `file:line: target: why`.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for file in files {
        let text = read(&root.join(file));
        let shown = file.display();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let dir = file.parent().unwrap_or(Path::new(""));
            let linked = if path.is_empty() { file.clone() } else { normalize(&dir.join(path)) };
            let full = root.join(&linked);
            if !full.exists() {
                broken.push(format!("{shown}:{line}: {target}: no file {}", linked.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if full.extension().is_none_or(|ext| ext != "md") {
                broken.push(format!("{shown}:{line}: {target}: an anchor into a file that is not Markdown"));
            } else if !anchors(&read(&full)).contains(anchor) {
                broken
                    .push(format!("{shown}:{line}: {target}: no heading #{anchor} in {}", linked.display()));
            }
        }
    }
    broken
}

/// Pages under `<book>/src` that `SUMMARY.md` leaves out, and entries of it naming no page.
fn summary_mismatches(root: &Path, book: &Path) -> Vec<String> {
    let src = root.join(book).join("src");
    let summary = read(&src.join("SUMMARY.md"));
    let listed: BTreeSet<PathBuf> =
        links(&summary).into_iter().map(|(_, t)| normalize(Path::new(&t))).collect();
    let pages: BTreeSet<PathBuf> = markdown_under(&src)
        .into_iter()
        .filter_map(|p| p.strip_prefix(&src).ok().map(Path::to_path_buf))
        .filter(|p| p != Path::new("SUMMARY.md"))
        .collect();
    let mut wrong: Vec<String> = pages
        .difference(&listed)
        .map(|p| format!("{}: a page SUMMARY.md does not list", p.display()))
        .collect();
    wrong.extend(
        listed.difference(&pages).map(|p| format!("{}: listed in SUMMARY.md, no such page", p.display())),
    );
    wrong
}

/// The files whose links are checked: README.md, ARCHITECTURE.md, the plugin author's guide and
/// the contract's (`plugins/README.md`, `wit/README.md`), and every page of the book.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "plugins/README.md", "wit/README.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let src = root.join("docs/src");
    files.extend(
        markdown_under(&src).into_iter().filter_map(|p| p.strip_prefix(root).ok().map(Path::to_path_buf)),
    );
    files
}

/// Whether a backticked token reads as a path of the repository (`runtime/connection.rs`,
/// `config/edit/`): path characters only, a folder in it, naming a Rust file or a folder.
fn looks_like_path(token: &str) -> bool {
    token.contains('/')
        && (token.ends_with(".rs") || token.ends_with('/'))
        && !token.starts_with(['.', '/', '~'])
        && token.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
}

/// Where a path ARCHITECTURE.md names may be: in the folder its section maps, under
/// `host/src`, or from the repository's root.
fn exists_from(root: &Path, section: Option<&Path>, token: &str) -> bool {
    let src = root.join("host/src");
    section.is_some_and(|dir| dir.join(token).exists())
        || src.join(token).exists()
        || root.join(token).exists()
}

/// The backticked tokens of a line.
fn code_spans(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// Paths ARCHITECTURE.md names that are not there: every backticked path anywhere, and every
/// file or folder in the first column of a map's table, read in the folder its heading names
/// (`` ### `config/` ``).
fn missing_in_architecture(root: &Path, text: &str) -> Vec<String> {
    let mut missing = Vec::new();
    let mut section: Option<PathBuf> = None;
    for (n, line) in prose(text) {
        if line.starts_with('#') {
            section = code_spans(line).find(|t| looks_like_path(t)).map(|folder| {
                let src = root.join("host/src").join(folder);
                if src.exists() { src } else { root.join(folder) }
            });
        }
        let first_cell = line.strip_prefix('|').and_then(|l| l.split('|').next()).unwrap_or_default();
        let named = code_spans(line)
            .filter(|t| looks_like_path(t))
            .chain(code_spans(first_cell).filter(|t| t.ends_with(".rs") || t.ends_with('/')));
        for token in named {
            if !exists_from(root, section.as_deref(), token) {
                missing.push(format!("ARCHITECTURE.md:{n}: `{token}`"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    missing
}

/// Book pages a comment or a message of the code cites (`docs/src/serve/team.md`) that are not
/// there: in `host/src`, `tests/` and `bench/` (this file's own examples left out).
fn cited_pages_missing(root: &Path) -> Vec<String> {
    let this_file = Path::new(file!()).file_name();
    let mut missing = Vec::new();
    let mut pending: Vec<PathBuf> = ["host/src", "tests", "bench"].iter().map(|d| root.join(d)).collect();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("node_modules") && !path.ends_with("results") {
                    pending.push(path);
                }
                continue;
            }
            if path.file_name() == this_file && path.parent().is_some_and(|p| p.ends_with("it")) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            for (at, _) in text.match_indices("docs/src/") {
                let cited: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
                    .collect();
                let cited = cited.trim_end_matches('.');
                if cited.ends_with(".md") && !root.join(cited).exists() {
                    missing.push(format!("{}: {cited}", path.display()));
                }
            }
        }
    }
    missing
}

#[test]
fn readme_and_architecture_stay_short() {
    let root = repo_root();
    let readme = read(&root.join("README.md")).lines().count();
    let architecture = read(&root.join("ARCHITECTURE.md")).lines().count();
    assert!(
        readme <= README_MAX_LINES,
        "README.md has {readme} lines, at most {README_MAX_LINES}: move detail into docs/"
    );
    assert!(
        architecture <= ARCHITECTURE_MAX_LINES,
        "ARCHITECTURE.md has {architecture} lines, at most {ARCHITECTURE_MAX_LINES}"
    );
}

#[test]
fn summary_lists_every_page_of_the_book() {
    let wrong = summary_mismatches(&repo_root(), Path::new("docs"));
    assert!(wrong.is_empty(), "docs/src/SUMMARY.md and the pages differ:\n{}", wrong.join("\n"));
}

#[test]
fn every_relative_link_resolves() {
    let root = repo_root();
    let broken = broken_links(&root, &documents(&root));
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_path_architecture_names_exists() {
    let root = repo_root();
    let missing = missing_in_architecture(&root, &read(&root.join("ARCHITECTURE.md")));
    assert!(missing.is_empty(), "ARCHITECTURE.md names files that are not there:\n{}", missing.join("\n"));
}

#[test]
fn every_page_a_comment_cites_exists() {
    let missing = cited_pages_missing(&repo_root());
    assert!(missing.is_empty(), "comments cite book pages that are not there:\n{}", missing.join("\n"));
}

/// Every key the store's spelling file declares (`const X: &str = "key";`) has its row in the
/// config reference: a key added to `config/store_keys.rs` without a word in the book fails here.
#[test]
fn the_config_reference_names_every_store_key() {
    let root = repo_root();
    let keys = read(&root.join("host/src/config/store_keys.rs"));
    let reference = read(&root.join("docs/src/reference/config.md"));
    let missing: Vec<&str> = keys
        .lines()
        .filter_map(|l| l.split_once(": &str = \"").and_then(|(_, rest)| rest.split_once('"')))
        .map(|(key, _)| key)
        .filter(|key| !["`", ".", "\""].iter().any(|before| reference.contains(&format!("{before}{key}"))))
        .collect();
    assert!(missing.is_empty(), "docs/src/reference/config.md does not name: {missing:?}");
}

/// The subcommands `toolport <path> --help` lists (`help` left out).
fn subcommands(path: &[String]) -> Vec<String> {
    let output =
        toolport().args(path).arg("--help").output().unwrap_or_else(|e| panic!("toolport --help: {e}"));
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    let Some((_, commands)) = help.split_once("\nCommands:\n") else { return Vec::new() };
    commands
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.strip_prefix("  ").and_then(|l| l.split_whitespace().next()))
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_cli_reference_has_every_subcommand() {
    let root = repo_root();
    let reference: String =
        markdown_under(&root.join("docs/src/reference")).iter().map(|p| read(p)).collect();
    let mut missing = Vec::new();
    let mut pending = vec![Vec::<String>::new()];
    while let Some(path) = pending.pop() {
        for sub in subcommands(&path) {
            let mut child = path.clone();
            child.push(sub);
            let heading = format!("## `toolport {}`", child.join(" "));
            if !reference.lines().any(|l| l == heading) {
                missing.push(heading);
            }
            pending.push(child);
        }
    }
    assert!(missing.is_empty(), "docs/src/reference/cli-*.md has no section for:\n{}", missing.join("\n"));
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("Pins: `.toolport/tools.lock`"), "pins-toolporttoolslock");
    assert_eq!(slug("Sandboxed stdio servers (`\"sandbox\": true`)"), "sandboxed-stdio-servers-sandbox-true");
    assert_eq!(slug("2. The guest kit (`toolport-guest`)"), "2-the-guest-kit-toolport-guest");
    assert_eq!(slug("See [the book](docs/x.md) now"), "see-the-book-now");
    assert_eq!(slug("a_b c"), "a_b-c");
    let twice = anchors("# Same\n## Same\n```\n# not a heading\n```\n");
    assert_eq!(twice, BTreeSet::from(["same".to_string(), "same-1".to_string()]));
}

/// The checker finds what it is for: a link to a missing file, an anchor no heading has, a
/// page SUMMARY.md leaves out and an entry with no page; and passes what is right.
#[test]
fn the_checker_finds_broken_links() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    };
    write(
        "README.md",
        "# Top\n[ok](docs/src/a.md#real-heading) [self](#top) [gone](docs/src/gone.md)\n\
         `[in code](nowhere.md)`\n[bad anchor](docs/src/a.md#no-such-heading)\n```\n[fenced](nowhere.md)\n```\n",
    );
    write("docs/src/SUMMARY.md", "# Summary\n- [A](a.md)\n- [Ghost](ghost.md)\n");
    write("docs/src/a.md", "# Real heading\n[up](../../README.md#top) [sibling](b/c.md)\n");
    write("docs/src/b/c.md", "# C\n");
    let files: Vec<PathBuf> = ["README.md", "docs/src/SUMMARY.md", "docs/src/a.md", "docs/src/b/c.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let broken = broken_links(dir.path(), &files);
    assert_eq!(
        broken,
        [
            "README.md:2: docs/src/gone.md: no file docs/src/gone.md",
            "README.md:4: docs/src/a.md#no-such-heading: no heading #no-such-heading in docs/src/a.md",
            "docs/src/SUMMARY.md:3: ghost.md: no file docs/src/ghost.md",
        ]
    );
    let wrong = summary_mismatches(dir.path(), Path::new("docs"));
    assert_eq!(
        wrong,
        ["b/c.md: a page SUMMARY.md does not list", "ghost.md: listed in SUMMARY.md, no such page"]
    );
}

/// The path check finds a row's file that is not in its section's folder and a path named in
/// passing that is not there; it passes the ones that are.
#[test]
fn the_path_check_finds_stale_names() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let folder = dir.path().join("host/src/runtime");
    std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    std::fs::write(folder.join("state.rs"), "").unwrap_or_else(|e| panic!("state.rs: {e}"));
    let text = "# A\n\n### `runtime/`: live servers\n| file | what |\n|---|---|\n| `state.rs` | slots |\n\
                | `executor.rs` | moved away |\n\nSee `runtime/state.rs`, `runtime/gone.rs` and `<name>.rs`.\n\
                ```\n`runtime/in_a_fence.rs`\n```\n";
    let missing = missing_in_architecture(dir.path(), text);
    assert_eq!(missing, ["ARCHITECTURE.md:7: `executor.rs`", "ARCHITECTURE.md:9: `runtime/gone.rs`"]);
}
