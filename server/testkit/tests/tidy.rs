//! Tidy: what review would otherwise have to catch, as ordinary tests that read the source tree
//! (after rust-analyzer's `tidy.rs`).
//!
//! - The engine (`server/core/src`) is a stack of floors (`FLOORS`): a module imports only from
//!   its own floor or below, and no two engine modules import each other, directly or round a
//!   cycle (a module may use its own folder's `mod.rs`, which holds what the folder's files share).
//! - The agents' JavaScript string rules are written once (`js.rs`): no other engine file trims
//!   or splits white space Rust's way.
//! - Every Rust source file starts with its `//!` paragraph, and none holds more than
//!   `MAX_LINES` lines before its tests.
//!
//! Imports are read from the text: `crate::`, `super::` and `self::` paths (use trees expanded),
//! the engine's re-exports at its root, and a module's own children named by relative path;
//! comments, string literals and `#[cfg(test)]` code are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The engine's floors, bottom up: each top-level module (or file) of `server/core/src` and the
/// floor it lives on.
const FLOORS: &[(&str, u8)] = &[
    // Text and JSON: the agents' JavaScript rules, terminal cells, JSON as they write it, time,
    // ids, the dialects, errors and diagnostics, shared type names, omp's title slot line; and
    // the threads calls may use.
    ("js", 0),
    ("cells", 0),
    ("json", 0),
    ("json_scan", 0),
    ("time", 0),
    ("ids", 0),
    ("dialect", 0),
    ("error", 0),
    ("diagnostics", 0),
    ("type_names", 0),
    ("title_slot", 0),
    ("parallel", 0),
    // An entry's facts, read from its JSON: row text, search text, filter flags.
    ("facts", 1),
    // Entries: one line read into its index fields and facts.
    ("entry", 2),
    ("message_line", 2),
    ("entry_value", 2),
    // The session: reading, the index, labels, leaf, names, storage and writes, the tree.
    ("reader", 3),
    ("session", 3),
    ("title_cleaning", 3),
    ("tree", 3),
    // An entry and a session as markdown for a reader (the entry named by its row text).
    ("describe", 3),
    // What a path means: the model's context, the chat's transcript.
    ("context", 4),
    ("transcript", 4),
    // The `/tree` view: rows, filters, search, folding, navigation.
    ("view", 5),
    // Operations over a session: snapshots, summaries, the explicit migrate.
    ("snapshot", 6),
    ("summary", 6),
    ("migrate", 6),
    // What a list of sessions shows of a session file.
    ("listing", 6),
    // The synthetic-session generator, for tests and benchmarks only.
    ("synth", 7),
];

/// Lines a source file may hold before its tests.
const MAX_LINES: usize = 800;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut items: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    items.sort();
    for path in items {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source folders of the workspace's crates (not their tests, benches or fuzz targets).
fn source_dirs() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs = vec![root.join("protocol-ext/src")];
    for item in std::fs::read_dir(root.join("server")).expect("server/") {
        let src = item.expect("entry").path().join("src");
        if src.is_dir() {
            dirs.push(src);
        }
    }
    dirs.sort();
    dirs
}

/// Source text with comments, string and character literals blanked (lengths kept).
fn strip_comments_and_strings(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = src[i..].find('\n').map_or(b.len(), |k| i + k);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = src[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let from = i + 2 + hashes;
                let end = src[from..]
                    .find(&close)
                    .map_or(b.len(), |k| from + k + close.len());
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i, (j + 1).min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{1f}'), not a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    src[i + 3..].find('\'').map(|k| i + 3 + k + 1)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 3)
                } else {
                    src[i + 1..]
                        .chars()
                        .next()
                        .filter(|c| c.len_utf8() > 1)
                        .map(|c| i + 1 + c.len_utf8())
                        .filter(|&k| b.get(k) == Some(&b'\''))
                        .map(|k| k + 1)
                };
                match end {
                    Some(end) => {
                        blank(&mut out, i, end);
                        i = end;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// The end of the item that starts at `from` (a `;` or a balanced `{…}`).
fn item_end(code: &str, from: usize) -> usize {
    let b = code.as_bytes();
    let mut depth = 0usize;
    for (k, &c) in b.iter().enumerate().skip(from) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k + 1;
                }
            }
            b';' if depth == 0 => return k + 1,
            _ => {}
        }
    }
    b.len()
}

/// The code without `#[cfg(test)]` items (test modules, test-only declarations), and the names
/// of the child modules declared test-only.
fn without_tests(code: &str) -> (String, BTreeSet<String>) {
    let mut out = code.to_owned();
    let mut test_mods = BTreeSet::new();
    let mut from = 0;
    while let Some(k) = out[from..].find("#[cfg(test)]") {
        let at = from + k;
        let end = item_end(&out, at + "#[cfg(test)]".len());
        let item = out[at..end].to_owned();
        let words: Vec<&str> = item.split_whitespace().collect();
        if let Some(p) = words.iter().position(|w| *w == "mod") {
            if let Some(name) = words.get(p + 1) {
                test_mods.insert(name.trim_end_matches(';').to_owned());
            }
        }
        out.replace_range(at..end, &" ".repeat(end - at));
        from = at + 1;
    }
    (out, test_mods)
}

/// Lines of a file before its `#[cfg(test)] mod tests`.
fn lines_before_tests(src: &str) -> usize {
    let code = strip_comments_and_strings(src);
    let cut = code.find("#[cfg(test)]\nmod tests").unwrap_or(code.len());
    src[..cut].lines().count()
}

/// The module path of a file under `src`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(src)
        .expect("under src")
        .with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Expands a use tree (`a::{b, c::{d, self}}`) into its paths.
fn expand_tree(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    match tree.find('{') {
        None => {
            let path = format!("{prefix}{tree}");
            let path = path.split(" as ").next().unwrap_or("").trim();
            let path = path.strip_suffix("::self").unwrap_or(path);
            out.push(path.replace(' ', ""));
        }
        Some(open) => {
            let head = format!("{prefix}{}", &tree[..open]);
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if !inner[start..k].trim().is_empty() {
                            expand_tree(&head, &inner[start..k], out);
                        }
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            if !inner[start..].trim().is_empty() {
                expand_tree(&head, &inner[start..], out);
            }
        }
    }
}

/// Every path a file's code names: use trees expanded, and `crate::`/`super::`/`self::` paths
/// elsewhere.
fn named_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(k) = rest.find("use ") {
        let before = rest[..k].chars().last();
        let after = &rest[k + 4..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = after.find(';').unwrap_or(after.len());
        expand_tree("", &after[..end], &mut out);
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(k) = code[from..].find(start) {
            let at = from + k;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            out.push(code[at..end].trim_end_matches(':').to_owned());
        }
    }
    out
}

/// The engine's modules and the imports between them.
struct Graph {
    /// Module path → the file it is in.
    files: BTreeMap<Vec<String>, PathBuf>,
    /// Module → modules it imports (not its own ancestors).
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
}

fn engine_graph() -> Graph {
    let src = workspace().join("server/core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut modules: BTreeMap<Vec<String>, PathBuf> = BTreeMap::new();
    let mut code_of: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).expect("read");
        let (code, test_mods) = without_tests(&strip_comments_and_strings(&text));
        for name in test_mods {
            let mut child = module.clone();
            child.push(name);
            test_only.insert(child);
        }
        modules.insert(module.clone(), file.clone());
        code_of.insert(module, code);
    }
    modules.retain(|m, _| !test_only.iter().any(|t| m.starts_with(t)));
    // The root's re-exports (`pub use session::{OpenOptions, Session}`): name → module.
    let mut reexports: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut root_paths = Vec::new();
    let root_code = &code_of[&Vec::new()];
    for line in root_code
        .lines()
        .filter(|l| l.trim_start().starts_with("pub use "))
    {
        let tree = line
            .trim()
            .trim_start_matches("pub use ")
            .trim_end_matches(';');
        expand_tree("", tree, &mut root_paths);
    }
    for path in root_paths {
        let parts: Vec<&str> = path.split("::").collect();
        if let (Some(name), Some(first)) = (parts.last(), parts.first()) {
            reexports.insert((*name).to_owned(), vec![(*first).to_owned()]);
        }
    }
    let resolve = |module: &[String], path: &str| -> Option<Vec<String>> {
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = match segs.first() {
            Some(&"crate") => {
                segs.remove(0);
                Vec::new()
            }
            Some(&"super") | Some(&"self") => {
                let mut base = module.to_vec();
                while let Some(&first) = segs.first() {
                    match first {
                        "super" => {
                            base.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    segs.remove(0);
                }
                base
            }
            _ => return None,
        };
        if base.is_empty() {
            if let Some(target) = segs.first().and_then(|s| reexports.get(*s)) {
                return Some(target.clone());
            }
        }
        let mut best = None;
        for k in 0..=segs.len() {
            let mut cand = base.clone();
            cand.extend(segs[..k].iter().map(|s| (*s).to_owned()));
            if modules.contains_key(&cand) {
                best = Some(cand);
            }
        }
        base.clear();
        best
    };
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, code) in &code_of {
        if !modules.contains_key(module) {
            continue;
        }
        let mut targets = BTreeSet::new();
        for path in named_paths(code) {
            if let Some(t) = resolve(module, &path) {
                targets.insert(t);
            }
        }
        // Children named by relative path (`load::x`, `pub use load::Y`).
        for line in code.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let Some(p) = words.iter().position(|w| *w == "mod") {
                if let Some(name) = words.get(p + 1).and_then(|n| n.strip_suffix(';')) {
                    let mut child = module.clone();
                    child.push(name.to_owned());
                    let named = code.match_indices(&format!("{name}::")).any(|(k, _)| {
                        k == 0 || {
                            let c = code.as_bytes()[k - 1];
                            !(c.is_ascii_alphanumeric() || c == b'_' || c == b':')
                        }
                    });
                    if named && modules.contains_key(&child) {
                        targets.insert(child);
                    }
                }
            }
        }
        targets.retain(|t| !t.is_empty() && t != module && !module.starts_with(t));
        edges.insert(module.clone(), targets);
    }
    Graph {
        files: modules,
        edges,
    }
}

fn floor_of(module: &[String]) -> u8 {
    let top = module.first().map(String::as_str).unwrap_or("");
    match FLOORS.iter().find(|(name, _)| *name == top) {
        Some(&(_, floor)) => floor,
        None if module.is_empty() => u8::MAX,
        None => panic!(
            "engine module `{top}` has no floor: add it to FLOORS in server/testkit/tests/tidy.rs"
        ),
    }
}

fn show(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

#[test]
fn engine_modules_import_only_from_their_floor_or_below() {
    let graph = engine_graph();
    assert!(
        graph.files.len() > 40,
        "{} modules found",
        graph.files.len()
    );
    let mut wrong = Vec::new();
    for (module, targets) in &graph.edges {
        for target in targets {
            if floor_of(target) > floor_of(module) {
                wrong.push(format!(
                    "{} (floor {}) imports {} (floor {})",
                    show(module),
                    floor_of(module),
                    show(target),
                    floor_of(target)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports from a floor above:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_import_cycle_between_engine_modules() {
    let graph = engine_graph();
    // Tarjan's strongly connected components; any with two modules or more is a cycle.
    struct State<'g> {
        edges: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g [String], usize>,
        low: BTreeMap<&'g [String], usize>,
        stack: Vec<&'g [String]>,
        on_stack: BTreeSet<&'g [String]>,
        cycles: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g [String]) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_slice();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(show(w));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.cycles.push(component);
            }
        }
    }
    let mut state = State {
        edges: &graph.edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        cycles: Vec::new(),
    };
    for module in graph.edges.keys() {
        if !state.index.contains_key(module.as_slice()) {
            visit(&mut state, module);
        }
    }
    let cycles: Vec<String> = state.cycles.iter().map(|c| c.join(" ↔ ")).collect();
    assert!(
        cycles.is_empty(),
        "modules that import each other:\n{}",
        cycles.join("\n")
    );
}

/// The reader of the graph finds what it should: a known edge, a known child edge, the root's
/// re-exports, and no edge out of a comment or a string.
#[test]
fn the_import_reader_reads_imports() {
    let graph = engine_graph();
    let edges = |m: &str| -> BTreeSet<String> {
        let key: Vec<String> = m.split("::").map(str::to_owned).collect();
        graph.edges[&key].iter().map(|t| show(t)).collect()
    };
    assert!(edges("session").contains("tree"), "{:?}", edges("session"));
    assert!(
        edges("session").contains("session::load"),
        "{:?}",
        edges("session")
    );
    assert!(
        edges("view::flatten").contains("session"),
        "{:?}",
        edges("view::flatten")
    );
    let mut paths = Vec::new();
    expand_tree("", "crate::a::{b, c::{d as e, self}}", &mut paths);
    assert_eq!(paths, ["crate::a::b", "crate::a::c::d", "crate::a::c"]);
    let code = strip_comments_and_strings(
        "// crate::x::y\nlet s = \"crate::z\"; let r = r#\"crate::w\"#; let c = '\"'; crate::v::f();",
    );
    assert_eq!(named_paths(&code), ["crate::v::f"]);
}

/// Rust's white space is not JavaScript's (U+0085, U+FEFF): the agents' rules are `js::trim`,
/// `js::words`, `js::is_whitespace`.
#[test]
fn white_space_is_judged_the_agents_way_in_one_place() {
    let src = workspace().join("server/core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let rust_ways = [
        ".trim()",
        ".trim_start()",
        ".trim_end()",
        "str::trim",
        "is_whitespace()",
        "char::is_whitespace",
        ".split_whitespace()",
    ];
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src");
        // The rules themselves; the generator writes text of its own.
        if rel == Path::new("js.rs") || rel.starts_with("synth") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("read");
        let (code, _) = without_tests(&strip_comments_and_strings(&text));
        for (n, line) in code.lines().enumerate() {
            if rust_ways.iter().any(|w| line.contains(w)) {
                found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "use crate::js for the agents' white space:\n{}",
        found.join("\n")
    );
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let mut files = Vec::new();
    for dir in source_dirs() {
        rust_files(&dir, &mut files);
    }
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).expect("read");
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` paragraph:\n{}",
        missing.join("\n")
    );
}

#[test]
fn no_source_file_is_too_long() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in source_dirs() {
        rust_files(&dir, &mut files);
    }
    let mut long = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).expect("in the workspace");
        let lines = lines_before_tests(&std::fs::read_to_string(file).expect("read"));
        if lines > MAX_LINES {
            long.push(format!(
                "{}: {lines} lines (at most {MAX_LINES})",
                rel.display()
            ));
        }
    }
    assert!(
        long.is_empty(),
        "files to split by concern (a few hundred lines each):\n{}",
        long.join("\n")
    );
}
