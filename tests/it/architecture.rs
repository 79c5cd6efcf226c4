//! The shape of `host/src`, checked from its source: which modules reach which (no
//! circles, no arrow up a layer), and that the library leaves printing to the binary. Parsed with `syn`, so a path
//! in a comment or a string is not a reference.
//!
//! Modules are nodes at two levels: the top-level modules of the crate (`auth`, `transport`,
//! …), and inside each folder its direct children plus the folder's own `mod.rs`. A reference
//! `crate::a::b::C`, `super::b::C` or `b::C` is an arrow to the deepest module it names; an
//! item a facade re-exports (`pub use b::C` in `mod.rs`) counts as a reference to `b`.
//! Code under `#[cfg(test)]` is left out, inline or in a file of its own: a unit test may build
//! its subject from the layer above.
//!
//! There is no circle (issue 27 removed the last eleven), and the top-level modules stack in
//! [`LAYERS`] with no arrow up. Only the binary's files print or touch the process's standard
//! streams and terminal (issue 47): the library takes readers, writers and sinks from it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The crate's top-level modules from the bottom up: a module may use its own layer's and
/// lower ones, never a higher one (transport is above auth, as in rmcp: auth knows nothing of
/// connections). A new module takes its place here.
///
/// The first layer holds the leaves: they import no other module of the crate
/// ([`leaves_import_no_other_module`]), so anything may use them. `observe` sits above
/// `config`: an exchange carries the workspace's `audit` setting, which is config's type.
const LAYERS: &[&[&str]] = &[
    &[
        "text",
        "file_stamp",
        "fix_command",
        "redact",
        "paths",
        "notice",
        "results_store",
        "browser",
        "http_layer",
        "message_error",
    ],
    &["tokens", "cause", "status"],
    &["config"],
    &["observe"],
    &["plugin", "auth", "trust", "policy"],
    &["transport"],
    &["runtime"],
    &["serve", "session"],
    &["gateway"],
    &["acp"],
];

/// The most lines a file of `host/src` may have, tests included (a `*_tests.rs` file or an
/// inline `mod tests` counts like any other code): past it, a file holds more than one concern.
const MAX_LINES: usize = 500;

/// The binary's files: the only ones that print.
const BINARY: &[&str] = &["main.rs", "cli", "demo.rs", "demo_server"];

/// Where a module's code lives, keyed by its path from the crate root (`["runtime",
/// "executor"]`); `mod.rs` and the crate root stand for their folder.
struct Tree {
    files: BTreeMap<Vec<String>, PathBuf>,
}

impl Tree {
    fn read(root: &Path) -> Self {
        let mut files = BTreeMap::new();
        walk(root, root, &mut files);
        // A file compiled only for tests (`#[cfg(test)] mod tests;`) is left out, as an inline
        // test module is.
        let test_only: Vec<Vec<String>> = files
            .iter()
            .flat_map(|(module, file)| {
                test_files(file).into_iter().map(|name| [module.clone(), vec![name]].concat())
            })
            .collect();
        files.retain(|module, _| !test_only.iter().any(|test| module.starts_with(test)));
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

/// The modules `file` declares in files of their own under `#[cfg(test)]`.
fn test_files(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let declared = parsed.items.iter().filter_map(|item| match item {
        syn::Item::Mod(m) if m.content.is_none() && is_test_only(&m.attrs) => Some(m.ident.to_string()),
        _ => None,
    });
    declared.collect()
}

/// Every path a file uses, as written: `use` trees flattened, and paths in code.
#[derive(Default)]
struct Paths {
    /// Each path, with how many inline `mod … { }` it sits in (a test module's `super` is
    /// its file, not the folder).
    found: Vec<(Vec<String>, usize)>,
    inline: usize,
    /// `pub use child::Item` in this file: `Item` → `child`.
    reexports: Vec<(String, String)>,
    /// Printing macros used.
    prints: Vec<String>,
    /// The process's standard streams or terminal reached for (`std::io::stdout()`,
    /// `tokio::io::stdin()`, `Term::stderr()`, rmcp's `stdio_pipes()`), as written.
    handles: Vec<String>,
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
            syn::UseTree::Glob(_) => self.found.push((prefix.clone(), self.inline)),
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
        self.found.push((path, self.inline));
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let public = !matches!(item.vis, syn::Visibility::Inherited);
        self.flatten(&mut Vec::new(), &item.tree, public);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // Tests may reach up to build what they test: only the code that ships counts.
        if is_test_only(&item.attrs) {
            return;
        }
        self.inline += 1;
        syn::visit::visit_item_mod(self, item);
        self.inline -= 1;
    }

    /// `pub(super)` and `pub(crate)` say who may look, not what is used.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.found.push((path.segments.iter().map(|s| s.ident.to_string()).collect(), self.inline));
        syn::visit::visit_path(self, path);
    }

    fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
        if let syn::Expr::Path(path) = &*call.func {
            let segments: Vec<String> = path.path.segments.iter().map(|s| s.ident.to_string()).collect();
            if is_std_handle(&segments) {
                self.handles.push(format!("{}()", segments.join("::")));
            }
        }
        syn::visit::visit_expr_call(self, call);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        if ["println", "eprintln", "print", "eprint", "dbg"].contains(&name.as_str()) {
            self.prints.push(name);
        }
        // A handle passed to a macro (`writeln!(std::io::stderr(), …)`): the arguments read as
        // expressions where they parse as such (`tracing`'s `target:` and `%x` do not).
        let arguments =
            mac.parse_body_with(syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated);
        for argument in arguments.iter().flatten() {
            let mut inner = Paths::default();
            inner.visit_expr(argument);
            self.handles.extend(inner.handles);
        }
        // Paths inside macro calls (`format!`, `tracing::warn!`) are tokens, not parsed: a
        // call's arguments that name a module are rare, and `use` lines catch the rest.
        syn::visit::visit_macro(self, mac);
    }
}

/// A call path that reaches the process's standard streams or terminal: `stdin`, `stdout` or
/// `stderr` alone or from an `io` module (std's, tokio's), a `Term` constructor
/// (console/dialoguer), and rmcp's `stdio_pipes` and `transport::stdio`.
fn is_std_handle(segments: &[String]) -> bool {
    let names: Vec<&str> = segments.iter().map(String::as_str).collect();
    match names.as_slice() {
        [.., "Term", _] => true,
        [.., "stdio_pipes"] => true,
        [.., "transport", "stdio"] => true,
        [.., before, "stdin" | "stdout" | "stderr"] => *before == "io",
        ["stdin" | "stdout" | "stderr"] => true,
        _ => false,
    }
}

/// `#[cfg(test)]`: compiled only for the crate's own tests.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr.meta.require_list().is_ok_and(|list| list.tokens.to_string() == "test")
    })
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
        for (path, inline) in &paths.found {
            let Some(absolute) = absolute(tree, module, path, *inline) else { continue };
            let target = resolve(tree, &parsed, &absolute);
            if &target != *module && !target.is_empty() {
                to.insert(target);
            }
        }
        arrows.insert((*module).clone(), to);
    }
    arrows
}

/// `path` from the crate root, when it names something in this crate; `inline` is how many
/// inline modules of its file it was written in.
fn absolute(tree: &Tree, module: &[String], path: &[String], inline: usize) -> Option<Vec<String>> {
    // The module whose children plain names and `self::` reach; `a/b.rs` and `a/b/mod.rs`
    // are both `a::b`, whose `super` is `a`. Inside an inline module the first `super`s climb
    // to its file: they stay in `a::b`.
    let here: Vec<String> = module.to_vec();
    let supers = path.iter().take_while(|s| *s == "super").count();
    if supers > 0 {
        let mut base = here;
        base.truncate(base.len().saturating_sub(supers.saturating_sub(inline)));
        return Some([base, path[supers..].to_vec()].concat());
    }
    let (first, rest) = path.split_first()?;
    let base = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.clone(),
        // A plain name inside an inline module names that module's own items.
        _ if inline > 0 => return None,
        name => {
            let mut child = here.clone();
            child.push(name.to_string());
            if !tree.is_module(&child) {
                return None;
            }
            return Some([here, path.to_vec()].concat());
        }
    };
    Some([base, rest.to_vec()].concat())
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

/// The circles of the crate, each as its members: `auth transport` at the top,
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

/// No circle between modules, at the top or inside a folder.
#[test]
fn modules_form_no_circles() {
    let circles = cycles_of(&Tree::read(&source_root()));
    assert!(
        circles.is_empty(),
        "modules that reach each other in a circle (move what they share to a leaf):\n{circles:#?}"
    );
}

/// No arrow from a top-level module up to a higher layer of [`LAYERS`].
#[test]
fn no_module_reaches_up_a_layer() {
    let tree = Tree::read(&source_root());
    let layer = |name: &str| LAYERS.iter().position(|layer| layer.contains(&name));
    let mut wrong = BTreeSet::new();
    for (from, targets) in arrows(&tree) {
        // The crate root is the facade, and the binary's own modules sit above the library.
        let Some(first) = from.first() else { continue };
        if BINARY.iter().any(|file| file.trim_end_matches(".rs") == first) {
            continue;
        }
        let Some(here) = layer(first) else {
            wrong.insert(format!("{first} has no place in LAYERS"));
            continue;
        };
        for to in targets.iter().filter_map(|t| t.first()).filter(|t| *t != first) {
            match layer(to) {
                Some(there) if there <= here => {}
                Some(_) => {
                    wrong.insert(format!("{} reaches up to {to}", from.join("::")));
                }
                None => {
                    wrong.insert(format!("{to} has no place in LAYERS"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "layers broken:\n{}", wrong.into_iter().collect::<Vec<_>>().join("\n"));
}

/// The leaves (the first layer of [`LAYERS`]) import no other module of the crate: each is
/// a thing on its own (a text rule, a path, a lock stamp, one HTTP client over another), so
/// anything may use it without pulling in more.
#[test]
fn leaves_import_no_other_module() {
    let tree = Tree::read(&source_root());
    let mut wrong = BTreeSet::new();
    for (from, targets) in arrows(&tree) {
        let Some(first) = from.first().filter(|first| LAYERS[0].contains(&first.as_str())) else { continue };
        for to in targets.iter().filter(|to| to.first() != Some(first)) {
            wrong.insert(format!("{} imports {}", from.join("::"), to.join("::")));
        }
    }
    assert!(
        wrong.is_empty(),
        "a leaf imports another module (move what it needs into the leaf, or pass it in):\n{}",
        wrong.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// No file of `host/src` is over [`MAX_LINES`] lines, its tests included.
#[test]
fn no_file_is_over_the_line_limit() {
    let root = source_root();
    let mut over = Vec::new();
    for file in rust_files(&root) {
        let relative = file.strip_prefix(&root).unwrap_or(&file).to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let lines = text.lines().count();
        if lines > MAX_LINES {
            over.push(format!("{relative}: {lines} lines"));
        }
    }
    assert!(
        over.is_empty(),
        "files over {MAX_LINES} lines (split them by concern, each file a module named for what it does):\n{}",
        over.join("\n")
    );
}

/// Every `.rs` file under `dir`, the binary's included.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
        if path.is_dir() {
            found.extend(rust_files(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
    found
}

/// What the library's files (all but [`BINARY`]'s) print, and which standard streams or
/// terminal they reach for, one `file: what` line each.
fn library_terminal_uses(root: &Path) -> (Vec<String>, Vec<String>) {
    let tree = Tree::read(root);
    let (mut printing, mut handles) = (Vec::new(), Vec::new());
    for file in tree.files.values() {
        let relative = file.strip_prefix(root).unwrap_or(file);
        let first = relative.iter().next().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
        if BINARY.contains(&first.as_str()) {
            continue;
        }
        let parsed = parse(file);
        printing.extend(parsed.prints.iter().map(|name| format!("{}: {name}!", relative.display())));
        handles.extend(parsed.handles.iter().map(|call| format!("{}: {call}", relative.display())));
    }
    (printing, handles)
}

/// The library prints nothing itself: what it has for a person goes through its notice hook,
/// and only the binary's files write to stdout and stderr with the printing macros. Nor does
/// it take the process's stdin, stdout, stderr or terminal: the binary passes them in (a
/// reader and writer for ACP and `serve`, the pasted lines of a sign-in) or draws what the
/// library reports (connect progress), and the terminal's prompts live in the binary.
#[test]
fn only_the_binary_prints() {
    let (printing, handles) = library_terminal_uses(&source_root());
    assert!(printing.is_empty(), "the library prints (use crate::notice::tell):\n{}", printing.join("\n"));
    assert!(
        handles.is_empty(),
        "the library reaches for the process's standard streams or terminal (take a reader, a writer \
         or a sink from the caller, which passes stdin/stdout, or move the terminal code into the \
         binary's cli/):\n{}",
        handles.join("\n")
    );
}

/// The checker itself: a standard stream or terminal reached for in a library file is found,
/// written any way (a `use`d name, a macro's argument), and one in the binary or in a test
/// module is not.
#[test]
fn a_library_file_reaching_for_stdout_is_found() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    };
    write("lib.rs", "mod a; mod b;");
    write(
        "a.rs",
        "use std::io::stdin; fn f() { let _ = std::io::stdout(); let _ = stdin(); \
         let _ = console::Term::stderr(); writeln!(tokio::io::stderr(), \"x\"); \
         let _ = cmd.stderr(Stdio::piped()); } \
         #[cfg(test)] mod tests { fn g() { let _ = std::io::stdin(); } }",
    );
    write("b.rs", "fn quiet(out: impl std::io::Write) { let _ = out; }");
    write("cli/mod.rs", "fn main() { let _ = std::io::stdout(); println!(\"ok\"); }");
    let (printing, handles) = library_terminal_uses(dir.path());
    assert_eq!(printing, Vec::<String>::new());
    assert_eq!(
        handles,
        [
            "a.rs: std::io::stdout()",
            "a.rs: stdin()",
            "a.rs: console::Term::stderr()",
            "a.rs: tokio::io::stderr()"
        ]
    );
}

/// At most this many functions of `host/src` (outside `#[cfg(test)]`) return `Result<_, String>`
/// (issue 47 brought them from 137 to this): an error a caller may branch on, or that crosses a
/// module, is a type. Lower it when you convert one; never raise it.
const STRING_ERRORS_AT_MOST: usize = 40;

/// Functions whose return type is `Result<_, String>`, as `file: name`, test code left out.
#[derive(Default)]
struct StringErrors {
    found: Vec<String>,
}

impl<'ast> Visit<'ast> for StringErrors {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !is_test_only(&item.attrs) {
            syn::visit::visit_item_mod(self, item);
        }
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        if !is_test_only(&item.attrs) {
            syn::visit::visit_item_impl(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !is_test_only(&item.attrs) {
            self.check(&item.sig);
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test_only(&item.attrs) {
            self.check(&item.sig);
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        self.check(&item.sig);
        syn::visit::visit_trait_item_fn(self, item);
    }
}

impl StringErrors {
    fn check(&mut self, sig: &syn::Signature) {
        let syn::ReturnType::Type(_, ty) = &sig.output else { return };
        let syn::Type::Path(path) = ty.as_ref() else { return };
        let Some(last) = path.path.segments.last().filter(|s| s.ident == "Result") else { return };
        let syn::PathArguments::AngleBracketed(args) = &last.arguments else { return };
        let is_string = |arg: &syn::GenericArgument| matches!(arg, syn::GenericArgument::Type(syn::Type::Path(p)) if p.path.is_ident("String"));
        if args.args.len() == 2 && args.args.last().is_some_and(is_string) {
            self.found.push(sig.ident.to_string());
        }
    }
}

/// A `String` error cannot be matched on and invites comparing texts: their number only falls.
#[test]
fn string_errors_stay_few() {
    let root = source_root();
    let mut found = Vec::new();
    for file in Tree::read(&root).files.values() {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut errors = StringErrors::default();
        errors.visit_file(&parsed);
        let relative = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        found.extend(errors.found.into_iter().map(|name| format!("{relative}: {name}")));
    }
    assert!(
        found.len() <= STRING_ERRORS_AT_MOST,
        "{} functions return Result<_, String> (at most {STRING_ERRORS_AT_MOST}): give these an error \
         type (the module's own, such as ConfigError, EditError, PluginError, ConnectError, or a \
         thiserror enum) instead:\n{}",
        found.len(),
        found.join("\n")
    );
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
    // A test module's `super` is its file: no arrow from `y` up to the facade `a`.
    write("a/y.rs", "pub struct Other; fn f() -> crate::a::Thing { todo!() } mod tests { use super::*; }");
    write("b.rs", "use crate::c::C; pub struct B;");
    write("c.rs", "pub struct C; #[cfg(test)] mod tests { use crate::b::B; } #[cfg(test)] mod more;");
    // A test module in a file of its own is left out too.
    write("c/more.rs", "use crate::b::B;");
    let found = cycles_of(&Tree::read(dir.path()));
    assert_eq!(found, BTreeSet::from(["a: x y".to_string()]));
    write("c.rs", "use crate::b::B; pub struct C;");
    let found = cycles_of(&Tree::read(dir.path()));
    assert_eq!(found, BTreeSet::from(["a: x y".to_string(), "b c".to_string()]));
}

/// At most this many names at the root of the library (issue 47 cut them from 151): the
/// embedder's core, what `host/examples/embed.rs` and the lib.rs example need and every type
/// their signatures name (`#![deny(unnameable_types)]` in lib.rs keeps each one exported).
/// Anything else goes in the task module it belongs to (`store`, `edit`, `questions`, …).
/// Lower it when a name leaves; never raise it.
const ROOT_EXPORTS_AT_MOST: usize = 41;

/// At most this many names in `#[doc(hidden)] pub mod test_support` (issue 47 cut
/// `cli_support`'s 64 to this): what this repository's tests, benches and fuzz targets need and
/// no embedder should. Lower it when a name leaves; never raise it.
const TEST_SUPPORT_AT_MOST: usize = 2;

/// What the binary may still take from `test_support`: nothing (the metrics' provider left it
/// for the observer's own meter, `Observer::with_metrics`).
const BINARY_TEST_SUPPORT: &[&str] = &[];

/// The names a `pub use` item exports, one per leaf (`a::{B, C as D}` is two).
fn exported(tree: &syn::UseTree, names: &mut Vec<String>) {
    match tree {
        syn::UseTree::Path(path) => exported(&path.tree, names),
        syn::UseTree::Name(name) => names.push(name.ident.to_string()),
        syn::UseTree::Rename(rename) => names.push(rename.rename.to_string()),
        syn::UseTree::Glob(_) => names.push("*".to_string()),
        syn::UseTree::Group(group) => group.items.iter().for_each(|tree| exported(tree, names)),
    }
}

/// The names `lib.rs` re-exports among `items`, and the items of its `test_support` module.
fn exports_of(items: &[syn::Item]) -> (Vec<String>, Option<&[syn::Item]>) {
    let mut names = Vec::new();
    let mut test_support = None;
    for item in items {
        match item {
            syn::Item::Use(item) if matches!(item.vis, syn::Visibility::Public(_)) => {
                exported(&item.tree, &mut names)
            }
            syn::Item::Mod(module) if module.ident == "test_support" => {
                test_support = module.content.as_ref().map(|(_, items)| items.as_slice())
            }
            _ => {}
        }
    }
    (names, test_support)
}

/// The public surface stays cut to what an embedder needs (issue 47): few names at the root,
/// the rest in documented task modules, and a hidden `test_support` that only this
/// repository's own tests reach for.
#[test]
fn the_public_surface_stays_small() {
    let lib = source_root().join("lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
    let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", lib.display()));
    let (root, test_support) = exports_of(&file.items);
    assert!(
        root.len() <= ROOT_EXPORTS_AT_MOST,
        "lib.rs exports {} names at its root (at most {ROOT_EXPORTS_AT_MOST}): put what is not the \
         embedder's core in the task module it belongs to:\n{}",
        root.len(),
        root.join(" ")
    );
    let test_support = test_support.unwrap_or_else(|| panic!("lib.rs has no `pub mod test_support {{ … }}`"));
    let (hidden, _) = exports_of(test_support);
    assert!(
        hidden.len() <= TEST_SUPPORT_AT_MOST,
        "lib.rs's test_support exports {} names (at most {TEST_SUPPORT_AT_MOST}): what the binary or an \
         embedder needs belongs in a documented module:\n{}",
        hidden.len(),
        hidden.join(" ")
    );
}

/// The binary is a client of the documented API: it takes nothing from `test_support` but
/// [`BINARY_TEST_SUPPORT`], by name (not the module itself).
#[test]
fn the_binary_uses_no_test_support() {
    let root = source_root();
    let mut found = Vec::new();
    for first in BINARY {
        let path = root.join(first);
        let files = if path.is_dir() { rust_files(&path) } else { vec![path] };
        for file in files {
            let relative = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
            for (path, _) in parse(&file).found {
                let Some(at) = path.iter().position(|s| s == "test_support") else { continue };
                let name = path.get(at + 1).map(String::as_str).unwrap_or("self");
                if !BINARY_TEST_SUPPORT.contains(&name) {
                    found.push(format!("{relative}: {}", path.join("::")));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the binary uses lib.rs's test_support (export what it needs from a documented module):\n{}",
        found.join("\n")
    );
}
