//! Where the first window's prefix walk can start down the leaf's path, so that its cost does
//! not follow the leaf's depth.
//!
//! The walk puts the subtrees holding the leaf first: the rows before the leaf are its shown
//! ancestors, and the rows after it lie in the subtrees hanging off the path, the deepest first.
//! A walk that starts at a shown ancestor `S` above the window, and low enough that the subtrees
//! below it hold the rows after the leaf, holds every row of the window. What those rows inherit
//! from above `S` is found here in one pass down the path: the walk's values for `S` (omp's
//! depth, its siblings), and pi's re-layout frame for `S` (indent, gutter list, connector bits),
//! from each shown ancestor's number of visible children (up to two). omp draws branch gutters
//! from ancestors up the tree, but scrolls out those more than its gutter width above the
//! window's deepest row: `S` is chosen below none of the drawn ones.

use super::flatten::pi_layout::{frame, pi_child_frame, pi_root_frame, PiTop};
use super::flatten::Start;
use super::render;
use crate::dialect::Dialect;
use crate::tree::Tree;

/// Where a prefix walk starts ([`Start`]), the visible row number it starts at, and pi's frame
/// for its first row.
pub(crate) struct Cut {
    pub row: usize,
    pub start: Start,
    pub pi: Option<PiTop>,
}

/// What the window needs of the path.
pub(crate) struct Need<'a> {
    pub tree: &'a Tree,
    /// The path from the root to the leaf.
    pub path: &'a [usize],
    /// The indices in `path` of its shown entries (the rows down to the selected one).
    pub shown_at: &'a [usize],
    pub shown: &'a dyn Fn(usize) -> bool,
    pub dialect: Dialect,
    pub width: usize,
    /// The selected row: the leaf's nearest shown ancestor (or itself).
    pub selected: usize,
    /// The window's first row.
    pub window_start: usize,
    /// How many rows the walk must hold (the window's end and one row past it).
    pub rows: usize,
}

/// The lowest shown ancestor of the window that can start the walk, when one lies `min_index`
/// or more steps down the path; `None` otherwise (the walk then starts at the roots).
pub(crate) fn plan(need: &Need<'_>, min_index: usize) -> Option<Cut> {
    let (tree, path) = (need.tree, need.path);
    let last = need.window_start.checked_sub(1)?;
    if path.len() <= min_index {
        return None;
    }
    let shown_at = need.shown_at;
    if shown_at.len() != need.selected + 1 {
        return None;
    }
    let lowest = lowest_holder(need)?;
    // omp's display depth down the path: one more below every branch point, and below the
    // roots when there are several.
    let several_roots = tree.roots.len() > 1;
    let mut depth = Vec::with_capacity(path.len());
    let mut d = 0;
    for (i, &node) in path.iter().enumerate() {
        depth.push(d);
        if tree.children(node).len() > 1 || (several_roots && i == 0) {
            d += 1;
        }
    }
    let deep_enough = |i: usize| match need.dialect {
        Dialect::Omp => {
            depth[i] + render::omp_gutter_levels(need.width) <= depth[shown_at[need.selected]]
        }
        Dialect::Pi => true,
    };
    let row = (0..=last.min(need.selected))
        .rev()
        .find(|&j| shown_at[j] <= lowest && deep_enough(shown_at[j]))?;
    let index = shown_at[row];
    if index < min_index {
        return None;
    }
    let start = Start {
        node: path[index],
        path_index: index,
        depth: depth[index],
        sibling_count: match index.checked_sub(1) {
            Some(above) => tree.children(path[above]).len(),
            None => tree.roots.len(),
        },
        root: index == 0,
    };
    let pi = (need.dialect == Dialect::Pi).then(|| pi_top(need, &shown_at[..=row]));
    Some(Cut { row, start, pi })
}

/// The lowest path index whose subtree holds the rows the window needs after the selected one:
/// the leaf's subtree, then the subtrees off the path, nearest the leaf first.
fn lowest_holder(need: &Need<'_>) -> Option<usize> {
    let (tree, path, shown) = (need.tree, need.path, need.shown);
    let wanted = need.rows.saturating_sub(need.selected + 1);
    let leaf = path.len() - 1;
    let mut found = 0;
    let mut stack = Vec::new();
    for i in (0..=leaf).rev() {
        if found >= wanted {
            return Some(i);
        }
        for &c in tree.children(path[i]) {
            if i < leaf && c == path[i + 1] {
                continue;
            }
            found += count_shown(tree, c, shown, wanted - found, &mut stack);
            if found >= wanted {
                break;
            }
        }
        if found >= wanted {
            return Some(i);
        }
    }
    None
}

/// pi's re-layout frame for the last of the shown path rows `shown_at` (path indices), from the
/// first of them down.
fn pi_top(need: &Need<'_>, shown_at: &[usize]) -> PiTop {
    let (tree, path, shown) = (need.tree, need.path, need.shown);
    let mut stack = Vec::new();
    let mut roots = 0;
    for &r in &tree.roots {
        roots += shown_tops(tree, r, shown, &mut stack);
        if roots >= 2 {
            break;
        }
    }
    let multiple_roots = roots > 1;
    let mut gutters = Vec::new();
    let mut frame = pi_root_frame(usize::from(roots.max(1)), 0);
    for pair in shown_at.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        // The next shown path row, and the shown tops off the path down to it.
        let mut kids = 1;
        'count: for i in from..to {
            for &c in tree.children(path[i]) {
                if c != path[i + 1] {
                    kids += shown_tops(tree, c, shown, &mut stack);
                    if kids >= 2 {
                        break 'count;
                    }
                }
            }
        }
        let (indent, head, bits) = pi_child_frame(frame, kids > 1, multiple_roots, &mut gutters);
        // The path child comes first among the children: it is the last one when alone.
        let last = if kids == 1 { frame::IS_LAST } else { 0 };
        frame = (indent, head, bits | last);
    }
    PiTop {
        frame,
        gutters,
        multiple_roots,
    }
}

/// How many shown entries (up to 2) of `node`'s subtree have no shown ancestor inside it.
pub(crate) fn shown_tops(
    tree: &Tree,
    node: usize,
    shown: &dyn Fn(usize) -> bool,
    stack: &mut Vec<usize>,
) -> u8 {
    count_in(tree, node, shown, 2, true, stack) as u8
}

/// How many shown entries `node`'s subtree has, counting up to `limit`.
fn count_shown(
    tree: &Tree,
    node: usize,
    shown: &dyn Fn(usize) -> bool,
    limit: usize,
    stack: &mut Vec<usize>,
) -> usize {
    count_in(tree, node, shown, limit, false, stack)
}

/// Counts the shown entries of `node`'s subtree up to `limit`; with `tops`, only those without a
/// shown ancestor inside it (a shown entry's subtree is not entered).
fn count_in(
    tree: &Tree,
    node: usize,
    shown: &dyn Fn(usize) -> bool,
    limit: usize,
    tops: bool,
    stack: &mut Vec<usize>,
) -> usize {
    stack.clear();
    stack.push(node);
    let mut count = 0;
    while let Some(x) = stack.pop() {
        if count >= limit {
            break;
        }
        if shown(x) {
            count += 1;
            if tops {
                continue;
            }
        }
        stack.extend_from_slice(tree.children(x));
    }
    count
}
