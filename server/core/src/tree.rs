//! `getTree()`: the session as a forest, built exactly as the agents build it — roots are entries
//! whose parent is `null`, themselves or missing; children are sorted by timestamp with a stable
//! sort; a duplicated id is one node (the later entry) wherever it is referenced.
//!
//! The tree is flat (indices into the session's entries) so that a 100k-deep chain needs no
//! recursion anywhere.

use crate::entry::{Entry, Parent};
use std::cmp::Ordering;

/// No resolved parent (in [`TreeIndex::plain_parents`]).
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// What a tree is built from: the entries and how the session's index resolves their ids and
/// parents (the session implements it; the tree knows nothing else of the session).
pub trait TreeIndex {
    /// The entries, in file order.
    fn entries(&self) -> &[Entry];
    /// Every entry's resolved parent index ([`NO_PARENT`]: none, or the entry itself when it
    /// names its own id) when the tree is that simple: ids unique, every entry with an id,
    /// parents resolved.
    fn plain_parents(&self) -> Option<&[u32]>;
    /// Each entry's timestamp in epoch milliseconds (NaN: not a date), in entry order.
    fn times(&self) -> &[f64];
    /// The index that holds an entry's id (the later entry of a duplicated id).
    fn canonical_index(&self, index: usize) -> usize;
    /// The entry an entry's `parentId` names.
    fn parent_index(&self, index: usize) -> Option<usize>;
    /// The last id-less entry, which JavaScript code finds under the key `undefined`.
    fn last_idless(&self) -> Option<usize>;
}

/// A forest over a session's entries. Nodes are entry indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// Root nodes in file order.
    pub roots: Vec<usize>,
    /// Children of node `i` are `child_list[child_start[i]..child_start[i + 1]]`.
    child_start: Vec<u32>,
    child_list: Vec<usize>,
}

impl Tree {
    /// Builds the tree of a session's entries.
    pub fn build(session: &impl TreeIndex) -> Tree {
        let n = session.entries().len();
        if let Some(parents) = session.plain_parents().filter(|p| p.len() == n) {
            return Tree::from_parents(parents, session.times());
        }
        Tree::build_general(session)
    }

    /// [`Tree::build`] for any session: each entry's node and parent looked up by id.
    fn build_general(session: &impl TreeIndex) -> Tree {
        let entries = session.entries();
        let n = entries.len();
        let mut tree = Tree::default();
        // (parent node, child node) in file order.
        let mut links: Vec<(usize, usize)> = Vec::with_capacity(n);
        for (i, entry) in entries.iter().enumerate() {
            let node = match entry.id() {
                Some(_) => session.canonical_index(i),
                None => session.last_idless().unwrap_or(i),
            };
            let parent = match &entry.parent {
                Parent::Null => None,
                Parent::Id(p) if Some(&**p) == entry.id() => None,
                Parent::Id(_) => session.parent_index(i),
                // An absent parentId is `undefined`: equal to an absent id (a root), otherwise
                // looked up under `undefined`, where the id-less entries live.
                Parent::Missing if entry.id().is_none() => None,
                Parent::Missing => session.last_idless(),
            };
            match parent {
                None => tree.roots.push(node),
                Some(p) => links.push((p, node)),
            }
        }
        tree.with_links(links, session.entries())
    }

    /// The tree when every entry is its own node and its resolved parent is the tree's parent
    /// (no duplicated or missing ids): read from the parent indices alone. An entry naming
    /// itself is a root, as in [`Tree::build`].
    pub(crate) fn from_parents(parents: &[u32], times: &[f64]) -> Tree {
        let n = parents.len();
        let parent_of = |i: usize| {
            let p = parents[i];
            (p != NO_PARENT && p as usize != i).then_some(p as usize)
        };
        let mut roots = Vec::new();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            match parent_of(i) {
                Some(p) => start[p + 1] += 1,
                None => roots.push(i),
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        // Each list is filled through its own start, which then holds the next list's start:
        // shifting them back by one restores them.
        let mut list = vec![0usize; start[n] as usize];
        for i in 0..n {
            if let Some(p) = parent_of(i) {
                list[start[p] as usize] = i;
                start[p] += 1;
            }
        }
        start.copy_within(0..n, 1);
        start[0] = 0;
        let stamp = |i: usize| Some(times[i]).filter(|t| !t.is_nan());
        for p in 0..n {
            let kids = &mut list[start[p] as usize..start[p + 1] as usize];
            if kids.len() < 2 {
                continue;
            }
            if kids.len() <= 16 && kids.iter().all(|&k| !times[k].is_nan()) {
                // Dates only: a total order, so any stable sort gives the same list; insertion
                // sort needs no buffer.
                for i in 1..kids.len() {
                    let mut j = i;
                    while j > 0 && times[kids[j]] < times[kids[j - 1]] {
                        kids.swap(j, j - 1);
                        j -= 1;
                    }
                }
            } else {
                stable_sort(kids, |a, b| compare_stamps(stamp(*a), stamp(*b)));
            }
        }
        Tree {
            roots,
            child_start: start,
            child_list: list,
        }
    }

    /// Fills the child lists from (parent, child) links in file order.
    fn with_links(self, links: Vec<(usize, usize)>, entries: &[Entry]) -> Tree {
        let n = entries.len();
        let mut tree = self;
        // Counting sort by parent keeps each list in file order.
        let mut start = vec![0u32; n + 1];
        for &(p, _) in &links {
            start[p + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![0usize; links.len()];
        for &(p, c) in &links {
            list[fill[p] as usize] = c;
            fill[p] += 1;
        }
        for p in 0..n {
            let kids = &mut list[start[p] as usize..start[p + 1] as usize];
            if kids.len() > 1 {
                stable_sort(kids, |a, b| {
                    compare_stamps(entries[*a].timestamp_ms(), entries[*b].timestamp_ms())
                });
            }
        }
        tree.child_start = start;
        tree.child_list = list;
        tree
    }

    /// The children of a node, sorted by timestamp (stable).
    pub fn children(&self, node: usize) -> &[usize] {
        match (self.child_start.get(node), self.child_start.get(node + 1)) {
            (Some(&a), Some(&b)) => &self.child_list[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Pre-order walk from the roots. A node reached again through a duplicated id is not walked
    /// twice (the agents would loop), so this always ends.
    pub fn preorder(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.child_start.len()];
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            match seen.get_mut(node) {
                Some(s) if *s => continue,
                Some(s) => *s = true,
                None => {}
            }
            out.push((node, depth));
            for &child in self.children(node).iter().rev() {
                stack.push((child, depth + 1));
            }
        }
        out
    }
}

/// `Date.parse(a) - Date.parse(b)` as a sort comparator: NaN compares as equal.
fn compare_stamps(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        _ => Ordering::Equal,
    }
}

/// A stable merge sort that tolerates a comparator that is not a total order (the agents'
/// comparator with NaN timestamps); the standard library's sort may panic on those.
fn stable_sort<T: Copy>(items: &mut [T], cmp: impl Fn(&T, &T) -> Ordering) {
    let n = items.len();
    let mut buf = items.to_vec();
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                if cmp(&items[j], &items[i]) == Ordering::Less {
                    buf[k] = items[j];
                    j += 1;
                } else {
                    buf[k] = items[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&items[i..mid]);
            k += mid - i;
            buf[k..k + (end - j)].copy_from_slice(&items[j..end]);
            start = end;
        }
        items.copy_from_slice(&buf);
        width *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree read from parent indices equals the one looked up by id, wherever it is taken.
    #[test]
    fn the_tree_from_parent_indices_equals_the_general_build() {
        use crate::session::{OpenOptions, Session};
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (mut short, mut general) = (0, 0);
        for path in crate::test_sessions::sample_sessions(dir.path()) {
            let Ok(session) = Session::open(&path, OpenOptions::default()) else {
                continue;
            };
            if session.plain_parents().is_none() {
                general += 1;
                continue;
            }
            short += 1;
            assert_eq!(
                Tree::build(&session),
                Tree::build_general(&session),
                "{}",
                path.display()
            );
        }
        assert!(
            short >= 20 && general >= 1,
            "{short} sessions took the short path, {general} the general one"
        );
    }

    /// The tree a session keeps is dropped when an entry is added: after appends, a branch and
    /// a label it is the tree built anew.
    #[test]
    fn the_kept_tree_follows_new_entries() {
        use crate::dialect::Dialect;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut session = crate::test_sessions::generated_session(dir.path(), dialect, 300, 5);
            let before = session.tree();
            assert_eq!(*before, Tree::build(&session));
            let first = session.entries()[3]
                .id()
                .map(str::to_owned)
                .unwrap_or_default();
            session.branch(&first).unwrap_or_else(|e| panic!("{e}"));
            crate::test_sessions::append_labeled(&mut session, 320, |n| format!("entry {n}"));
            let after = session.tree();
            assert_eq!(*after, Tree::build(&session));
            assert_ne!(after, before);
            let added = session.index_of(session.leaf_id().unwrap_or_default());
            assert!(added.is_some_and(|i| i >= 300 && after.children(i).is_empty()));
            assert!(after.children(3).len() > before.children(3).len());
        }
    }

    #[test]
    fn merge_sort_is_stable() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        stable_sort(&mut v, |a, b| a.0.cmp(&b.0));
        assert_eq!(v, vec![(0, 'd'), (1, 'b'), (1, 'e'), (3, 'a'), (3, 'c')]);
    }
}
