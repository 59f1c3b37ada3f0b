//! The layers held by a test: every `crate::` and `super::` path in `src/` is read, each
//! file placed in its layer (the folder it sits in under `src/`), and an import that
//! runs up a layer, or a cycle between files, fails the test with both ends named; and
//! the rules docs/architecture.md states about crates and `unsafe` are checked here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers from the bottom up: a file may import its own layer and those below.
const LAYERS: [&str; 8] = [
    "base", "model", "data", "run", "features", "tui", "cli", "dev",
];

/// The module path of a source file (`src/base/text/cut.rs` → `base::text::cut`,
/// `src/base/text/mod.rs` → `base::text`, `src/lib.rs` → ``).
fn module_of(file: &str) -> String {
    let rel = file.trim_start_matches("src/").trim_end_matches(".rs");
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    if rel == "lib" {
        return String::new();
    }
    rel.replace('/', "::")
}

/// Code without its comments (`//` to the end of the line; a `//` inside a string is
/// rare enough in paths' lines not to matter) and without its unit tests (a test module's
/// `super` is its file, not the file's parent; what tests import is not the layering).
fn code_of(text: &str) -> String {
    let code: Vec<&str> = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect();
    let mut out = Vec::with_capacity(code.len());
    let mut i = 0;
    while i < code.len() {
        // A `#[cfg(test)] mod NAME { … }` block is left out, braces counted; the code
        // after it is read on.
        let opens_test = code[i].trim() == "#[cfg(test)]"
            && code
                .get(i + 1)
                .is_some_and(|l| l.trim_start().starts_with("mod ") && l.contains('{'));
        if opens_test {
            let mut depth = 0i64;
            i += 1;
            while i < code.len() {
                depth += code[i].matches('{').count() as i64;
                depth -= code[i].matches('}').count() as i64;
                i += 1;
                if depth <= 0 {
                    break;
                }
            }
            continue;
        }
        out.push(code[i]);
        i += 1;
    }
    out.join("\n")
}

/// The files a `#[cfg(test)] mod NAME;` of `file` declares (with its `#[path]`, if any):
/// unit tests, not the layering.
fn test_files_of(file: &str, text: &str) -> Vec<String> {
    let dir = match file
        .strip_suffix("/mod.rs")
        .or(file.strip_suffix("/lib.rs"))
    {
        Some(d) => d.to_string(),
        None => file.trim_end_matches(".rs").to_string(),
    };
    let parent = file.rsplit_once('/').map_or("", |(p, _)| p);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if *l != "#[cfg(test)]" {
            continue;
        }
        let mut path = None;
        for next in &lines[i + 1..] {
            if let Some(p) = next
                .strip_prefix("#[path = \"")
                .and_then(|p| p.strip_suffix("\"]"))
            {
                path = Some(format!("{parent}/{p}"));
            } else if let Some(name) = next.strip_prefix("mod ").and_then(|n| n.strip_suffix(';')) {
                out.push(path.take().unwrap_or_else(|| format!("{dir}/{name}.rs")));
                break;
            } else {
                break;
            }
        }
    }
    out
}

/// What each module's file re-exports from its children (`pub use child::Item;`,
/// `pub use child::{A, B};`): (module, item) → the child module it comes from.
fn reexports(files: &[(String, String)]) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for (file, text) in files {
        let module = module_of(file);
        for line in code_of(text).lines() {
            let l = line.trim();
            let Some(rest) = l
                .strip_prefix("pub use ")
                .or_else(|| l.strip_prefix("pub(crate) use "))
                .or_else(|| l.strip_prefix("pub(super) use "))
            else {
                continue;
            };
            let rest = rest.trim_end_matches(';').trim_start_matches("self::");
            let Some((child, items)) = rest.split_once("::") else {
                continue;
            };
            let child_module = if module.is_empty() {
                child.to_string()
            } else {
                format!("{module}::{child}")
            };
            let items = items.trim_start_matches('{').trim_end_matches('}');
            for item in items.split(',') {
                let item = item.trim();
                let name = item.rsplit(" as ").next().unwrap_or(item).trim();
                if !name.is_empty() && name != "self" && !name.contains("::") {
                    out.insert((module.clone(), name.to_string()), child_module.clone());
                }
            }
        }
    }
    out
}

/// Every module path a file's code names: `crate::a::b` as written, `super::x` and
/// `self::x` resolved against the file's module, a `{…}` group expanded one level.
fn paths_named(module: &str, code: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = |w: &str| bytes[i..].iter().take(w.len()).copied().eq(w.chars());
        let before_ok = i == 0 || !(ident(bytes[i - 1]) || bytes[i - 1] == ':');
        let root = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|w| before_ok && starts(w));
        let Some(root) = root else {
            i += 1;
            continue;
        };
        // Read `a::b::c` (and further `super::`), then a possible `{…}` group.
        let mut j = i;
        let mut segs: Vec<String> = Vec::new();
        loop {
            let s: String = bytes[j..].iter().take_while(|c| ident(**c)).collect();
            if s.is_empty() {
                break;
            }
            j += s.len();
            segs.push(s);
            if bytes[j..].starts_with(&[':', ':']) {
                j += 2;
            } else {
                break;
            }
        }
        let mut group = Vec::new();
        if j < bytes.len() && bytes[j] == '{' {
            let end = bytes[j..]
                .iter()
                .position(|c| *c == '}')
                .map_or(bytes.len(), |e| j + e);
            let inner: String = bytes[j + 1..end].iter().collect();
            group = inner
                .split(',')
                .map(|g| g.trim().split("::").next().unwrap_or("").trim().to_string())
                .filter(|g| !g.is_empty() && g != "self")
                .collect();
            j = end;
        }
        i = j.max(i + 1);
        // The base module the path starts from.
        let mut base: Vec<String> = if module.is_empty() {
            Vec::new()
        } else {
            module.split("::").map(String::from).collect()
        };
        let mut rest = segs.into_iter().peekable();
        match root {
            "crate::" => {
                rest.next();
                base.clear();
            }
            // `self` is the file's module itself.
            "self::" => {
                rest.next();
            }
            _ => {
                // Each `super` goes up one module.
                while rest.peek().is_some_and(|s| s == "super") {
                    rest.next();
                    base.pop();
                }
            }
        }
        let path: Vec<String> = base.into_iter().chain(rest).collect();
        let joined = path.join("::");
        out.push(joined.clone());
        for g in group {
            out.push(if joined.is_empty() {
                g
            } else {
                format!("{joined}::{g}")
            });
        }
    }
    out
}

/// What the layer check found wrong, one line each.
fn problems(files: &[(String, String)]) -> Vec<String> {
    let modules: BTreeMap<String, String> = files
        .iter()
        .map(|(f, _)| (module_of(f), f.clone()))
        .collect();
    let reexported = reexports(files);
    // The file a path lands in: its longest prefix that is a module, or the child an
    // item that module re-exports comes from.
    let target = |path: &str| -> Option<&String> {
        let segs: Vec<&str> = path.split("::").collect();
        (1..=segs.len()).rev().find_map(|n| {
            let m = segs[..n].join("::");
            let child = segs
                .get(n)
                .and_then(|item| reexported.get(&(m.clone(), item.to_string())));
            match child {
                Some(c) => modules.get(c),
                None => modules.get(&m),
            }
        })
    };
    let layer_of = |file: &str| -> Option<usize> {
        let top = module_of(file);
        let top = top.split("::").next()?;
        LAYERS.iter().position(|l| *l == top)
    };
    let mut problems = Vec::new();
    let mut edges: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for (file, text) in files {
        let module = module_of(file);
        for path in paths_named(&module, &code_of(text)) {
            let Some(to) = target(&path) else { continue };
            if to == file {
                continue;
            }
            edges.entry(file).or_default().insert(to);
            if let (Some(a), Some(b)) = (layer_of(file), layer_of(to)) {
                if b > a {
                    problems.push(format!(
                        "{file} imports {to} (`{path}`): that runs up from layer `{}` to `{}`",
                        LAYERS[a], LAYERS[b]
                    ));
                }
            }
        }
    }
    // A module's `mod.rs` declares and re-exports its children; a child naming its
    // parent's items is the one way down that is not a cycle. Every other cycle is.
    let parent_of = |f: &String| -> Option<&String> {
        let m = module_of(f);
        let (p, _) = m.rsplit_once("::")?;
        modules.get(p)
    };
    let graph: BTreeMap<&String, Vec<&String>> = edges
        .iter()
        .map(|(from, tos)| {
            let tos = tos
                .iter()
                .copied()
                .filter(|to| parent_of(to) != Some(from))
                .collect();
            (*from, tos)
        })
        .collect();
    for cycle in cycles(&graph) {
        let names: Vec<&str> = cycle.iter().map(|s| s.as_str()).collect();
        problems.push(format!("a cycle between files: {}", names.join(" → ")));
    }
    problems.sort();
    problems.dedup();
    problems
}

/// One cycle through each strongly connected group of two or more files (Tarjan), as
/// the files in order with the first again at the end.
fn cycles<'a>(graph: &BTreeMap<&'a String, Vec<&'a String>>) -> Vec<Vec<&'a String>> {
    struct Walk<'g, 'a> {
        graph: &'g BTreeMap<&'a String, Vec<&'a String>>,
        index: BTreeMap<&'a String, usize>,
        low: BTreeMap<&'a String, usize>,
        stack: Vec<&'a String>,
        on: BTreeSet<&'a String>,
        groups: Vec<Vec<&'a String>>,
    }
    fn visit<'a>(w: &mut Walk<'_, 'a>, v: &'a String) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on.insert(v);
        for &to in w.graph.get(v).into_iter().flatten() {
            if !w.index.contains_key(to) {
                visit(w, to);
                let l = w.low[v].min(w.low[to]);
                w.low.insert(v, l);
            } else if w.on.contains(to) {
                let l = w.low[v].min(w.index[to]);
                w.low.insert(v, l);
            }
        }
        if w.low[v] == w.index[v] {
            let mut group = Vec::new();
            while let Some(x) = w.stack.pop() {
                w.on.remove(x);
                group.push(x);
                if x == v {
                    break;
                }
            }
            if group.len() > 1 {
                w.groups.push(group);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        groups: Vec::new(),
    };
    for &v in graph.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    // A path round each group: from its first file, along edges inside it, back.
    w.groups
        .into_iter()
        .map(|g| {
            let inside: BTreeSet<&String> = g.iter().copied().collect();
            let start = *inside.iter().next().expect("a group has files");
            let mut path = vec![start];
            let mut seen = BTreeSet::from([start]);
            let mut at = start;
            loop {
                let next = graph[at].iter().copied().filter(|t| inside.contains(*t));
                let next: Vec<&String> = next.collect();
                if next.contains(&start) && path.len() > 1 {
                    path.push(start);
                    break;
                }
                match next.iter().find(|t| !seen.contains(**t)) {
                    Some(t) => {
                        seen.insert(t);
                        path.push(t);
                        at = t;
                    }
                    None => {
                        path.push(start);
                        break;
                    }
                }
            }
            path
        })
        .collect()
}

/// Every `.rs` file under `src/` except the binary's `main.rs`, with its text.
/// The files of `src/` the layers hold: all but `main.rs` and unit-test files.
fn sources() -> Vec<(String, String)> {
    let mut out = crate::common::src_files();
    out.retain(|(f, _)| f != "src/main.rs");
    let tests: BTreeSet<String> = out.iter().flat_map(|(f, t)| test_files_of(f, t)).collect();
    out.retain(|(f, _)| !tests.contains(f));
    out
}

#[test]
fn every_import_in_src_runs_down_the_layers_and_no_files_import_each_other_round() {
    let files = sources();
    assert!(files.len() > 400, "{} files", files.len());
    let found = problems(&files);
    assert!(found.is_empty(), "{}", found.join("\n"));
    // No terminal below the TUI, no runtime, HTTP or database in its drawing, and
    // `unsafe` allowed in the allocator's settings alone.
    let names = |code: &str, krate: &str| {
        code.contains(&format!("{krate}::")) || code.contains(&format!("use {krate}"))
    };
    let mut bad = Vec::new();
    for (file, text) in &files {
        let code = code_of(text);
        let below_tui = ["src/model/", "src/data/", "src/run/", "src/features/"]
            .iter()
            .any(|p| file.starts_with(p));
        for krate in ["ratatui", "crossterm"] {
            if below_tui && names(&code, krate) {
                bad.push(format!("{file} names {krate}"));
            }
        }
        for krate in ["tokio", "reqwest", "rusqlite"] {
            if file.starts_with("src/tui/ui/") && names(&code, krate) {
                bad.push(format!("{file} names {krate}"));
            }
        }
        if text.contains("allow(unsafe_code)") && file != "src/base/allocator.rs" {
            bad.push(format!("{file} allows unsafe code"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // `ls src` is the layer picture: the layers, the library and the binary.
    let mut top: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .expect("src")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    let mut want: Vec<String> = LAYERS.iter().map(|l| l.to_string()).collect();
    want.extend(["lib.rs".to_string(), "main.rs".to_string()]);
    want.sort();
    assert_eq!(top, want);
}

#[test]
fn an_import_up_a_layer_and_a_cycle_are_named_with_both_ends() {
    let file = |p: &str, t: &str| (p.to_string(), t.to_string());
    let files = vec![
        file("src/lib.rs", "pub mod base; pub mod tui;"),
        file(
            "src/base/mod.rs",
            "pub mod text; pub mod clock; pub mod cut;",
        ),
        file(
            "src/base/text.rs",
            "use crate::tui::screen::draw; // a comment naming crate::dev::x is not an import",
        ),
        file("src/base/clock.rs", "pub fn now() {}"),
        file("src/base/cut.rs", "use super::clock::now;"),
        file("src/tui/mod.rs", "pub mod screen; pub mod keys;"),
        file("src/tui/screen.rs", "use super::keys::{Key, self};"),
        file(
            "src/tui/keys.rs",
            "fn f() { crate::tui::screen::draw(); crate::base::clock::now(); }",
        ),
    ];
    let found = problems(&files);
    assert_eq!(
        found,
        vec![
            "a cycle between files: src/tui/keys.rs → src/tui/screen.rs → src/tui/keys.rs"
                .to_string(),
            "src/base/text.rs imports src/tui/screen.rs (`tui::screen::draw`): that runs up from layer `base` to `tui`"
                .to_string(),
        ],
        "{found:#?}"
    );
    // A cycle through an item the parent re-exports, and code after a test module, are
    // seen; a test module's own file is not read.
    let files = vec![
        file("src/lib.rs", "pub mod base;"),
        file(
            "src/base/mod.rs",
            "pub mod error;\npub mod keys;\npub use error::ConfigError;\n#[cfg(test)]\nmod tests;",
        ),
        file("src/base/keys.rs", "use super::ConfigError;\npub fn names() {}"),
        file(
            "src/base/error.rs",
            "pub struct ConfigError;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\nfn f() { super::keys::names(); }",
        ),
        file("src/base/tests.rs", "use crate::tui::x;"),
    ];
    assert_eq!(
        problems(&files)
            .into_iter()
            .filter(|p| !p.contains("tests.rs"))
            .collect::<Vec<_>>(),
        vec![
            "a cycle between files: src/base/error.rs → src/base/keys.rs → src/base/error.rs"
                .to_string()
        ],
    );
    assert_eq!(
        test_files_of("src/base/mod.rs", &files[1].1),
        vec!["src/base/tests.rs".to_string()]
    );
    // A child naming its parent's items while the parent re-exports it is no cycle.
    let files = vec![
        file("src/lib.rs", "pub mod base;"),
        file(
            "src/base/mod.rs",
            "pub mod text; pub use text::Cut; pub struct Width;",
        ),
        file("src/base/text.rs", "use super::Width; pub struct Cut;"),
    ];
    assert_eq!(problems(&files), Vec::<String>::new());
}
