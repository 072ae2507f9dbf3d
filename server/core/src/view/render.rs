//! The text lines of each agent's `/tree` list, ANSI removed: cursor, gutter prefix (pi's fold
//! markers, omp's `…` compression of deep gutters), active-path bullet, `[label] `, row text,
//! truncation to the width, and the footer (pi `(n/m)` + filter tag; omp the filter tag, its
//! scrollbar column and its empty-state lines).

use super::flatten::pi_layout::PiStructure;
use super::flatten::Model;
use super::window::{thumb_range, Window};
use super::{FilterMode, GutterCell};
use crate::cells;

/// A gutter prefix as drawn, and its cells (one per three-character level).
pub(crate) struct Prefix {
    pub text: String,
    pub cells: Vec<GutterCell>,
}

impl Prefix {
    fn with_levels(levels: usize) -> Prefix {
        Prefix {
            text: String::with_capacity(levels * 5),
            cells: Vec::with_capacity(levels),
        }
    }

    /// A level drawn as a gutter column: `│` or blank.
    fn column(&mut self, show: bool) {
        self.text.push_str(if show { "│  " } else { "   " });
        self.cells.push(if show {
            GutterCell::Line
        } else {
            GutterCell::Space
        });
    }

    /// A level drawn as this row's connector, `marker` after the corner.
    fn connector(&mut self, is_last: bool, marker: char) {
        self.text.push(if is_last { '└' } else { '├' });
        self.text.push(marker);
        self.text.push(' ');
        self.cells.push(if is_last {
            GutterCell::Last
        } else {
            GutterCell::Branch
        });
    }
}

/// pi's gutter prefix for a visible row.
pub(crate) fn pi_prefix(structure: &PiStructure, row: usize, folded: bool) -> Prefix {
    let r = structure.rows[row];
    let indent = r.indent as usize;
    let display_indent = if structure.multiple_roots {
        indent.saturating_sub(1)
    } else {
        indent
    };
    let connector = r.show_connector && !r.is_virtual_root_child;
    let connector_level = if connector {
        display_indent.checked_sub(1)
    } else {
        None
    };
    let gutters = structure.gutters_of(row, display_indent);
    let mut out = Prefix::with_levels(display_indent);
    for (level, gutter) in gutters.into_iter().enumerate() {
        if let Some(show) = gutter {
            out.column(show);
        } else if connector_level == Some(level) {
            let marker = if folded {
                '⊞'
            } else if r.foldable {
                '⊟'
            } else {
                '─'
            };
            out.connector(r.is_last, marker);
        } else {
            out.column(false);
        }
    }
    out
}

/// omp's gutter prefix for a node, given the deepest depth in the window.
/// How many gutter levels omp draws in a row `width` cells wide (deeper ones scroll out behind
/// `…`).
pub(crate) fn omp_gutter_levels(width: usize) -> usize {
    let reserve = 24usize.max(width / 2);
    (width.saturating_sub(reserve).saturating_sub(4) / 3).max(1)
}

pub(crate) fn omp_prefix(model: &Model, pos: usize, width: usize, deepest: usize) -> Prefix {
    let node = &model.nodes[pos];
    let max_levels = omp_gutter_levels(width);
    let window_offset = deepest.saturating_sub(max_levels);
    let depth = node.depth as usize;
    let has_connector = node.parent.is_some() && node.sibling_count > 1;
    let scroll = window_offset.min(depth);
    let rendered = depth - scroll;
    let connector_level = if has_connector {
        rendered.checked_sub(1)
    } else {
        None
    };
    // The branch ancestors by depth (one per level at most), nearest first.
    let mut gutters: Vec<(usize, bool)> = Vec::new();
    let mut cursor = node.branch_up;
    while let Some(a) = cursor {
        let an = &model.nodes[a as usize];
        let depth = an.depth as usize;
        if depth == 0 || depth - 1 < scroll {
            break;
        }
        gutters.push((depth - 1, an.is_last));
        cursor = an.branch_up;
    }
    let mut out = Prefix::with_levels(rendered);
    for level in 0..rendered {
        let original = level + scroll;
        if let Some(&(_, is_last)) = gutters.iter().rev().find(|(d, _)| *d == original) {
            out.column(!is_last);
        } else if connector_level == Some(level) {
            out.connector(node.is_last, '─');
        } else {
            out.column(false);
        }
    }
    // Older levels scrolled out behind `…` in the first cell.
    if scroll > 0 && !out.cells.is_empty() {
        let first = out.text.chars().next().map_or(0, char::len_utf8);
        out.text.replace_range(..first, "…");
        out.cells[0] = GutterCell::Ellipsis;
    }
    out
}

/// The part of a row after the gutter: bullet, label, text.
pub(crate) fn row_body(
    fold_marker: bool,
    on_path: bool,
    label: Option<&str>,
    text: &str,
) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    if fold_marker {
        out.push_str("⊞ ");
    }
    if on_path {
        out.push_str("• ");
    }
    if let Some(label) = label.filter(|l| !l.is_empty()) {
        out.push('[');
        out.push_str(label);
        out.push_str("] ");
    }
    out.push_str(text);
    out
}

/// What a list render needs for each window row.
pub(crate) struct LineRow<'a> {
    pub selected: bool,
    pub prefix: &'a str,
    pub body: String,
}

/// A pi gutter prefix cut to what a line `width` cells wide can show. Its characters are one cell
/// and one cluster each, so past `width + 1` of them the line is cut inside the prefix anyway and
/// the rest (thousands of cells in deep trees) changes nothing.
fn cut_gutter(prefix: &str, width: usize) -> &str {
    match prefix.char_indices().nth(width + 1) {
        Some((at, _)) => &prefix[..at],
        None => prefix,
    }
}

/// pi's list lines.
pub(crate) fn pi_lines(
    rows: &[LineRow<'_>],
    selected: Option<usize>,
    visible: usize,
    filter: FilterMode,
    width: usize,
) -> Vec<String> {
    let mut lines = Vec::with_capacity(rows.len() + 1);
    if visible == 0 {
        lines.push(cells::truncate_to_width("  No entries found", width, "..."));
        lines.push(cells::truncate_to_width(
            &format!("  (0/0){}", filter.tag()),
            width,
            "...",
        ));
        return lines;
    }
    for row in rows {
        let cursor = if row.selected { "› " } else { "  " };
        lines.push(cells::truncate_to_width(
            &format!("{cursor}{}{}", cut_gutter(row.prefix, width), row.body),
            width,
            "...",
        ));
    }
    let sel = selected.map_or(0, |s| s + 1);
    lines.push(cells::truncate_to_width(
        &format!("  ({sel}/{visible}){}", filter.tag()),
        width,
        "...",
    ));
    lines
}

/// omp's list lines.
pub(crate) fn omp_lines(
    rows: &[LineRow<'_>],
    window: Window,
    visible: usize,
    total: usize,
    filter: FilterMode,
    search: &str,
    width: usize,
) -> Vec<String> {
    let ell = "\u{2026}";
    let mut lines = Vec::with_capacity(rows.len() + 1);
    let tag = filter.tag();
    if visible == 0 {
        if total == 0 {
            lines.push(cells::truncate_to_width("No entries found", width, ell));
            lines.push(cells::truncate_to_width(&format!("(0/0){tag}"), width, ell));
        } else if !search.is_empty() {
            lines.push(cells::truncate_to_width(
                &format!("No entries match search \"{search}\""),
                width,
                ell,
            ));
            lines.push(cells::truncate_to_width(
                "Press Backspace to clear the search",
                width,
                ell,
            ));
            lines.push(cells::truncate_to_width(
                &format!("(0/{total}){tag}"),
                width,
                ell,
            ));
        } else {
            let label = if tag.is_empty() {
                "[default]"
            } else {
                crate::js::trim(tag)
            };
            lines.push(cells::truncate_to_width(
                &format!("{total} entries hidden by the current filter {label}"),
                width,
                ell,
            ));
            lines.push(cells::truncate_to_width(
                "Press Alt+A to show all, Alt+D for default",
                width,
                ell,
            ));
            lines.push(cells::truncate_to_width(
                &format!("(0/{total}){tag}"),
                width,
                ell,
            ));
        }
        return lines;
    }
    let mut body: Vec<String> = rows
        .iter()
        .map(|row| {
            let cursor = if row.selected { "› " } else { "  " };
            let text = format!("{cursor}{}{}", row.prefix, row.body).replace('\t', "   ");
            cells::truncate_to_width(&text, width, ell)
        })
        .collect();
    if window.max_rows < visible && !body.is_empty() && width > 0 {
        let height = body.len();
        let content_width = width - 1;
        let (thumb_start, thumb_end) = thumb_range(height, visible, window.start);
        body = body
            .into_iter()
            .enumerate()
            .map(|(i, line)| {
                let mut cut = cells::truncate_to_width(&line, content_width, ell);
                let pad = content_width.saturating_sub(cells::visible_width(&cut));
                cut.extend(std::iter::repeat_n(' ', pad));
                cut.push(if i >= thumb_start && i < thumb_end {
                    '█'
                } else {
                    '│'
                });
                cut
            })
            .collect();
    }
    lines.extend(body);
    if !tag.is_empty() {
        lines.push(cells::truncate_to_width(crate::js::trim(tag), width, ell));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cutting a deep gutter before drawing gives the same line.
    #[test]
    fn a_deep_gutter_cut_draws_the_same_line() {
        let deep: String = "│  ".repeat(400) + "├⊟ ";
        for width in [0, 1, 2, 3, 10, 40, 120] {
            for body in ["user: hi", "\u{301}combining first", ""] {
                for selected in [true, false] {
                    let rows = |prefix: &'static str| {
                        vec![LineRow {
                            selected,
                            prefix,
                            body: body.to_owned(),
                        }]
                    };
                    let leaked: &'static str = Box::leak(deep.clone().into_boxed_str());
                    let cut = pi_lines(&rows(leaked), Some(0), 1, FilterMode::Default, width);
                    let full = cells::truncate_to_width(
                        &format!("{}{leaked}{body}", if selected { "› " } else { "  " }),
                        width,
                        "...",
                    );
                    assert_eq!(cut[0], full, "width {width}");
                }
            }
        }
    }
}
