//! omp's `<files>` block: the files of a branch summary as one folded directory tree, each file
//! marked ` (Read)`, ` (Write)` or ` (RW)` (written and read).
//!
//! omp (18.2.3) sorts the paths (JavaScript's `sort()`), keeps the first 20 and says how many
//! more were left out, groups them into a tree whose single-child folders fold into one `# a/b/`
//! header (one `#` more per level; a folder's own files before its subfolders, in first-seen
//! order; backslashes read as slashes; a path ending in `/` is a folder), trims the whole
//! (JavaScript's `trim`), wraps it in `<files>` … `</files>`, and passes it through its prompt
//! formatter ([`prompt_format`]).

use super::files::{starts_with_url_scheme, FileLists};
use crate::context::template;
use crate::js;
use std::collections::BTreeSet;

/// How many files the block names.
const LIMIT: usize = 20;

/// The block for the lists (`read_set`: every path read, to tell `RW` from `Write`); empty when
/// there are no files.
pub(crate) fn files_block(lists: &FileLists, read_set: &BTreeSet<String>) -> String {
    if lists.read.is_empty() && lists.modified.is_empty() {
        return String::new();
    }
    let mut modes: Vec<(&str, &str)> = lists.read.iter().map(|f| (f.as_str(), "Read")).collect();
    for file in &lists.modified {
        let mode = if read_set.contains(file) {
            "RW"
        } else {
            "Write"
        };
        match modes.iter_mut().find(|(f, _)| *f == file) {
            Some(slot) => slot.1 = mode,
            None => modes.push((file, mode)),
        }
    }
    modes.sort_by(|a, b| js::cmp_utf16(a.0, b.0));
    let shown = &modes[..modes.len().min(LIMIT)];
    let mut files = grouped_paths(shown);
    if modes.len() > LIMIT {
        files.push_str(&format!("\n[…{} files elided…]", modes.len() - LIMIT));
    }
    let content = js::trim(&files);
    if content.is_empty() {
        return String::new();
    }
    // Through omp's prompt formatter, as its template renderer passes it.
    template::format(&format!("<files>\n{content}\n</files>"))
}

/// A folder of the tree: its files (name, annotation) and subfolders, in first-seen order.
#[derive(Default)]
struct Folder {
    files: Vec<(String, String)>,
    folders: Vec<(String, Folder)>,
}

impl Folder {
    fn folder(&mut self, name: &str) -> &mut Folder {
        let at = match self.folders.iter().position(|(n, _)| n == name) {
            Some(at) => at,
            None => {
                self.folders.push((name.to_owned(), Folder::default()));
                self.folders.len() - 1
            }
        };
        &mut self.folders[at].1
    }

    fn file(&mut self, name: &str, annotation: String) {
        if !self.files.iter().any(|(n, _)| n == name) {
            self.files.push((name.to_owned(), annotation));
        }
    }

    /// Files first, then each folder (a chain of folders holding only one folder folds into
    /// one header).
    fn lines(&self, depth: usize, out: &mut Vec<String>) {
        for (name, annotation) in &self.files {
            out.push(format!("{name}{annotation}"));
        }
        for (name, folder) in &self.folders {
            let mut names = vec![name.as_str()];
            let mut folder = folder;
            while folder.files.is_empty() && folder.folders.len() == 1 {
                names.push(&folder.folders[0].0);
                folder = &folder.folders[0].1;
            }
            out.push(format!("{} {}/", "#".repeat(depth + 1), names.join("/")));
            folder.lines(depth + 1, out);
        }
    }
}

/// omp's grouped path list of `(path, mode)`s.
fn grouped_paths(files: &[(&str, &str)]) -> String {
    let mut root = Folder::default();
    for (path, mode) in files {
        let annotation = format!(" ({mode})");
        let normalized = path.replace('\\', "/");
        if starts_with_url_scheme(&normalized) {
            root.file(&normalized, annotation);
            continue;
        }
        // A folder is a path written with a trailing slash (before backslashes are read).
        let is_folder = path.ends_with('/');
        let trimmed = normalized.strip_suffix('/').unwrap_or(&normalized);
        if trimmed.is_empty() {
            continue;
        }
        let segments: Vec<&str> = trimmed.split('/').collect();
        let folders = if is_folder {
            segments.len()
        } else {
            segments.len() - 1
        };
        let mut node = &mut root;
        for segment in &segments[..folders] {
            node = node.folder(segment);
        }
        if !is_folder {
            node.file(segments[segments.len() - 1], annotation);
        }
    }
    let mut lines = Vec::new();
    root.lines(0, &mut lines);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(read: &[&str], modified: &[&str], read_set: &[&str]) -> String {
        let lists = FileLists {
            read: read.iter().map(|s| s.to_string()).collect(),
            modified: modified.iter().map(|s| s.to_string()).collect(),
        };
        files_block(&lists, &read_set.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn files_fold_into_a_tree_with_their_modes() {
        assert_eq!(
            block(
                &["src/a.rs", "/abs/x/y.rs"],
                &["docs/x/y/z.md", "src/b.rs", "src\\win\\c.rs"],
                &["src/b.rs"]
            ),
            "<files>\n# /abs/x/\ny.rs (Read)\n# docs/x/y/\nz.md (Write)\n# src/\na.rs (Read)\nb.rs (RW)\n## win/\nc.rs (Write)\n</files>"
        );
        assert_eq!(block(&[], &[], &[]), "");
    }

    #[test]
    fn more_than_twenty_files_are_counted() {
        let many: Vec<String> = (0..23).map(|n| format!("f{n:02}.rs")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let text = block(&refs, &[], &[]);
        assert!(
            text.ends_with("f19.rs (Read)\n[…3 files elided…]\n</files>"),
            "{text}"
        );
    }

    #[test]
    fn the_formatter_trims_lines_and_blank_runs() {
        assert_eq!(
            template::format("a  \n\n\nb\n\nc\n\n</x>\n| a  |  b |\n|---| :-: |\n\n"),
            "a\nb\n\nc\n</x>\n|a|b|\n|---|:---:|"
        );
        assert_eq!(template::format("```\n\n\n```"), "```\n\n\n```");
    }
}
