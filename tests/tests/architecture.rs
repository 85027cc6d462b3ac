//! Keeps the architecture honest: checks over the library crates' own sources.
//!
//! The crate graph is the architecture diagram, and inside each crate the module graph
//! should read the same way: errors sit at the bottom of each crate, everything else
//! builds on what sits below it, and a module never imports one that imports it back.
//! A circle of modules can only be read, tested and moved as one piece, so it is a
//! failure here, printed with one example path and line for each import in the circle.
//!
//! How the module graph is built, per crate (`src/lib.rs` and `src/main.rs` as roots):
//! - `mod x;` is found at `x.rs` or `x/mod.rs` (or at its `#[path]`); an inline
//!   `mod x { ... }` belongs to its file. A `mod` declaration is no import.
//! - Every file is parsed with `syn`. The paths that start with `crate::`, `super::`,
//!   `self::` or the name of a child module count, in `use` items (groups and globs
//!   expanded) and in code: types, expressions, patterns, and `crate::`/`self::`/`super::`
//!   paths inside macro calls. Attributes and doc comments do not count.
//! - Items under `#[cfg(test)]` do not count: unit tests may import freely.
//! - A path is followed segment by segment: into child modules, and through `use`
//!   imports (explicit names first, then globs) to where an item is defined, so that
//!   `use crate::Failure` lands in `error.rs` when the crate root re-exports it.
//! - A `pub use` (any `pub(..)` too) of something inside the module's own children is
//!   that module's facade, like its `mod` declarations, and is no import of its own.
//!
//! The graph's nodes are files; a circle is a strongly connected set of two or more.
//!
//! A second check: a source file over 800 lines must say why in its opening `//!`
//! comment, with a line that starts `//! Why this file is long:`.
//!
//! Why this file is long: the checker (a module tree, a resolver of paths through re-exports,
//! a circle finder) and its own tests on small fixture crates belong together, and it is a
//! test file, outside the crates' `src/` it checks.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, Span, TokenStream, TokenTree};
use syn::punctuated::Punctuated;
use syn::visit::{self, Visit};
use syn::{Attribute, ImplItem, Item, Meta, TraitItem, UseTree, Visibility};

/// The crates whose `src/` folders are checked (those that exist).
const CRATES: &[&str] = &[
    "grader-core",
    "grader-eval",
    "grader-env",
    "grader-cli",
    "grader-macros",
];

/// Files longer than this must say why.
const LONG_FILE_LINES: usize = 800;

/// The opening-comment line that says why a file is long.
const LONG_FILE_MARKER: &str = "//! Why this file is long:";

/// How deep re-exports are followed before giving up (a guard against glob loops).
const MAX_DEPTH: usize = 12;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits inside the workspace")
        .to_path_buf()
}

/// The `src/` folders of [`CRATES`] that exist, with their crate names.
fn crate_src_dirs(root: &Path) -> Vec<(&'static str, PathBuf)> {
    CRATES
        .iter()
        .map(|name| (*name, root.join(name).join("src")))
        .filter(|(_, src)| src.is_dir())
        .collect()
}

#[test]
fn no_import_circles_between_modules() {
    let root = workspace_root();
    let srcs = crate_src_dirs(&root);
    assert!(
        !srcs.is_empty(),
        "none of {CRATES:?} has a src/ folder under {}",
        root.display()
    );
    let mut report = String::new();
    for (_, src) in &srcs {
        let graph = FileGraph::build(&root, src).unwrap_or_else(|e| panic!("{e}"));
        report.push_str(&graph.describe_circles());
    }
    assert!(
        report.is_empty(),
        "modules import each other in a circle; move what both sides need to a module \
         below them both (errors at the bottom), or merge them:\n\n{report}"
    );
}

#[test]
fn long_files_say_why() {
    let root = workspace_root();
    let srcs = crate_src_dirs(&root);
    assert!(
        !srcs.is_empty(),
        "none of {CRATES:?} has a src/ folder under {}",
        root.display()
    );
    let mut offenders = Vec::new();
    for (_, src) in &srcs {
        offenders.extend(long_files_without_reason(&root, src).unwrap_or_else(|e| panic!("{e}")));
    }
    assert!(
        offenders.is_empty(),
        "files over {LONG_FILE_LINES} lines must say why in their opening `//!` comment, \
         with a line that starts `{LONG_FILE_MARKER}` (or be split):\n{}",
        offenders.join("\n")
    );
}

/// The files allowed `unsafe` (the workspace denies it everywhere else), and how many
/// `unsafe` blocks each has: one call of `pre_exec` each (the hook that runs between `fork`
/// and `exec` to put a command in its cgroups, close what it would inherit, set its rlimits
/// and drop root to the sandbox's host user; the child that creates a workspace sandbox's
/// listeners inside its network namespace; the hook that puts a workspace's sandbox helpers
/// in its cgroup and leaves them no descriptor of the server's), and the server marking its
/// own descriptors close-on-exec (raw `close_range`).
const UNSAFE_ALLOWED: [(&str, usize); 3] = [
    ("grader-core/src/sandbox/hook.rs", 1),
    ("grader-env/src/workspace/egress/netns.rs", 1),
    ("grader-env/src/workspace/hook.rs", 2),
];

#[test]
fn unsafe_code_is_allowed_in_three_files_only() {
    let root = workspace_root();
    let mut offenders = Vec::new();
    for (_, src) in crate_src_dirs(&root) {
        let mut files = Vec::new();
        rust_files(&src, &mut files).unwrap_or_else(|e| panic!("{e}"));
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
            let name = shown(&root, &file);
            if text.contains("allow(unsafe_code)")
                && !UNSAFE_ALLOWED.iter().any(|(allowed, _)| *allowed == name)
            {
                offenders.push(name);
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "only {UNSAFE_ALLOWED:?} may allow unsafe code: {offenders:?}"
    );
    for (allowed, blocks) in UNSAFE_ALLOWED {
        let text = std::fs::read_to_string(root.join(allowed)).expect("the file exists");
        assert_eq!(
            text.matches("unsafe {").count(),
            blocks,
            "{allowed}: {blocks} unsafe block(s)"
        );
        assert_eq!(
            text.matches("// SAFETY:").count(),
            blocks,
            "{allowed}: each block says why it is safe"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Long files
// ---------------------------------------------------------------------------------------

/// `path: N lines` for each `.rs` file under `src` that is too long and does not say why.
fn long_files_without_reason(root: &Path, src: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files)?;
    let mut offenders = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let lines = text.lines().count();
        if lines > LONG_FILE_LINES && !says_why_long(&text) {
            offenders.push(format!("  {}: {lines} lines", shown(root, &file)));
        }
    }
    Ok(offenders)
}

/// Whether the file's leading `//!` block has a line that starts with the marker.
fn says_why_long(text: &str) -> bool {
    text.lines()
        .map(str::trim_start)
        // Plain comments may stand first (a generated file's `// @generated` header).
        .skip_while(|line| line.is_empty() || (line.starts_with("//") && !line.starts_with("//!")))
        .take_while(|line| line.starts_with("//!"))
        .any(|line| line.starts_with(LONG_FILE_MARKER))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut paths = entries
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    paths.sort();
    for path in paths {
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `path` relative to the workspace root, with `/` separators.
fn shown(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

// ---------------------------------------------------------------------------------------
// The module tree
// ---------------------------------------------------------------------------------------

/// One module: the top level of a file, or an inline `mod x { ... }` inside one.
struct Module {
    file: usize,
    parent: Option<usize>,
    /// Whether it is an inline `mod x { ... }`.
    inline: bool,
    /// Where the files of its `mod x;` children are.
    dir: PathBuf,
    children: BTreeMap<String, usize>,
    /// Items defined here (other than modules), with the module that defines them
    /// (another one only for `#[macro_export]` macros, which live at the crate root).
    defs: BTreeMap<String, usize>,
    /// Its `use` leaves, followed when a path goes through this module.
    imports: Vec<Import>,
    /// The paths its code refers through, its own `use` items included.
    refs: Vec<Ref>,
}

/// One leaf of a `use` tree.
struct Import {
    /// The name it binds; `None` for a glob.
    binding: Option<String>,
    path: Vec<String>,
}

/// One path as written, where it was written.
struct Ref {
    path: Vec<String>,
    glob: bool,
    line: usize,
    /// From a `pub use` / `pub(..) use`.
    reexport: bool,
}

impl Ref {
    fn text(&self) -> String {
        let mut text = self.path.join("::");
        if self.glob {
            text.push_str("::*");
        }
        text
    }
}

/// Where a path lands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    /// A module itself: further segments go on from it.
    Module(usize),
    /// Something defined in this module (an item, or a name nothing here defines).
    Item(usize),
    /// Outside the crate.
    External,
    /// Not found (only while looking a name up).
    Unknown,
}

/// The module tree of one `src/` folder (its `lib.rs` and `main.rs` crates together).
#[derive(Default)]
struct Tree {
    /// Each file as shown (relative to the workspace root), and where it is.
    files: Vec<String>,
    paths: Vec<PathBuf>,
    file_ids: BTreeMap<PathBuf, usize>,
    modules: Vec<Module>,
    /// Files being loaded (a guard against `#[path]` loops).
    loading: Vec<PathBuf>,
}

impl Tree {
    fn load(root: &Path, src: &Path) -> Result<Self, String> {
        let mut tree = Self::default();
        for crate_root in ["lib.rs", "main.rs"] {
            let path = src.join(crate_root);
            if path.is_file() {
                tree.add_file_module(root, &path, None, src.to_path_buf())?;
            }
        }
        Ok(tree)
    }

    fn file_id(&mut self, root: &Path, path: &Path) -> usize {
        if let Some(&id) = self.file_ids.get(path) {
            return id;
        }
        let id = self.files.len();
        self.files.push(shown(root, path));
        self.paths.push(path.to_path_buf());
        self.file_ids.insert(path.to_path_buf(), id);
        id
    }

    fn new_module(
        &mut self,
        file: usize,
        parent: Option<usize>,
        inline: bool,
        dir: PathBuf,
    ) -> usize {
        self.modules.push(Module {
            file,
            parent,
            inline,
            dir,
            children: BTreeMap::new(),
            defs: BTreeMap::new(),
            imports: Vec::new(),
            refs: Vec::new(),
        });
        self.modules.len() - 1
    }

    /// Parses the file at `path` as a module; `None` when it is test-only or loops.
    fn add_file_module(
        &mut self,
        root: &Path,
        path: &Path,
        parent: Option<usize>,
        dir: PathBuf,
    ) -> Result<Option<usize>, String> {
        if self.loading.iter().any(|p| p == path) {
            return Ok(None);
        }
        let text =
            fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let ast = syn::parse_file(&text).map_err(|e| {
            let line = e.span().start().line;
            format!("cannot parse {}:{line}: {e}", shown(root, path))
        })?;
        if is_test_only(&ast.attrs) {
            return Ok(None);
        }
        let file = self.file_id(root, path);
        let module = self.new_module(file, parent, false, dir);
        self.loading.push(path.to_path_buf());
        let added = self.add_items(root, module, &ast.items);
        self.loading.pop();
        added.map(|()| Some(module))
    }

    fn add_items(&mut self, root: &Path, module: usize, items: &[Item]) -> Result<(), String> {
        for item in items {
            if is_test_only(item_attrs(item)) {
                continue;
            }
            match item {
                Item::Mod(child) => self.add_mod(root, module, child)?,
                Item::Use(item_use) => {
                    if item_use.leading_colon.is_some() {
                        continue;
                    }
                    let reexport = !matches!(item_use.vis, Visibility::Inherited);
                    for leaf in use_leaves(&item_use.tree) {
                        let binding = (!leaf.glob).then(|| leaf.binding.clone());
                        self.modules[module].imports.push(Import {
                            binding,
                            path: leaf.path.clone(),
                        });
                        self.modules[module].refs.push(Ref {
                            path: leaf.path,
                            glob: leaf.glob,
                            line: leaf.line,
                            reexport,
                        });
                    }
                }
                _ => {
                    self.add_def(module, item);
                    let mut collector = PathCollector {
                        refs: &mut self.modules[module].refs,
                    };
                    collector.visit_item(item);
                }
            }
        }
        Ok(())
    }

    fn add_def(&mut self, module: usize, item: &Item) {
        let name = match item {
            Item::Const(i) => &i.ident,
            Item::Enum(i) => &i.ident,
            Item::Fn(i) => &i.sig.ident,
            Item::Static(i) => &i.ident,
            Item::Struct(i) => &i.ident,
            Item::Trait(i) => &i.ident,
            Item::TraitAlias(i) => &i.ident,
            Item::Type(i) => &i.ident,
            Item::Union(i) => &i.ident,
            Item::Macro(i) => match &i.ident {
                Some(ident) => {
                    let exported = i.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                    if exported {
                        let crate_root = self.crate_root(module);
                        self.modules[crate_root]
                            .defs
                            .insert(ident.to_string(), module);
                    }
                    ident
                }
                None => return,
            },
            _ => return,
        };
        self.modules[module].defs.insert(name.to_string(), module);
    }

    fn add_mod(&mut self, root: &Path, module: usize, item: &syn::ItemMod) -> Result<(), String> {
        let name = item.ident.to_string();
        let path_attr = path_attr(&item.attrs);
        let child = if let Some((_, items)) = &item.content {
            let dir = self.modules[module]
                .dir
                .join(path_attr.as_deref().unwrap_or(&name));
            let file = self.modules[module].file;
            let child = self.new_module(file, Some(module), true, dir);
            self.add_items(root, child, items)?;
            Some(child)
        } else {
            let dir = &self.modules[module].dir;
            let found = match &path_attr {
                // Outside inline modules, `#[path]` is relative to the file's own folder.
                Some(path) if !self.modules[module].inline => {
                    let file = &self.paths[self.modules[module].file];
                    let base = file.parent().unwrap_or(dir);
                    Some(base.join(path)).filter(|p| p.is_file())
                }
                Some(path) => Some(dir.join(path)).filter(|p| p.is_file()),
                None => [
                    dir.join(format!("{name}.rs")),
                    dir.join(&name).join("mod.rs"),
                ]
                .into_iter()
                .find(|p| p.is_file()),
            };
            // A file that is not there is cfg'd out or generated: the compiler checks it.
            let Some(found) = found else { return Ok(()) };
            let child_dir = if path_attr.is_some() || found.ends_with("mod.rs") {
                found
                    .parent()
                    .map_or_else(|| dir.clone(), Path::to_path_buf)
            } else {
                dir.join(&name)
            };
            self.add_file_module(root, &found, Some(module), child_dir)?
        };
        if let Some(child) = child {
            self.modules[module].children.insert(name, child);
        }
        Ok(())
    }

    fn crate_root(&self, mut module: usize) -> usize {
        while let Some(parent) = self.modules[module].parent {
            module = parent;
        }
        module
    }

    /// Whether `module` is `ancestor` or inside it.
    fn is_within(&self, mut module: usize, ancestor: usize) -> bool {
        loop {
            if module == ancestor {
                return true;
            }
            match self.modules[module].parent {
                Some(parent) => module = parent,
                None => return false,
            }
        }
    }

    /// Whether a path written in `module` is one into this crate.
    fn is_local(&self, module: usize, first: &str) -> bool {
        matches!(first, "crate" | "self" | "super")
            || self.modules[module].children.contains_key(first)
    }

    /// Where `path`, written in `module`, lands.
    fn resolve(&self, module: usize, path: &[String], depth: usize) -> Target {
        let Some((first, mut rest)) = path.split_first() else {
            return Target::Module(module);
        };
        if depth > MAX_DEPTH {
            return Target::Unknown;
        }
        let mut at = match first.as_str() {
            "crate" => self.crate_root(module),
            "self" => module,
            "super" => match self.modules[module].parent {
                Some(parent) => parent,
                None => return Target::Unknown,
            },
            name => match self.lookup(module, name, depth) {
                Target::Module(found) => found,
                Target::Unknown => return Target::External,
                other => return other,
            },
        };
        while let Some((segment, tail)) = rest.split_first() {
            rest = tail;
            match segment.as_str() {
                "self" => continue,
                "super" => match self.modules[at].parent {
                    Some(parent) => at = parent,
                    None => return Target::Unknown,
                },
                name => match self.lookup(at, name, depth) {
                    Target::Module(found) => at = found,
                    Target::Unknown => return Target::Item(at),
                    other => return other,
                },
            }
        }
        Target::Module(at)
    }

    /// What `name` means inside `module`: a child, a definition, or an import.
    fn lookup(&self, module: usize, name: &str, depth: usize) -> Target {
        let here = &self.modules[module];
        if let Some(&child) = here.children.get(name) {
            return Target::Module(child);
        }
        if let Some(&defined_in) = here.defs.get(name) {
            return Target::Item(defined_in);
        }
        if let Some(import) = here
            .imports
            .iter()
            .find(|i| i.binding.as_deref() == Some(name))
        {
            return self.resolve(module, &import.path, depth + 1);
        }
        for glob in here.imports.iter().filter(|i| i.binding.is_none()) {
            if let Target::Module(from) = self.resolve(module, &glob.path, depth + 1)
                && from != module
            {
                let found = self.lookup(from, name, depth + 1);
                if found != Target::Unknown {
                    return found;
                }
            }
        }
        Target::Unknown
    }
}

/// The `#[path = "..."]` of a `mod`, if any.
fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|attr| match &attr.meta {
        Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Whether the attributes hold a `#[cfg(..)]` that only holds under `test`.
fn is_test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.parse_args::<Meta>().is_ok_and(|m| cfg_needs_test(&m))
    })
}

/// Whether a cfg predicate can only hold under `test`.
fn cfg_needs_test(meta: &Meta) -> bool {
    match meta {
        Meta::Path(path) => path.is_ident("test"),
        Meta::List(list) => {
            let parser = Punctuated::<Meta, syn::Token![,]>::parse_terminated;
            let Ok(args) = list.parse_args_with(parser) else {
                return false;
            };
            if list.path.is_ident("all") {
                args.iter().any(cfg_needs_test)
            } else if list.path.is_ident("any") {
                !args.is_empty() && args.iter().all(cfg_needs_test)
            } else {
                false
            }
        }
        Meta::NameValue(_) => false,
    }
}

fn item_attrs(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

fn impl_item_attrs(item: &ImplItem) -> &[Attribute] {
    match item {
        ImplItem::Const(i) => &i.attrs,
        ImplItem::Fn(i) => &i.attrs,
        ImplItem::Type(i) => &i.attrs,
        ImplItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

fn trait_item_attrs(item: &TraitItem) -> &[Attribute] {
    match item {
        TraitItem::Const(i) => &i.attrs,
        TraitItem::Fn(i) => &i.attrs,
        TraitItem::Type(i) => &i.attrs,
        TraitItem::Macro(i) => &i.attrs,
        _ => &[],
    }
}

fn line(span: Span) -> usize {
    span.start().line
}

/// One leaf of a `use` tree, with its whole path.
struct UseLeaf {
    path: Vec<String>,
    binding: String,
    glob: bool,
    line: usize,
}

/// The leaves of `use a::{b, c::{d as e, *}}`: `a::b`, `a::c::d` (as `e`), `a::c::*`.
fn use_leaves(tree: &UseTree) -> Vec<UseLeaf> {
    fn walk(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<UseLeaf>) {
        let (ident, rename) = match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(&p.tree, prefix, out);
                prefix.pop();
                return;
            }
            UseTree::Group(group) => {
                for tree in &group.items {
                    walk(tree, prefix, out);
                }
                return;
            }
            UseTree::Glob(glob) => {
                if !prefix.is_empty() {
                    out.push(UseLeaf {
                        path: prefix.clone(),
                        binding: String::new(),
                        glob: true,
                        line: line(glob.star_token.spans[0]),
                    });
                }
                return;
            }
            UseTree::Name(name) => (&name.ident, None),
            UseTree::Rename(rename) => (&rename.ident, Some(&rename.rename)),
        };
        let mut path = prefix.clone();
        if ident != "self" {
            path.push(ident.to_string());
        }
        let binding = match (rename, path.last()) {
            (Some(rename), _) => rename.to_string(),
            (None, Some(last)) => last.clone(),
            (None, None) => return,
        };
        out.push(UseLeaf {
            path,
            binding,
            glob: false,
            line: line(ident.span()),
        });
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

/// Collects the paths an item's code refers through (skipping `#[cfg(test)]` parts).
struct PathCollector<'a> {
    refs: &'a mut Vec<Ref>,
}

impl PathCollector<'_> {
    fn push(&mut self, path: Vec<String>, line: usize) {
        if path.len() >= 2 {
            self.refs.push(Ref {
                path,
                glob: false,
                line,
                reexport: false,
            });
        }
    }

    /// `crate::a::b`, `self::a`, `super::a` (and `$crate::a`) inside macro tokens.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(group) => self.scan_tokens(group.stream()),
                TokenTree::Ident(ident)
                    if ident == "crate" || ident == "self" || ident == "super" =>
                {
                    let mut path = vec![ident.to_string()];
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (trees.get(i + 1), trees.get(i + 2), trees.get(i + 3))
                    {
                        if a.as_char() != ':' || a.spacing() != Spacing::Joint || b.as_char() != ':'
                        {
                            break;
                        }
                        path.push(next.to_string());
                        i += 3;
                    }
                    self.push(path, line(ident.span()));
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for PathCollector<'_> {
    fn visit_item(&mut self, item: &'ast Item) {
        if !is_test_only(item_attrs(item)) {
            visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast ImplItem) {
        if !is_test_only(impl_item_attrs(item)) {
            visit::visit_impl_item(self, item);
        }
    }

    fn visit_trait_item(&mut self, item: &'ast TraitItem) {
        if !is_test_only(trait_item_attrs(item)) {
            visit::visit_trait_item(self, item);
        }
    }

    fn visit_field(&mut self, field: &'ast syn::Field) {
        if !is_test_only(&field.attrs) {
            visit::visit_field(self, field);
        }
    }

    fn visit_variant(&mut self, variant: &'ast syn::Variant) {
        if !is_test_only(&variant.attrs) {
            visit::visit_variant(self, variant);
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        if !is_test_only(&arm.attrs) {
            visit::visit_arm(self, arm);
        }
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if !is_test_only(&local.attrs) {
            visit::visit_local(self, local);
        }
    }

    /// Doc comments and other attributes do not count.
    fn visit_attribute(&mut self, _: &'ast Attribute) {}

    /// `pub(crate)` and `pub(in crate::x)` are no imports.
    fn visit_visibility(&mut self, _: &'ast Visibility) {}

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none()
            && let Some(first) = path.segments.first()
        {
            let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.push(segments, line(first.ident.span()));
        }
        visit::visit_path(self, path);
    }

    /// A `use` inside a function body.
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            for leaf in use_leaves(&item.tree) {
                self.refs.push(Ref {
                    path: leaf.path,
                    glob: leaf.glob,
                    line: leaf.line,
                    reexport: false,
                });
            }
        }
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        visit::visit_macro(self, mac);
        self.scan_tokens(mac.tokens.clone());
    }
}

// ---------------------------------------------------------------------------------------
// The file graph and its circles
// ---------------------------------------------------------------------------------------

/// Files, and for each import edge between two of them its first example.
struct FileGraph {
    files: Vec<String>,
    /// `(from, to)` → `"from.rs:LINE uses PATH"`, the first such line.
    edges: BTreeMap<(usize, usize), (usize, String)>,
}

impl FileGraph {
    fn build(root: &Path, src: &Path) -> Result<Self, String> {
        let tree = Tree::load(root, src)?;
        let mut edges: BTreeMap<(usize, usize), (usize, String)> = BTreeMap::new();
        for (id, module) in tree.modules.iter().enumerate() {
            for r in &module.refs {
                if !r.path.first().is_some_and(|first| tree.is_local(id, first)) {
                    continue;
                }
                let lands_in = match tree.resolve(id, &r.path, 0) {
                    Target::Module(m) | Target::Item(m) => m,
                    Target::External | Target::Unknown => continue,
                };
                if r.reexport && tree.is_within(lands_in, id) {
                    continue;
                }
                let (from, to) = (module.file, tree.modules[lands_in].file);
                if from == to {
                    continue;
                }
                let example = format!("{}:{} uses {}", tree.files[from], r.line, r.text());
                let entry = edges.entry((from, to)).or_insert((r.line, example.clone()));
                if r.line < entry.0 {
                    *entry = (r.line, example);
                }
            }
        }
        Ok(Self {
            files: tree.files,
            edges,
        })
    }

    /// The strongly connected sets of two or more files (Tarjan), each sorted.
    fn circles(&self) -> Vec<Vec<usize>> {
        struct Tarjan<'a> {
            next: &'a [Vec<usize>],
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on_stack: Vec<bool>,
            stack: Vec<usize>,
            counter: usize,
            found: Vec<Vec<usize>>,
        }
        impl Tarjan<'_> {
            fn visit(&mut self, v: usize) {
                self.index[v] = Some(self.counter);
                self.low[v] = self.counter;
                self.counter += 1;
                self.stack.push(v);
                self.on_stack[v] = true;
                for &w in self.next[v].iter() {
                    match self.index[w] {
                        None => {
                            self.visit(w);
                            self.low[v] = self.low[v].min(self.low[w]);
                        }
                        Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                        Some(_) => {}
                    }
                }
                if Some(self.low[v]) == self.index[v] {
                    let mut component = Vec::new();
                    while let Some(w) = self.stack.pop() {
                        self.on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        self.found.push(component);
                    }
                }
            }
        }
        let n = self.files.len();
        let mut next = vec![Vec::new(); n];
        for &(from, to) in self.edges.keys() {
            next[from].push(to);
        }
        let mut tarjan = Tarjan {
            next: &next,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            counter: 0,
            found: Vec::new(),
        };
        for v in 0..n {
            if tarjan.index[v].is_none() {
                tarjan.visit(v);
            }
        }
        let mut found = tarjan.found;
        for component in &mut found {
            component.sort_by(|a, b| self.files[*a].cmp(&self.files[*b]));
        }
        found.sort_by(|a, b| self.files[a[0]].cmp(&self.files[b[0]]));
        found
    }

    /// Each circle with its files and one example per edge; empty when there is none.
    fn describe_circles(&self) -> String {
        let mut out = String::new();
        for circle in self.circles() {
            let members: BTreeSet<usize> = circle.iter().copied().collect();
            let _ = writeln!(out, "a circle of {} files:", circle.len());
            for &file in &circle {
                let _ = writeln!(out, "    {}", self.files[file]);
            }
            let _ = writeln!(out, "  through:");
            let mut edges: Vec<_> = self
                .edges
                .iter()
                .filter(|((from, to), _)| members.contains(from) && members.contains(to))
                .collect();
            edges.sort_by_key(|((from, _), (line, _))| (&self.files[*from], *line));
            for ((_, to), (_, example)) in edges {
                let _ = writeln!(out, "    {example}  (-> {})", self.files[*to]);
            }
            out.push('\n');
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// The checker's own tests, on small crates in temporary folders
// ---------------------------------------------------------------------------------------

mod checker {
    use super::*;

    /// Writes `files` (path under `fixture/src/`, text) and builds their file graph.
    fn graph(files: &[(&str, &str)]) -> FileGraph {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = write_src(dir.path(), files);
        FileGraph::build(dir.path(), &src).expect("fixture builds")
    }

    fn write_src(root: &Path, files: &[(&str, &str)]) -> PathBuf {
        let src = root.join("fixture").join("src");
        for (path, text) in files {
            let path = src.join(path);
            fs::create_dir_all(path.parent().expect("a parent")).expect("create dirs");
            fs::write(&path, text).expect("write fixture file");
        }
        src
    }

    /// The edges as `from -> to` with the `fixture/src/` prefix dropped.
    fn edges(graph: &FileGraph) -> Vec<String> {
        let short = |id: usize| {
            graph.files[id]
                .trim_start_matches("fixture/src/")
                .to_string()
        };
        graph
            .edges
            .keys()
            .map(|&(from, to)| format!("{} -> {}", short(from), short(to)))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    fn circle_files(graph: &FileGraph) -> Vec<Vec<String>> {
        graph
            .circles()
            .into_iter()
            .map(|c| c.into_iter().map(|f| graph.files[f].clone()).collect())
            .collect()
    }

    #[test]
    fn finds_a_known_circle() {
        let graph = graph(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("a.rs", "use crate::b::B;\npub struct A;\n"),
            ("b.rs", "pub struct B;\n\nfn f(a: crate::a::A) {}\n"),
            ("c.rs", "use crate::a::A;\n"),
        ]);
        assert_eq!(
            circle_files(&graph),
            vec![vec![
                "fixture/src/a.rs".to_string(),
                "fixture/src/b.rs".to_string()
            ]]
        );
        let text = graph.describe_circles();
        assert!(
            text.contains("fixture/src/a.rs:1 uses crate::b::B"),
            "{text}"
        );
        assert!(
            text.contains("fixture/src/b.rs:3 uses crate::a::A"),
            "{text}"
        );
        assert!(!text.contains("c.rs"), "{text}");
    }

    #[test]
    fn no_circle_no_report() {
        let graph = graph(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "pub struct A;\n"),
            ("b.rs", "use crate::a::A;\n"),
        ]);
        assert_eq!(edges(&graph), ["b.rs -> a.rs"]);
        assert_eq!(graph.describe_circles(), "");
    }

    #[test]
    fn reexports_through_the_root_resolve_to_the_defining_file() {
        let graph = graph(&[
            (
                "lib.rs",
                "mod error;\nmod gather;\nmod other;\n\
                 pub use error::{Error, Failure as Fail};\npub use gather::*;\n",
            ),
            ("error.rs", "pub struct Error;\npub struct Failure;\n"),
            (
                "gather.rs",
                "use crate::{Error, Fail};\npub struct Gather;\n\
                 fn f() -> Result<(), crate::Error> { Ok(()) }\n",
            ),
            ("other.rs", "pub(crate) fn g(_: crate::Gather) {}\n"),
        ]);
        assert_eq!(
            edges(&graph),
            ["gather.rs -> error.rs", "other.rs -> gather.rs"]
        );
        assert!(graph.circles().is_empty());
    }

    #[test]
    fn reexports_through_a_mod_rs_and_globs_resolve() {
        let graph = graph(&[
            ("lib.rs", "pub mod eval;\nmod user;\n"),
            (
                "eval/mod.rs",
                "mod run;\nmod store;\npub use run::*;\npub(crate) use store::Store;\n",
            ),
            ("eval/run.rs", "pub struct Run;\n"),
            ("eval/store.rs", "pub struct Store;\n"),
            ("user.rs", "use crate::eval::{Run, Store};\n"),
        ]);
        assert_eq!(
            edges(&graph),
            ["user.rs -> eval/run.rs", "user.rs -> eval/store.rs"]
        );
    }

    #[test]
    fn super_and_self_resolve() {
        let graph = graph(&[
            ("lib.rs", "mod x;\npub struct Top;\n"),
            (
                "x.rs",
                "mod y;\npub struct X;\nfn f() -> self::y::Y { todo!() }\n\
                 mod inner {\n    use super::X;\n}\n",
            ),
            (
                "x/y.rs",
                "pub struct Y;\nuse super::X;\nfn f(_: super::super::Top) {}\n",
            ),
        ]);
        assert_eq!(
            edges(&graph),
            ["x.rs -> x/y.rs", "x/y.rs -> lib.rs", "x/y.rs -> x.rs"]
        );
        assert_eq!(circle_files(&graph).len(), 1);
    }

    #[test]
    fn cfg_test_code_adds_no_edge() {
        let graph = graph(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            (
                "a.rs",
                "pub fn f() {}\n\
                 #[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::b::*;\n}\n\
                 #[cfg(test)]\nmod more_tests;\n\
                 #[cfg(all(test, unix))]\nfn helper() -> crate::b::B { todo!() }\n\
                 #[cfg(not(test))]\nfn real() -> crate::c::C { todo!() }\n",
            ),
            ("a/more_tests.rs", "use crate::b::B;\n"),
            ("b.rs", "use crate::a::f;\npub struct B;\n"),
            ("c.rs", "pub struct C;\n"),
        ]);
        assert_eq!(edges(&graph), ["a.rs -> c.rs", "b.rs -> a.rs"]);
        assert!(graph.circles().is_empty());
    }

    #[test]
    fn code_paths_and_macro_paths_count() {
        let graph = graph(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
            ("a.rs", "fn f() { let _ = vec![crate::b::make()]; }\n"),
            ("b.rs", "pub fn make() {}\n"),
            (
                "c.rs",
                "fn g(x: u8) -> bool { matches!(x, crate::d::ONE) }\n",
            ),
            (
                "d.rs",
                "pub const ONE: u8 = 1;\n/// Links like [`crate::a`] do not count.\npub struct D;\n",
            ),
        ]);
        assert_eq!(edges(&graph), ["a.rs -> b.rs", "c.rs -> d.rs"]);
    }

    #[test]
    fn path_attributes_and_missing_files_do_not_crash() {
        let graph = graph(&[
            (
                "lib.rs",
                "#[path = \"elsewhere.rs\"]\nmod a;\n#[path = \"gone.rs\"]\nmod b;\nmod missing;\n\
                 #[path = \"lib.rs\"]\nmod again;\npub struct Top;\n",
            ),
            ("elsewhere.rs", "fn f(_: crate::Top) {}\n"),
        ]);
        assert_eq!(edges(&graph), ["elsewhere.rs -> lib.rs"]);
    }

    #[test]
    fn a_parse_error_names_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = write_src(dir.path(), &[("lib.rs", "mod a;\n"), ("a.rs", "fn (\n")]);
        let error = FileGraph::build(dir.path(), &src)
            .err()
            .expect("a parse error");
        assert!(error.contains("fixture/src/a.rs:1"), "{error}");
    }

    #[test]
    fn long_files_need_the_marker() {
        let body = "fn f() {}\n".repeat(LONG_FILE_LINES);
        let with = format!(
            "//! A table.\n//!\n{LONG_FILE_MARKER} one table, split it and it reads worse.\n{body}"
        );
        let without = format!("//! A table.\n{body}");
        let late = format!("//! A table.\n\nuse std::fmt;\n{LONG_FILE_MARKER} too late.\n{body}");
        let generated =
            format!("// @generated by a script.\n\n//! Data.\n{LONG_FILE_MARKER} data.\n{body}");
        let dir = tempfile::tempdir().expect("temp dir");
        let src = write_src(
            dir.path(),
            &[
                ("lib.rs", &with),
                ("short.rs", "fn f() {}\n"),
                ("deep/without.rs", &without),
                ("late.rs", &late),
                ("generated.rs", &generated),
                ("exactly.rs", &body),
            ],
        );
        let offenders = long_files_without_reason(dir.path(), &src).expect("fixture reads");
        assert_eq!(
            offenders,
            [
                format!(
                    "  fixture/src/deep/without.rs: {} lines",
                    LONG_FILE_LINES + 1
                ),
                format!("  fixture/src/late.rs: {} lines", LONG_FILE_LINES + 4),
            ]
        );
    }
}
