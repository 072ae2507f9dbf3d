//! The files a branch summary lists: gathered from the abandoned branch as each agent gathers
//! them, and put in the agent's order.
//!
//! Both agents take the `path` argument of `read`, `write` and `edit` tool calls in assistant
//! messages, and the `details` (`readFiles`, `modifiedFiles`) of earlier summaries they wrote
//! themselves (pi skips those with a truthy `fromHook`, omp those with a truthy
//! `fromExtension`). pi keeps every path as written. omp leaves out `scheme://` paths (anywhere
//! in the path: `file.ts:conflict://1` too) and cuts a read tool's trailing selector (`:50-200`,
//! `:raw`, `:1-50:raw`, `:conflicts`) off read paths. Files both read and modified are
//! modified; each list is sorted as JavaScript's `sort()` sorts.

use crate::dialect::Dialect;
use crate::js;
use serde_json::Value;
use std::collections::BTreeSet;

/// Files touched in the abandoned branch (sets: the order is made when the lists are).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOps {
    /// Paths given to `read` (and earlier summaries' read files).
    pub read: BTreeSet<String>,
    /// Paths given to `write`.
    pub written: BTreeSet<String>,
    /// Paths given to `edit` (and earlier summaries' modified files).
    pub edited: BTreeSet<String>,
}

/// The two lists a summary stores (`details`) and shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLists {
    /// Files only read, sorted.
    pub read: Vec<String>,
    /// Files written or edited, sorted.
    pub modified: Vec<String>,
}

impl FileOps {
    /// The agent's lists (`computeFileLists`): omp leaves `scheme://` paths out of both.
    pub fn lists(&self, dialect: Dialect) -> FileLists {
        let keep = |path: &&String| dialect == Dialect::Pi || !has_url_scheme(path);
        let modified_set: BTreeSet<&String> =
            self.written.union(&self.edited).filter(keep).collect();
        let mut read: Vec<String> = self
            .read
            .iter()
            .filter(keep)
            .filter(|f| !modified_set.contains(f))
            .cloned()
            .collect();
        let mut modified: Vec<String> = modified_set.into_iter().cloned().collect();
        js::sort_strings(&mut read);
        js::sort_strings(&mut modified);
        FileLists { read, modified }
    }

    /// The files of an earlier summary's `details`, when the agent counts that summary.
    pub(crate) fn add_details(&mut self, entry: &Value, dialect: Dialect) {
        let supplied = match dialect {
            Dialect::Pi => "fromHook",
            Dialect::Omp => "fromExtension",
        };
        if js::truthy(entry.get(supplied)) || !js::truthy(entry.get("details")) {
            return;
        }
        let Some(details) = entry.get("details") else {
            return;
        };
        // Paths that are not strings are left out (the agents would keep a number as it is, or
        // fail on it).
        let list = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
        };
        for path in list("readFiles") {
            let path = match dialect {
                Dialect::Pi => path,
                Dialect::Omp => strip_read_selector(path),
            };
            self.read.insert(path.to_owned());
        }
        for path in list("modifiedFiles") {
            self.edited.insert(path.to_owned());
        }
    }

    /// The `read` / `write` / `edit` tool calls of an assistant message.
    pub(crate) fn add_tool_calls(&mut self, message: &Value, dialect: Dialect) {
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            return;
        }
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            return;
        };
        for block in blocks {
            if block.get("type").and_then(Value::as_str) != Some("toolCall")
                || block.get("name").is_none()
            {
                continue;
            }
            let path = block
                .get("arguments")
                .and_then(|a| a.get("path"))
                .and_then(Value::as_str);
            let Some(path) = path.filter(|p| !p.is_empty()) else {
                continue;
            };
            if dialect == Dialect::Omp && has_url_scheme(path) {
                continue;
            }
            match block.get("name").and_then(Value::as_str) {
                Some("read") => {
                    let path = match dialect {
                        Dialect::Pi => path,
                        Dialect::Omp => strip_read_selector(path),
                    };
                    self.read.insert(path.to_owned());
                }
                Some("write") => {
                    self.written.insert(path.to_owned());
                }
                Some("edit") => {
                    self.edited.insert(path.to_owned());
                }
                _ => {}
            }
        }
    }
}

/// Whether `path` holds a `scheme://` anywhere (omp's `/[a-z][a-z0-9+.-]*:\/\//i`): some ASCII
/// letter followed by scheme characters up to a `://`.
pub fn has_url_scheme(path: &str) -> bool {
    let bytes = path.as_bytes();
    memchr::memmem::find_iter(bytes, b"://").any(|at| {
        bytes[..at]
            .iter()
            .rev()
            .take_while(|b| is_scheme_byte(**b))
            .any(u8::is_ascii_alphabetic)
    })
}

/// Whether `path` starts with a `scheme://` (omp's `/^[a-z][a-z0-9+.-]*:\/\//i`).
pub(crate) fn starts_with_url_scheme(path: &str) -> bool {
    let bytes = path.as_bytes();
    let scheme = bytes.iter().take_while(|b| is_scheme_byte(**b)).count();
    scheme > 0 && bytes[0].is_ascii_alphabetic() && bytes[scheme..].starts_with(b"://")
}

fn is_scheme_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-')
}

/// A read path without omp's read selector: the last `:chunk` when it is a list of line ranges
/// (`50`, `50-200`, `50+10`, `5-16,960-973`, `L10..`, …), `raw` or `conflicts`, with the chunk
/// before it too when the two are a range and `raw` (`:1-50:raw`, `:raw:1-50`). A colon at the
/// very start is not a selector.
pub fn strip_read_selector(path: &str) -> &str {
    let Some(colon) = path.rfind(':').filter(|&c| c > 0) else {
        return path;
    };
    let outer = &path[colon + 1..];
    if !(is_range_list(outer) || is_raw(outer) || outer.eq_ignore_ascii_case("conflicts")) {
        return path;
    }
    let base = &path[..colon];
    if let Some(inner) = base.rfind(':').filter(|&c| c > 0) {
        let candidate = &base[inner + 1..];
        let pair = (is_raw(candidate) && is_range_list(outer))
            || (is_range_list(candidate) && is_raw(outer));
        if pair {
            return &base[..inner];
        }
    }
    base
}

fn is_raw(s: &str) -> bool {
    s.eq_ignore_ascii_case("raw")
}

/// `chunk(,chunk)*` where a chunk is `L?\d+` followed by nothing, `-`, `..`, or `-`/`+`/`..`
/// and `L?\d+` (letters in any case).
fn is_range_list(s: &str) -> bool {
    s.split(',').all(is_range_chunk)
}

fn is_range_chunk(s: &str) -> bool {
    let Some(rest) = line_number(s) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let (after, bare_allowed) = if let Some(r) = rest.strip_prefix("..") {
        (r, true)
    } else if let Some(r) = rest.strip_prefix('-') {
        (r, true)
    } else if let Some(r) = rest.strip_prefix('+') {
        (r, false)
    } else {
        return false;
    };
    match line_number(after) {
        Some(end) => end.is_empty(),
        None => bare_allowed && after.is_empty(),
    }
}

/// `L?\d+` at the start of `s`: what follows it.
fn line_number(s: &str) -> Option<&str> {
    let s = s
        .strip_prefix('L')
        .or_else(|| s.strip_prefix('l'))
        .unwrap_or(s);
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0).then(|| &s[digits..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn omps_read_selectors() {
        for (path, base) in [
            ("a.rs:10-20", "a.rs"),
            ("a.rs:10", "a.rs"),
            ("a.rs:L10-L20", "a.rs"),
            ("a.rs:10+5", "a.rs"),
            ("a.rs:10-", "a.rs"),
            ("a.rs:10..", "a.rs"),
            ("a.rs:10..20,30-40", "a.rs"),
            ("a.rs:RAW", "a.rs"),
            ("a.rs:conflicts", "a.rs"),
            ("a.rs:1-50:raw", "a.rs"),
            ("a.rs:raw:1-50", "a.rs"),
            ("a.rs:raw:raw", "a.rs:raw"),
            ("a.rs:1:2", "a.rs:1"),
            ("a.rs:10+", "a.rs:10+"),
            ("a.rs:x", "a.rs:x"),
            ("a.rs:", "a.rs:"),
            (":10", ":10"),
            ("C:", "C:"),
            ("a:b", "a:b"),
        ] {
            assert_eq!(strip_read_selector(path), base, "{path}");
        }
    }

    #[test]
    fn omps_url_schemes() {
        for (path, url, starts) in [
            ("https://x", true, true),
            ("artifact://3", true, true),
            ("file.ts:conflict://1", true, false),
            ("dir/x://y", true, false),
            ("1://x", false, false),
            ("-a://x", true, false),
            ("://x", false, false),
            ("src/a.rs", false, false),
        ] {
            assert_eq!(has_url_scheme(path), url, "{path}");
            assert_eq!(starts_with_url_scheme(path), starts, "{path}");
        }
    }

    #[test]
    fn each_agent_gathers_its_own_way() {
        let message = json!({"role": "assistant", "content": [
            {"type": "toolCall", "name": "read", "arguments": {"path": "src/a.rs:1-5"}},
            {"type": "toolCall", "name": "read", "arguments": {"path": "artifact://3"}},
            {"type": "toolCall", "name": "edit", "arguments": {"path": "src/b.rs"}},
            {"type": "toolCall", "name": "read", "arguments": {"path": "src/b.rs"}},
            {"type": "toolCall", "name": "write", "arguments": {"path": ""}},
            {"type": "toolCall", "arguments": {"path": "nameless"}},
        ]});
        let summary = json!({"type": "branch_summary", "details": {"readFiles": ["x:raw"], "modifiedFiles": ["y"]}});
        let hooked =
            json!({"type": "branch_summary", "fromHook": 1, "details": {"readFiles": ["h"]}});
        let extension = json!({"type": "branch_summary", "fromExtension": "yes", "details": {"readFiles": ["e"]}});
        let mut pi = FileOps::default();
        let mut omp = FileOps::default();
        for (ops, dialect) in [(&mut pi, Dialect::Pi), (&mut omp, Dialect::Omp)] {
            ops.add_tool_calls(&message, dialect);
            for entry in [&summary, &hooked, &extension] {
                ops.add_details(entry, dialect);
            }
        }
        assert_eq!(
            pi.lists(Dialect::Pi),
            FileLists {
                read: vec![
                    "artifact://3".into(),
                    "e".into(),
                    "src/a.rs:1-5".into(),
                    "x:raw".into()
                ],
                modified: vec!["src/b.rs".into(), "y".into()],
            }
        );
        assert_eq!(
            omp.lists(Dialect::Omp),
            FileLists {
                read: vec!["h".into(), "src/a.rs".into(), "x".into()],
                modified: vec!["src/b.rs".into(), "y".into()],
            }
        );
    }
}
