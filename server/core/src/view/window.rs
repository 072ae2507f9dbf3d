//! The visible window of the selector: its size per dialect (pi `max(5, h/2)`; omp the same capped
//! by its 8 rows of panel chrome), centring on the selection, omp's scrollbar thumb, and selection
//! moves (Up/Down wrap, Left/Right move a page and stop at the ends).

use crate::dialect::Dialect;
use serde::{Deserialize, Serialize};

/// Rows of chrome around omp's tree list (borders, spacers, help, search, divider).
const OMP_PANEL_CHROME_ROWS: usize = 8;

/// How many rows the selector shows for a terminal height.
pub fn window_size(dialect: Dialect, terminal_height: usize) -> usize {
    let half = (terminal_height / 2).max(5);
    match dialect {
        Dialect::Pi => half,
        Dialect::Omp => half
            .min(terminal_height.saturating_sub(OMP_PANEL_CHROME_ROWS))
            .max(1),
    }
}

/// The visible window: rows `start..end` of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Window {
    /// First visible row.
    pub start: usize,
    /// One past the last visible row.
    pub end: usize,
    /// The window size (rows shown at most).
    pub max_rows: usize,
}

/// The window centred on `selected` (`max(0, min(sel - max/2, count - max))`); from the top when
/// nothing is selected.
pub fn centered(selected: Option<usize>, count: usize, max_rows: usize) -> Window {
    let start = match selected {
        Some(sel) => sel
            .saturating_sub(max_rows / 2)
            .min(count.saturating_sub(max_rows)),
        None => 0,
    };
    Window {
        start,
        end: (start + max_rows).min(count),
        max_rows,
    }
}

/// omp's scrollbar thumb rows (local to the window) for `height` visible lines of `total`.
pub fn thumb_range(height: usize, total: usize, offset: usize) -> (usize, usize) {
    if height == 0 {
        return (0, 0);
    }
    if total <= height {
        return (0, height);
    }
    let size = ((height * height) / total).clamp(1, height);
    let travel = height - size;
    let max_offset = total - height;
    let offset = offset.min(max_offset);
    let start = if max_offset == 0 {
        0
    } else {
        crate::js::round(offset as f64 / max_offset as f64 * travel as f64) as usize
    };
    (start, start + size)
}

/// A selection move in the selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Move {
    /// Up one row, wrapping to the bottom.
    Up,
    /// Down one row, wrapping to the top.
    Down,
    /// Left / Page Up: one window up, stopping at the first row.
    PageUp,
    /// Right / Page Down: one window down, stopping at the last row.
    PageDown,
    /// Home (omp).
    First,
    /// End (omp).
    Last,
}

/// The row selected after a move (`None` when there are no rows).
pub fn move_selection(
    selected: Option<usize>,
    count: usize,
    max_rows: usize,
    how: Move,
) -> Option<usize> {
    if count == 0 {
        return None;
    }
    let sel = selected.unwrap_or(0).min(count - 1);
    Some(match how {
        Move::Up => {
            if sel == 0 {
                count - 1
            } else {
                sel - 1
            }
        }
        Move::Down => {
            if sel + 1 >= count {
                0
            } else {
                sel + 1
            }
        }
        Move::PageUp => sel.saturating_sub(max_rows),
        Move::PageDown => (sel + max_rows).min(count - 1),
        Move::First => 0,
        Move::Last => count - 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_centring() {
        assert_eq!(window_size(Dialect::Pi, 40), 20);
        assert_eq!(window_size(Dialect::Pi, 6), 5);
        assert_eq!(window_size(Dialect::Omp, 40), 20);
        assert_eq!(window_size(Dialect::Omp, 12), 4);
        assert_eq!(window_size(Dialect::Omp, 3), 1);
        assert_eq!(
            centered(Some(35), 72, 20),
            Window {
                start: 25,
                end: 45,
                max_rows: 20
            }
        );
        assert_eq!(
            centered(Some(70), 72, 20),
            Window {
                start: 52,
                end: 72,
                max_rows: 20
            }
        );
        assert_eq!(
            centered(Some(2), 3, 20),
            Window {
                start: 0,
                end: 3,
                max_rows: 20
            }
        );
    }

    #[test]
    fn thumb_and_moves() {
        assert_eq!(thumb_range(20, 72, 25), (7, 12));
        assert_eq!(move_selection(Some(0), 5, 20, Move::Up), Some(4));
        assert_eq!(move_selection(Some(4), 5, 20, Move::Down), Some(0));
        assert_eq!(move_selection(Some(4), 50, 20, Move::PageUp), Some(0));
        assert_eq!(move_selection(Some(40), 50, 20, Move::PageDown), Some(49));
        assert_eq!(move_selection(None, 0, 20, Move::Down), None);
    }
}
