//! pi's branch-segment moves in the `/tree` view (`findBranchSegmentStart`): where Ctrl+← and
//! Ctrl+→ (Alt+← / Alt+→) move the selection when they do not fold or unfold. Up walks the
//! visible parents to the first row of the branch segment holding the selection (from a
//! segment's first row, the one above; a root stays); down follows first visible children to
//! the first child of the next branch point, or to the end of the chain. omp has no such keys;
//! its view moves by the same rule on its visible structure.

use super::{flatten, TreeModel, ViewState};
use serde::{Deserialize, Serialize};

/// Which way a branch-segment move goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Segment {
    /// Ctrl+← on a row it does not fold.
    Up,
    /// Ctrl+→ on a row it does not unfold.
    Down,
}

impl TreeModel {
    /// The entry the selection moves to from `state.selected` (or the leaf; a hidden one from
    /// its nearest visible ancestor) in the view with `folded` folded; `None` when nothing is
    /// visible.
    pub fn segment_start(
        &self,
        state: &ViewState,
        folded: &[String],
        way: Segment,
    ) -> Option<String> {
        let layout = self.layout_for(state, folded);
        let anchor = state.selected.as_deref().or(self.leaf.as_deref());
        let selected =
            self.model
                .nearest_visible(anchor, &layout.row_of_key, layout.visible_count)?;
        let row = segment_row(&layout.parent_rows, &layout.child_rows, selected, way);
        layout.ids.get(row).map(str::to_owned)
    }
}

/// The row a move from row `selected` ends on, from each row's visible parent row
/// ([`flatten::NONE`]: none) and visible child count. A row's first visible child is the row
/// after it.
fn segment_row(parents: &[u32], children: &[u32], selected: usize, way: Segment) -> usize {
    let mut at = selected;
    // Each step goes to another row; the bound only guards against a malformed structure.
    for _ in 0..parents.len() {
        match way {
            Segment::Down => match children.get(at).copied().unwrap_or(0) {
                0 => return at,
                1 if at + 1 < parents.len() => at += 1,
                1 => return at,
                _ => return (at + 1).min(parents.len() - 1),
            },
            Segment::Up => {
                let parent = parents.get(at).copied().unwrap_or(flatten::NONE);
                if parent == flatten::NONE || parent as usize >= parents.len() {
                    return at;
                }
                if children[parent as usize] > 1 && at < selected {
                    return at;
                }
                at = parent as usize;
            }
        }
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::view::testkit::Kit;

    /// The seed example: start → plan → {try A → A result → continue A (leaf), try B → B result}.
    #[test]
    fn moves_as_pis_fold_keys_do() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = Kit::seed_example(dialect);
            let model = TreeModel::new(&k.session, None);
            let at = |from: Option<&str>, folded: &[String], way| {
                let state = ViewState {
                    selected: from.map(|f| k.id(f)),
                    ..ViewState::default()
                };
                model.segment_start(&state, folded, way)
            };
            let id = |name: &str| Some(k.id(name));
            // From the leaf up: the start of its branch, then the root (the start's segment is
            // the one above).
            assert_eq!(at(None, &[], Segment::Up), id("try_a"), "{dialect:?}");
            assert_eq!(at(Some("try_a"), &[], Segment::Up), id("start"));
            assert_eq!(at(Some("start"), &[], Segment::Up), id("start"));
            assert_eq!(at(Some("b_result"), &[], Segment::Up), id("try_b"));
            // Down: along first children to the branch point's first child, then the chain's end.
            assert_eq!(at(Some("start"), &[], Segment::Down), id("try_a"));
            assert_eq!(at(Some("try_a"), &[], Segment::Down), id("continue_a"));
            assert_eq!(at(Some("try_b"), &[], Segment::Down), id("b_result"));
            // Folded: the folded row has no visible children; the leaf inside moves from it.
            let folded = [k.id("try_a")];
            assert_eq!(at(Some("try_a"), &folded, Segment::Down), id("try_a"));
            assert_eq!(at(None, &folded, Segment::Up), id("start"));
        }
    }
}
