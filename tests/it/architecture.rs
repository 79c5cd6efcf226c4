//! The shape of `host/src`, checked from its source: which modules reach which (no new
//! circles), and that the library leaves printing to the binary. Parsed with `syn`, so a path
//! in a comment or a string is not a reference.
//!
//! Modules are nodes at two levels: the top-level modules of the crate (`auth`, `transport`,
//! …), and inside each folder its direct children plus the folder's own `mod.rs`. A reference
//! `crate::a::b::C`, `super::b::C` or `b::C` is an arrow to the deepest module it names; an
//! item a facade re-exports (`pub use b::C` in `mod.rs`) counts as a reference to `b`.
//! [`KNOWN_CYCLES`] lists the circles of today's tree: a new one, or a known one that grew,
//! fails; one that shrank or went fails too, until the list says so, so the list only ever
//! gets shorter.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The circles between modules that the tree has today, each as its members (a folder's own
/// `mod.rs` is the folder's name). Issue 27 removes them; remove each line with its circle.
// Today's baseline (issue 27, before its moves): the folders' own `mod.rs` sits in each circle
// where children use what the facade defines and the facade uses them.
const KNOWN_CYCLES: &[&str] = &[
    "acp: agent elicit mod params request rpc session",
    "auth config plugin runtime status transport",
    "auth: address_policy callback dpop http_client machine mod sign_in store workload",
    "cli: acp call_progress catalog grants install login mcp mod plugin plugin_edit plugin_new plugin_run plugin_wit serve tools workspace",
    "clients: client codex_toml import install json_file mod on_path",
    "config: add_args edit expand fields grant_edit grant_input host_pattern mod model normalize plugin_edit resolve sandbox_fields store tool_filter unknown_keys validate workspace write",
    "plugin: admission builtin cache cache_trust cpu engine files_gate grant_hint guard host inspect limits load mailbox mod policy queue sandbox server shape socket_budget sockets_gate stderr store transport trial",
    "runtime: catalog catalog_calls catalog_list connection elicitation executor large_results mod names options person_clock pipeline record related request_state sampling server_requests state structured_output supervisor token_costs tool_call tool_search",
    "serve: changes front http input_rounds lazy listener mod relay resource_watch result_type surface",
    "session: actions command complete editor live mod",
    "transport: connected header_rules http http_audit lifecycle mod plugin stderr_tail stdio wasm",
];

/// The binary's files: the only ones that print.
const BINARY: &[&str] = &["main.rs", "cli", "demo.rs", "demo_server.rs"];

/// Where a module's code lives, keyed by its path from the crate root (`["runtime",
/// "executor"]`); `mod.rs` and the crate root stand for their folder.
struct Tree {
    files: BTreeMap<Vec<String>, PathBuf>,
}

impl Tree {
    fn read(root: &Path) -> Self {
        let mut files = BTreeMap::new();
        walk(root, root, &mut files);
        Self { files }
    }

    fn is_module(&self, path: &[String]) -> bool {
        self.files.contains_key(path)
    }
}

fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<Vec<String>, PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
        if path.is_dir() {
            walk(root, &path, files);
            continue;
        }
        if path.extension().is_none_or(|ext| ext != "rs") {
            continue;
        }
        let relative = path.strip_prefix(root).unwrap_or(&path);
        let mut module: Vec<String> =
            relative.iter().map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        if module.last().is_some_and(|last| last == "mod" || last == "lib") {
            module.pop();
        }
        if module == ["main"] || module == ["bin"] {
            continue;
        }
        files.insert(module, path);
    }
}

/// Every path a file uses, as written: `use` trees flattened, and paths in code.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
    /// `pub use child::Item` in this file: `Item` → `child`.
    reexports: Vec<(String, String)>,
    /// Printing macros used.
    prints: Vec<String>,
}

impl Paths {
    fn flatten(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, public: bool) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                self.flatten(prefix, &path.tree, public);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                self.leaf(prefix, name.ident.to_string(), name.ident.to_string(), public)
            }
            syn::UseTree::Rename(rename) => {
                self.leaf(prefix, rename.ident.to_string(), rename.rename.to_string(), public)
            }
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    self.flatten(prefix, tree, public);
                }
            }
        }
    }

    fn leaf(&mut self, prefix: &[String], name: String, known_as: String, public: bool) {
        let mut path = prefix.to_vec();
        path.push(name);
        let from_child = match prefix {
            [child] => Some(child),
            [this, child] if this == "self" => Some(child),
            _ => None,
        };
        if let Some(child) = from_child.filter(|c| public && *c != "crate" && *c != "super") {
            self.reexports.push((known_as, child.clone()));
        }
        self.found.push(path);
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let public = !matches!(item.vis, syn::Visibility::Inherited);
        self.flatten(&mut Vec::new(), &item.tree, public);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.found.push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        if ["println", "eprintln", "print", "eprint", "dbg"].contains(&name.as_str()) {
            self.prints.push(name);
        }
        // Paths inside macro calls (`format!`, `tracing::warn!`) are tokens, not parsed: a
        // call's arguments that name a module are rare, and `use` lines catch the rest.
        syn::visit::visit_macro(self, mac);
    }
}

fn parse(path: &Path) -> Paths {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut paths = Paths::default();
    paths.visit_file(&file);
    paths
}

/// Each module's arrows: to the deepest module each of its paths names.
fn arrows(tree: &Tree) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let parsed: BTreeMap<&Vec<String>, Paths> = tree.files.iter().map(|(m, f)| (m, parse(f))).collect();
    let mut arrows = BTreeMap::new();
    for (module, paths) in &parsed {
        let mut to = BTreeSet::new();
        for path in &paths.found {
            let Some(absolute) = absolute(tree, module, path) else { continue };
            let target = resolve(tree, &parsed, &absolute);
            if &target != *module && !target.is_empty() {
                to.insert(target);
            }
        }
        arrows.insert((*module).clone(), to);
    }
    arrows
}

/// `path` from the crate root, when it names something in this crate.
fn absolute(tree: &Tree, module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    // The module whose children plain names and `self::` reach; `a/b.rs` and `a/b/mod.rs`
    // are both `a::b`, whose `super` is `a`.
    let here: Vec<String> = module.to_vec();
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let mut base = match first.as_str() {
        "crate" => Vec::new(),
        "super" => parent,
        "self" => here.clone(),
        name => {
            let mut child = here.clone();
            child.push(name.to_string());
            if !tree.is_module(&child) {
                return None;
            }
            return Some([here, path.to_vec()].concat());
        }
    };
    let mut rest = rest.to_vec();
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest.remove(0);
    }
    Some([base, rest].concat())
}

/// The deepest module `path` names, following one facade re-export.
fn resolve(tree: &Tree, parsed: &BTreeMap<&Vec<String>, Paths>, path: &[String]) -> Vec<String> {
    let mut deepest = Vec::new();
    for len in 1..=path.len() {
        if tree.is_module(&path[..len]) {
            deepest = path[..len].to_vec();
        } else {
            break;
        }
    }
    if let (Some(item), Some(facade)) = (path.get(deepest.len()), parsed.get(&deepest))
        && let Some((_, child)) = facade.reexports.iter().find(|(name, _)| name == item)
    {
        let mut target = deepest.clone();
        target.push(child.clone());
        if tree.is_module(&target) {
            return target;
        }
    }
    deepest
}

/// The circles (strongly connected components of two or more) of `graph`, each sorted.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by repeated search: the graphs here have at most a few dozen nodes.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(node) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|n| (n, reach(n))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (node, reached) in &reaches {
        let members: Vec<String> = reached
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|back| back.contains(*node)))
            .cloned()
            .collect();
        if members.len() >= 2 {
            found.insert(members);
        }
    }
    found.into_iter().collect()
}

/// The circles of the crate as `KNOWN_CYCLES` writes them: `auth transport` at the top,
/// `runtime: executor large_results` inside a folder.
fn cycles_of(tree: &Tree) -> BTreeSet<String> {
    let arrows = arrows(tree);
    let mut levels: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (from, targets) in &arrows {
        for to in targets {
            // The shared folder of both ends, and the child of it each lies in.
            let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
            let folder = from[..common].to_vec();
            let name = |m: &Vec<String>| m.get(common).cloned().unwrap_or_else(|| "mod".to_string());
            let (a, b) = (name(from), name(to));
            if a != b {
                levels.entry(folder).or_default().entry(a).or_default().insert(b);
            }
        }
    }
    let mut all = BTreeSet::new();
    for (folder, graph) in &levels {
        for circle in circles(graph) {
            let members = circle.join(" ");
            all.insert(if folder.is_empty() { members } else { format!("{}: {members}", folder.join("/")) });
        }
    }
    all
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src")
}

/// No circle between modules beyond the known ones, and none of those grown or gone.
#[test]
fn modules_form_no_new_circles() {
    let now = cycles_of(&Tree::read(&source_root()));
    let known: BTreeSet<String> = KNOWN_CYCLES.iter().map(|c| c.to_string()).collect();
    let new: Vec<&String> = now.difference(&known).collect();
    let gone: Vec<&String> = known.difference(&now).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "circles between modules changed ({} now, {} known).\nnew or grown: {new:#?}\n\
         gone or shrunk (take them out of KNOWN_CYCLES): {gone:#?}",
        now.len(),
        known.len()
    );
}

/// The library prints nothing itself: what it has for a person goes through its notice hook,
/// and only the binary's files write to stdout and stderr with the printing macros.
#[test]
fn only_the_binary_prints() {
    let root = source_root();
    let tree = Tree::read(&root);
    let mut printing = Vec::new();
    for file in tree.files.values() {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        let first = relative.iter().next().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        if BINARY.contains(&first.as_str()) {
            continue;
        }
        for name in parse(file).prints {
            printing.push(format!("{}: {name}!", relative.display()));
        }
    }
    assert!(printing.is_empty(), "the library prints (use crate::notice::tell):\n{}", printing.join("\n"));
}

/// The checker itself: a circle through a facade's re-export is found, a one-way arrow is not.
#[test]
fn a_circle_through_a_reexport_is_found() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write("lib.rs", "mod a; mod b; mod c;");
    write("a/mod.rs", "mod x; mod y; pub use x::Thing;");
    write("a/x.rs", "use super::y::Other; pub struct Thing;");
    write("a/y.rs", "pub struct Other; fn f() -> crate::a::Thing { todo!() }");
    write("b.rs", "use crate::c::C; pub struct B;");
    write("c.rs", "pub struct C;");
    let found = cycles_of(&Tree::read(dir.path()));
    assert_eq!(found, BTreeSet::from(["a: x y".to_string()]));
    write("c.rs", "use crate::b::B; pub struct C;");
    let found = cycles_of(&Tree::read(dir.path()));
    assert_eq!(found, BTreeSet::from(["a: x y".to_string(), "b c".to_string()]));
}
