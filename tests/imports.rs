//! The import reader both layer tests share, `#[path]`-included by core/tests/layers.rs and
//! native-runner/tests/layers.rs: every path a Rust source file names inside its own crate,
//! resolved to where it points, however it is written (`use crate::a::b`, a group
//! `use crate::{a, b::{c, d}}`, `super::`, `super::super::`, `self::`, a path in an
//! expression, a `use` inside a function), with comments and `#[cfg(test)]` modules left out
//! (tests may use anything). Each test then says which of the paths break its own layers.

use std::path::Path;

/// The module a file is, from its path under `src/`: `net/tcp/mod.rs` is `["net", "tcp"]`,
/// `rx/driver.rs` is `["rx", "driver"]`, `lib.rs` the crate root `[]`.
pub fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The text of a file less its comments and its `#[cfg(test)]` modules: an inline
/// `mod NAME { ... }` to its closing brace at the start of a line, a `mod NAME;` line alone
/// (its file is read as any other; a test-only item that is not a module is read too).
pub fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let test_mod = (lines.peek().copied())
            .filter(|l| line.trim() == "#[cfg(test)]" && is_mod(l.trim_start()));
        if let Some(m) = test_mod {
            lines.next();
            if !m.trim_end().ends_with([';', '}']) {
                let close = format!("{}}}", leading(m));
                lines.by_ref().find(|l| *l == close);
            }
            continue;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

/// Whether `line` declares a module (`mod x`, `pub mod x`, `pub(crate) mod x`).
fn is_mod(line: &str) -> bool {
    let rest = line.strip_prefix("pub").map_or(line, |r| {
        r.strip_prefix("(crate)")
            .or(r.strip_prefix("(super)"))
            .unwrap_or(r)
            .trim_start()
    });
    rest.starts_with("mod ")
}

/// The whitespace a line starts with.
fn leading(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Every in-crate path of `code` (from [`code`]) of the file that is module `at` (from
/// [`module_of`]), as the segments after `crate` (`["net", "wire", "Frame"]`); a path inside
/// an inline `mod NAME { ... }` is resolved from that module. `Err` names a `super::` that
/// climbs past the crate root.
pub fn imports(code: &str, at: &[String]) -> Vec<Result<Vec<String>, String>> {
    let inline = inline_mods(code);
    let module = |pos: usize| {
        let inside = inline.iter().filter(|(_, span)| span.contains(&pos));
        let names = inside.map(|(name, _)| name.clone());
        at.iter().cloned().chain(names).collect::<Vec<_>>()
    };
    (paths(code).into_iter())
        .map(|(pos, p)| resolve(&p, &module(pos)))
        .collect()
}

/// Each inline `mod NAME { ... }` of `code`: its name and the bytes its braces hold, outer
/// ones first.
fn inline_mods(code: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let mut out = vec![];
    for (at, _) in code.match_indices("mod ") {
        if !starts_word(code, at) {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = (rest.chars())
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let mut depth = 0;
        let close = code[open..].char_indices().find_map(|(i, c)| {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            (depth == 0).then_some(open + i)
        });
        out.push((name, open..close.unwrap_or(code.len())));
    }
    out
}

/// Whether the character before byte `i` of `s` ends a word (so `use`/`crate` at `i` is the
/// keyword, not the tail of a name).
fn starts_word(s: &str, i: usize) -> bool {
    !s[..i]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Whether an item may start at byte `i` of `s`: after the start, an item or block's end,
/// an attribute or a visibility (`pub`, `pub(crate)`), so `use` there is the keyword.
fn starts_item(s: &str, i: usize) -> bool {
    let before = s[..i].trim_end();
    before.is_empty()
        || before.ends_with([';', '{', '}', ']', ')'])
        || (before.ends_with("pub") && starts_word(before, before.len() - 3))
}

/// Every `crate::`/`super::`/`self::` path in `code`, as written, use groups expanded, each
/// with where it is.
fn paths(code: &str) -> Vec<(usize, String)> {
    let mut out = vec![];
    // The code outside `use` items, blanked where they were so positions stay true.
    let mut rest = String::new();
    let mut from = 0;
    for (at, _) in code.match_indices("use ") {
        if at < from || !starts_item(code, at) {
            continue;
        }
        let Some(len) = code[at..].find(';') else {
            break;
        };
        rest.push_str(&code[from..at]);
        rest.push_str(&" ".repeat(len + 1));
        let tree = code[at + 4..at + len].trim().trim_start_matches("::");
        out.extend(expand(tree).into_iter().map(|p| (at, p)));
        from = at + len + 1;
    }
    rest.push_str(&code[from..]);
    for root in ["crate::", "super::", "self::"] {
        for (at, _) in rest.match_indices(root) {
            if !starts_word(&rest, at) {
                continue;
            }
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            out.push((at, tail[..end].trim_end_matches(':').to_string()));
        }
    }
    out.retain(|(_, p)| {
        ["crate::", "super::", "self::"]
            .iter()
            .any(|r| p.starts_with(r))
    });
    out
}

/// `a::{b, c::{d, e as f}, self}` as `a::b`, `a::c::d`, `a::c::e`, `a`.
pub fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
    let (prefix, inner) = (&tree[..open], &tree[open + 1..close]);
    let (mut parts, mut depth, mut start) = (vec![], 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let parts = parts.into_iter().filter(|p| !p.trim().is_empty());
    let sub = parts.flat_map(expand);
    sub.map(|p| {
        if p == "self" {
            prefix.trim_end_matches("::").to_string()
        } else {
            format!("{prefix}{p}")
        }
    })
    .collect()
}

/// `path` (as written in module `at`) as the segments after `crate`.
fn resolve(path: &str, at: &[String]) -> Result<Vec<String>, String> {
    let mut segs = path.split("::").map(str::trim).peekable();
    let mut module = match segs.next_if_eq(&"crate") {
        Some(_) => vec![],
        None => {
            segs.next_if_eq(&"self");
            at.to_vec()
        }
    };
    while segs.next_if_eq(&"super").is_some() {
        module
            .pop()
            .ok_or_else(|| format!("`{path}` climbs past the crate root"))?;
    }
    module.extend(segs.filter(|s| !s.is_empty()).map(String::from));
    Ok(module)
}

/// Every `.rs` file under `dir`, as (path under `dir` with `/`, text), in name order.
pub fn sources(dir: &Path) -> Vec<(String, String)> {
    let mut out = vec![];
    walk(dir, "", &mut out);
    out
}

fn walk(dir: &Path, under: &str, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            walk(&p, &format!("{under}{name}/"), out);
        } else if name.ends_with(".rs") {
            let text = std::fs::read_to_string(&p).expect("a source file reads");
            out.push((format!("{under}{name}"), text));
        }
    }
}
