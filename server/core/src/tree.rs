//! `getTree()`: the session as a forest, built exactly as the agents build it — roots are entries
//! whose parent is `null`, themselves or missing; children are sorted by timestamp with a stable
//! sort; a duplicated id is one node (the later entry) wherever it is referenced.
//!
//! The tree is flat (indices into the session's entries) so that a 100k-deep chain needs no
//! recursion anywhere.

use crate::entry::Parent;
use crate::session::Session;
use std::cmp::Ordering;
use std::collections::HashMap;

/// A forest over a session's entries. Nodes are entry indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// Root nodes in file order.
    pub roots: Vec<usize>,
    children: HashMap<usize, Vec<usize>>,
}

impl Tree {
    /// Builds the tree of a session.
    pub fn build(session: &Session) -> Tree {
        let entries = session.entries();
        let node_of = |i: usize| -> usize {
            match entries[i].id() {
                Some(id) => session.index_of(id).unwrap_or(i),
                None => session.last_idless().unwrap_or(i),
            }
        };
        let mut tree = Tree::default();
        for (i, entry) in entries.iter().enumerate() {
            let node = node_of(i);
            let parent = match &entry.parent {
                Parent::Null => None,
                Parent::Id(p) if Some(&**p) == entry.id() => None,
                Parent::Id(p) => Some(session.index_of(p)),
                // An absent parentId is `undefined`: equal to an absent id (a root), otherwise
                // looked up under `undefined`, where the id-less entries live.
                Parent::Missing if entry.id().is_none() => None,
                Parent::Missing => Some(session.last_idless()),
            };
            match parent {
                None | Some(None) => tree.roots.push(node),
                Some(Some(p)) => tree.children.entry(p).or_default().push(node),
            }
        }
        let stamps: Vec<Option<f64>> = entries.iter().map(|e| e.timestamp_ms()).collect();
        for list in tree.children.values_mut() {
            if list.len() > 1 {
                stable_sort(list, |a, b| compare_stamps(stamps[*a], stamps[*b]));
            }
        }
        tree
    }

    /// The children of a node, sorted by timestamp (stable).
    pub fn children(&self, node: usize) -> &[usize] {
        self.children.get(&node).map_or(&[], Vec::as_slice)
    }

    /// Pre-order walk from the roots. A node reached again through a duplicated id is not walked
    /// twice (the agents would loop), so this always ends.
    pub fn preorder(&self) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<(usize, usize)> = self.roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((node, depth)) = stack.pop() {
            if !seen.insert(node) {
                continue;
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

    #[test]
    fn merge_sort_is_stable() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (0, 'd'), (1, 'e')];
        stable_sort(&mut v, |a, b| a.0.cmp(&b.0));
        assert_eq!(v, vec![(0, 'd'), (1, 'b'), (1, 'e'), (3, 'a'), (3, 'c')]);
    }
}
