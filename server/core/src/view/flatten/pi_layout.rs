//! pi's visual structure of the rows shown: its indentation, connectors and gutters, which pi
//! re-derives over the visible rows only (`flattenTree` values for the rows it skips), computed
//! in `u32`s without recursion; and the frames a walk that starts down the leaf's path starts
//! from.

use super::{Model, NONE};

/// One gutter entry of pi's structure: a `│` (or blank) column at `position`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gutter {
    pub position: u32,
    pub show: bool,
    pub prev: Option<u32>,
}

/// pi's visual data for one visible row.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PiRow {
    pub indent: u32,
    pub show_connector: bool,
    pub is_last: bool,
    pub is_virtual_root_child: bool,
    /// Head of this row's gutter list in [`PiStructure::gutters`].
    pub gutters: Option<u32>,
    pub foldable: bool,
}

/// pi's structure over the visible rows (`recalculateVisualStructure`).
#[derive(Debug, Clone, Default)]
pub(crate) struct PiStructure {
    pub rows: Vec<PiRow>,
    pub gutters: Vec<Gutter>,
    pub multiple_roots: bool,
    /// Visible parent row of each row ([`NONE`]: none; taken by the layout).
    pub parent_row: Vec<u32>,
    /// How many visible children each row has (taken by the layout).
    pub child_rows: Vec<u32>,
}

impl PiStructure {
    /// The gutters drawn at levels `0..levels` of a row, in one walk of its gutter list: pi takes
    /// the first (oldest) entry at each position.
    pub fn gutters_of(&self, row: usize, levels: usize) -> Vec<Option<bool>> {
        let mut out = vec![None; levels];
        let mut cursor = self.rows[row].gutters;
        while let Some(g) = cursor {
            let gutter = self.gutters[g as usize];
            if let Some(cell) = out.get_mut(gutter.position as usize) {
                // The walk goes newest to oldest: the last write is the oldest.
                *cell = Some(gutter.show);
            }
            cursor = gutter.prev;
        }
        out
    }
}

/// Nearest visible ancestor (row) of every visible row, by the walk's parents.
/// ([`NONE`]: none; `row_of` gives each position's row, [`NONE`] when hidden).
pub(crate) fn visible_parents(model: &Model, visible: &[usize], row_of: &[u32]) -> Vec<u32> {
    // A parent's position is always before its child's, so one pass in order finds them all.
    let mut nearest: Vec<u32> = Vec::with_capacity(model.nodes.len());
    for node in &model.nodes {
        let found = match node.parent {
            None => NONE,
            Some(p) => match row_of[p as usize] {
                NONE => nearest[p as usize],
                row => row,
            },
        };
        nearest.push(found);
    }
    visible.iter().map(|&pos| nearest[pos]).collect()
}

/// What lies past the end of a prefix model ([`Model::build_prefix`]), for pi's re-layout of its
/// rows: how many visible children (0, 1 or 2 for "several") each key has among the unwalked
/// subtrees, how many visible roots, and which rows will be built. Ids are not repeated there, so
/// each key has one row.
#[derive(Debug, Default)]
pub(crate) struct Beyond {
    pub kids: Vec<u8>,
    pub roots: u8,
    /// The rows that will be built (the window).
    pub built: std::ops::Range<usize>,
    /// The frame of the model's one root, when the walk started down the leaf's path
    /// ([`Start`]): what the rows above it give it.
    pub top: Option<PiTop>,
}

/// What pi's re-layout of the rows above a start row ([`Start`]) gives it.
#[derive(Debug, Clone)]
pub(crate) struct PiTop {
    pub frame: PiFrame,
    /// The gutter entries its list holds (the frame's head indexes them).
    pub gutters: Vec<Gutter>,
    pub multiple_roots: bool,
}

/// A row's place in pi's re-layout: indent, gutter list head ([`NONE`]: none), [`frame`] bits.
pub(crate) type PiFrame = (u32, u32, u8);

/// The frame pi's re-layout gives visible root `index` of `roots` (several roots are drawn as
/// children of a virtual one).
pub(crate) fn pi_root_frame(roots: usize, index: usize) -> PiFrame {
    let multiple_roots = roots > 1;
    let mut bits = if multiple_roots {
        frame::JUST_BRANCHED | frame::SHOW_CONNECTOR | frame::VIRTUAL_CHILD
    } else {
        0
    };
    if index + 1 == roots {
        bits |= frame::IS_LAST;
    }
    (u32::from(multiple_roots), NONE, bits)
}

/// The frame pi's re-layout gives the children of a row laid out in `row` that has `multiple`
/// visible children (`IS_LAST` left for the caller to add to the last one). A row drawn with a
/// connector adds its gutter entry to `gutters`.
pub(crate) fn pi_child_frame(
    row: PiFrame,
    multiple: bool,
    multiple_roots: bool,
    gutters: &mut Vec<Gutter>,
) -> PiFrame {
    let (indent, row_gutters, bits) = row;
    let child_indent = if multiple || (bits & frame::JUST_BRANCHED != 0 && indent > 0) {
        indent + 1
    } else {
        indent
    };
    let displayed = bits & frame::SHOW_CONNECTOR != 0 && bits & frame::VIRTUAL_CHILD == 0;
    let display_indent = if multiple_roots {
        indent.saturating_sub(1)
    } else {
        indent
    };
    let child_gutters = if displayed {
        gutters.push(Gutter {
            position: display_indent.saturating_sub(1),
            show: bits & frame::IS_LAST == 0,
            prev: (row_gutters != NONE).then_some(row_gutters),
        });
        gutters.len() as u32 - 1
    } else {
        row_gutters
    };
    let child_bits = if multiple {
        frame::JUST_BRANCHED | frame::SHOW_CONNECTOR
    } else {
        0
    };
    (child_indent, child_gutters, child_bits)
}

/// A pending row of pi's walk: key, indent, gutter list head ([`NONE`]: none) and [`frame`] bits.
type Frame = (u32, u32, u32, u8);

/// The bits of a [`Frame`].
pub(crate) mod frame {
    pub const JUST_BRANCHED: u8 = 1;
    pub const SHOW_CONNECTOR: u8 = 2;
    pub const IS_LAST: u8 = 4;
    pub const VIRTUAL_CHILD: u8 = 8;
}

/// No parent found (a root of the visible tree), in [`pi_structure`]'s memo.
const NULL: u32 = u32::MAX - 1;

/// pi's `recalculateVisualStructure` over the visible rows. Like pi it keys everything by entry
/// id: with duplicated ids only the last visible copy is re-laid out, the others keep their
/// `flattenTree` values. Kept in `u32`s: it runs over every visible row of a 100k-entry session.
pub(crate) fn pi_structure(
    model: &Model,
    visible: &[usize],
    row_of: &[u32],
    beyond: Option<&Beyond>,
) -> PiStructure {
    let keys = model.key_count();
    // Visible children past a prefix model's end (see [`Beyond`]).
    let more = |k: usize| beyond.map_or(0, |b| b.kids.get(k).map_or(0, |&n| n as usize));
    let more_roots = beyond.map_or(0, |b| b.roots as usize);
    // key → its last visible position (NONE: hidden).
    let mut filtered: Vec<u32> = vec![NONE; keys];
    for &pos in visible {
        filtered[model.key_at(pos)] = pos as u32;
    }
    // Nearest visible ancestor key of every hidden key walked (NULL: none; NONE: not known yet).
    let mut memo: Vec<u32> = vec![NONE; keys];
    // Each visible row's parent key (as found when the row was met, NULL: none), then the
    // children of every key in row order as flat lists.
    let mut found_of: Vec<u32> = Vec::with_capacity(visible.len());
    let mut roots: Vec<u32> = Vec::new();
    let mut walked: Vec<usize> = Vec::new();
    for &pos in visible {
        let k = model.key_at(pos);
        walked.clear();
        let mut cursor = model.parent_key(k);
        let found = loop {
            let Some(cur) = cursor else { break NULL };
            if filtered[cur] != NONE {
                break cur as u32;
            }
            if memo[cur] != NONE {
                break memo[cur];
            }
            // A parent cycle among hidden entries (pi would spin forever): give up after a lap.
            if walked.len() > keys {
                break NULL;
            }
            walked.push(cur);
            cursor = model.parent_key(cur);
        };
        for &w in &walked {
            memo[w] = found;
        }
        found_of.push(found);
        if found == NULL {
            roots.push(k as u32);
        }
    }
    drop((memo, walked));
    let mut child_start = vec![0u32; keys + 1];
    for &p in found_of.iter().filter(|&&p| p != NULL) {
        child_start[p as usize + 1] += 1;
    }
    for i in 0..keys {
        child_start[i + 1] += child_start[i];
    }
    let mut fill = child_start.clone();
    let mut child_list = vec![0u32; child_start[keys] as usize];
    for (&pos, &found) in visible.iter().zip(&found_of) {
        if found != NULL {
            let p = found as usize;
            child_list[fill[p] as usize] = model.key_at(pos) as u32;
            fill[p] += 1;
        }
    }
    drop(fill);
    let children = |k: usize| &child_list[child_start[k] as usize..child_start[k + 1] as usize];
    let top = beyond.and_then(|b| b.top.as_ref());
    let multiple_roots = match top {
        Some(top) => top.multiple_roots,
        None => roots.len() + more_roots > 1,
    };
    // The walk lays rows out; their parents and child counts need only the child lists, so
    // they are found at the same time on a second thread. Rows keep their `flattenTree` values
    // unless the walk reaches their key's last copy.
    let walk = || {
        let mut rows: Vec<PiRow> = visible.iter().map(|&pos| model.nodes[pos].pi).collect();
        let mut stack: Vec<Frame> = Vec::new();
        let mut gutters = match top {
            // A model that starts down the path has one root, laid out as the rows above lay
            // it out.
            Some(top) => {
                debug_assert!(model.gutters.is_empty() && roots.len() == 1);
                for &r in roots.iter().rev() {
                    stack.push((r, top.frame.0, top.frame.1, top.frame.2));
                }
                top.gutters.clone()
            }
            None => {
                for (i, &r) in roots.iter().enumerate().rev() {
                    let (indent, head, bits) = pi_root_frame(roots.len() + more_roots, i);
                    stack.push((r, indent, head, bits));
                }
                model.gutters.clone()
            }
        };
        let cap = visible.len().saturating_mul(4).saturating_add(1024);
        let mut steps = 0;
        // An only child is walked next without a trip through the stack.
        let mut only_child: Option<Frame> = None;
        while let Some((k, indent, row_gutters, bits)) = only_child.take().or_else(|| stack.pop()) {
            steps += 1;
            if steps > cap {
                break;
            }
            let k = k as usize;
            let Some(row) = Some(filtered[k])
                .filter(|&p| p != NONE)
                .map(|p| row_of[p as usize])
                .filter(|&r| r != NONE)
                .map(|r| r as usize)
            else {
                continue;
            };
            let row_gutters = (row_gutters != NONE).then_some(row_gutters);
            let show_connector = bits & frame::SHOW_CONNECTOR != 0;
            let is_last = bits & frame::IS_LAST != 0;
            let virtual_child = bits & frame::VIRTUAL_CHILD != 0;
            rows[row] = PiRow {
                indent,
                show_connector,
                is_last,
                is_virtual_root_child: virtual_child,
                gutters: row_gutters,
                foldable: false,
            };
            let kids = children(k);
            let later = more(k);
            let multiple = kids.len() + later > 1;
            let frame = (indent, row_gutters.unwrap_or(NONE), bits);
            let (child_indent, child_gutters, child_bits) =
                pi_child_frame(frame, multiple, multiple_roots, &mut gutters);
            if let ([c], 0) = (kids, later) {
                only_child = Some((*c, child_indent, child_gutters, child_bits | frame::IS_LAST));
                continue;
            }
            for (i, &c) in kids.iter().enumerate().rev() {
                let last = if i + 1 == kids.len() && later == 0 {
                    frame::IS_LAST
                } else {
                    0
                };
                stack.push((c, child_indent, child_gutters, child_bits | last));
            }
        }
        (rows, gutters)
    };
    let parents = || {
        let mut parent_row = Vec::with_capacity(visible.len());
        let mut foldable = Vec::with_capacity(visible.len());
        for (own, &found) in found_of.iter().enumerate() {
            let k = model.key_at(visible[own]);
            let kids = children(k).len() + more(k);
            // Drawn as pi draws it (a self-parented entry counts itself as a child there).
            foldable.push(
                kids > 0
                    && match found {
                        NULL => true,
                        p => children(p as usize).len() + more(p as usize) > 1,
                    },
            );
            parent_row.push(
                Some(found)
                    .filter(|&p| p != NULL)
                    .map(|p| filtered[p as usize])
                    .filter(|&pp| pp != NONE)
                    .map(|pp| row_of[pp as usize])
                    .filter(|&r| r != NONE && r as usize != own)
                    .unwrap_or(NONE),
            );
        }
        // For clients the parent row is a row above: where ids repeat, pi's by-id parent can name a
        // later copy; those rows take their nearest visible ancestor in the walk instead.
        let later = |own: usize, p: u32| p != NONE && p as usize > own;
        if parent_row.iter().enumerate().any(|(own, &p)| later(own, p)) {
            let walked = visible_parents(model, visible, row_of);
            for (own, p) in parent_row.iter_mut().enumerate() {
                if later(own, *p) {
                    *p = walked[own];
                }
            }
        }
        let mut child_rows = vec![0u32; visible.len()];
        for &p in parent_row.iter().filter(|&&p| p != NONE) {
            child_rows[p as usize] += 1;
        }
        (parent_row, child_rows, foldable)
    };
    // A prefix model builds only the window's rows: their parents and child counts (a row's
    // children are its key's visible children, with those past the prefix) are all it reads.
    let parents_of_built = |built: std::ops::Range<usize>| {
        let n = visible.len();
        let (mut parent_row, mut child_rows, mut foldable) =
            (vec![NONE; n], vec![0u32; n], vec![false; n]);
        for own in built.start.min(n)..built.end.min(n) {
            let found = found_of[own];
            let k = model.key_at(visible[own]);
            let kids = children(k).len() + more(k);
            foldable[own] = kids > 0
                && match found {
                    NULL => true,
                    p => children(p as usize).len() + more(p as usize) > 1,
                };
            parent_row[own] = Some(found)
                .filter(|&p| p != NULL)
                .map(|p| filtered[p as usize])
                .filter(|&pp| pp != NONE)
                .map(|pp| row_of[pp as usize])
                .filter(|&r| r != NONE && r as usize != own)
                .unwrap_or(NONE);
            child_rows[own] = kids as u32;
        }
        (parent_row, child_rows, foldable)
    };
    let ((mut rows, gutters), (parent_row, child_rows, foldable)) = match beyond {
        Some(b) => (walk(), parents_of_built(b.built.clone())),
        None if visible.len() < 4096 => (walk(), parents()),
        None => crate::parallel::join(walk, parents),
    };
    for (row, foldable) in rows.iter_mut().zip(foldable) {
        row.foldable = foldable;
    }
    PiStructure {
        rows,
        gutters,
        multiple_roots,
        parent_row,
        child_rows,
    }
}
