//! Keeping snapshots reachable: the one ref `refs/sessiontree/snapshots` points at a tree (not a
//! commit, so `git log --all` and the user's history never show it) whose entries are the kept
//! snapshot trees, fanned out by the first two characters of their ids (`ab/abcdef…`). Adding a
//! snapshot rewrites one small subtree and the root; pruning writes the whole listing anew. The
//! ref is moved with a compare-and-swap (`git update-ref REF NEW OLD`) and retried when another
//! process moved it first.

use crate::error::{Error, Result};
use crate::git::Git;
use crate::workspace::Workspace;
use std::collections::{BTreeMap, BTreeSet};

/// The one ref that keeps every snapshot reachable.
pub const STORE_REF: &str = "refs/sessiontree/snapshots";

/// How often a ref update is retried when another process moved the ref in between.
const ATTEMPTS: usize = 8;

/// One entry of a tree object: its name and the id it points at.
type TreeEntries = BTreeMap<String, String>;

/// Adds `tree` to the store; `false` when it was there already (then nothing is written).
pub fn keep(workspace: &Workspace, tree: &str) -> Result<bool> {
    let git = workspace.git();
    let prefix = fan(tree);
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let mut reader = git.objects()?;
        let old = read_tree(&mut reader, STORE_REF, workspace)?;
        let (old_root, mut root) = match old {
            Some((id, entries)) => (Some(id), entries),
            None => (None, TreeEntries::new()),
        };
        let mut sub = match root.get(prefix) {
            Some(sub_id) => read_tree(&mut reader, sub_id, workspace)?
                .map(|(_, entries)| entries)
                .unwrap_or_default(),
            None => TreeEntries::new(),
        };
        drop(reader);
        if sub.contains_key(tree) {
            return Ok(false);
        }
        sub.insert(tree.to_owned(), tree.to_owned());
        let sub_id = make_tree(&git, &sub)?;
        root.insert(prefix.to_owned(), sub_id);
        let new_root = make_tree(&git, &root)?;
        match move_ref(&git, &new_root, old_root.as_deref()) {
            Ok(()) => return Ok(true),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| Error::Git {
        command: format!("update-ref {STORE_REF}"),
        status: "retried".to_owned(),
        stderr: "the ref kept moving".to_owned(),
    }))
}

/// The trees the store keeps now.
pub fn kept(workspace: &Workspace) -> Result<BTreeSet<String>> {
    let git = workspace.git();
    let mut reader = git.objects()?;
    let mut out = BTreeSet::new();
    if let Some((_, root)) = read_tree(&mut reader, STORE_REF, workspace)? {
        for sub_id in root.values() {
            if let Some((_, sub)) = read_tree(&mut reader, sub_id, workspace)? {
                out.extend(sub.into_keys());
            }
        }
    }
    Ok(out)
}

/// Rewrites the store so that it keeps exactly `live`; the trees left out become unreachable and
/// git's own garbage collection removes them later. An empty `live` removes the ref.
pub fn keep_only(workspace: &Workspace, live: &BTreeSet<String>) -> Result<()> {
    let git = workspace.git();
    let mut groups: BTreeMap<&str, TreeEntries> = BTreeMap::new();
    for tree in live {
        groups
            .entry(fan(tree))
            .or_default()
            .insert(tree.clone(), tree.clone());
    }
    let mut root = TreeEntries::new();
    for (prefix, entries) in &groups {
        root.insert((*prefix).to_owned(), make_tree(&git, entries)?);
    }
    let old = git
        .line(["rev-parse", "-q", "--verify", STORE_REF])
        .ok()
        .filter(|s| !s.is_empty());
    if live.is_empty() {
        if let Some(old) = old {
            git.run(["update-ref", "-d", STORE_REF, &old])?;
        }
        return Ok(());
    }
    let new_root = make_tree(&git, &root)?;
    move_ref(&git, &new_root, old.as_deref())
}

fn fan(tree: &str) -> &str {
    tree.get(..2).unwrap_or(tree)
}

fn move_ref(git: &Git, new: &str, old: Option<&str>) -> Result<()> {
    git.run(["update-ref", STORE_REF, new, old.unwrap_or("")])?;
    Ok(())
}

fn make_tree(git: &Git, entries: &TreeEntries) -> Result<String> {
    let mut input = String::new();
    for (name, id) in entries {
        input.push_str("040000 tree ");
        input.push_str(id);
        input.push('\t');
        input.push_str(name);
        input.push('\n');
    }
    let out = git.run_with_input(["mktree", "--missing"], Some(input.as_bytes()))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// Reads a tree object (`name` may be a ref) as its id and entries; `None` when it does not exist.
fn read_tree(
    reader: &mut crate::git::ObjectReader,
    name: &str,
    workspace: &Workspace,
) -> Result<Option<(String, TreeEntries)>> {
    let Some((id, raw)) = reader.read_with_id(&format!("{name}^{{tree}}"))? else {
        return Ok(None);
    };
    Ok(Some((
        id,
        parse_tree(&raw, workspace.empty_tree().len() / 2),
    )))
}

fn parse_tree(raw: &[u8], id_len: usize) -> TreeEntries {
    let mut out = TreeEntries::new();
    let mut rest = raw;
    while let Some(space) = rest.iter().position(|&b| b == b' ') {
        let after = &rest[space + 1..];
        let Some(nul) = after.iter().position(|&b| b == 0) else {
            break;
        };
        let name = String::from_utf8_lossy(&after[..nul]).into_owned();
        let id_start = nul + 1;
        if after.len() < id_start + id_len {
            break;
        }
        let id: String = after[id_start..id_start + id_len]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        out.insert(name, id);
        rest = &after[id_start + id_len..];
    }
    out
}
