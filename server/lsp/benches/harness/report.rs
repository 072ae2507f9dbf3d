//! The figures as tables: one block per size, one column per dialect, in plain text and
//! (on request) markdown.

use crate::args::*;
use crate::figures::*;
use crate::AnyResult;
use serde_json::Value;
use sessiontree_core::synth;
use sessiontree_core::Dialect;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// One size's columns: per dialect, its data file's stats and its figures.
pub type Columns = Vec<(Dialect, Value, Vec<Figure>)>;

pub fn fmt_value(v: f64, unit: &str) -> String {
    if unit == "MB" {
        format!("{v:.0} MB")
    } else if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 1.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.3} ms")
    }
}

/// One table row per figure: op, one cell per dialect, the budget, the worst verdict.
pub fn table_rows<'a>(
    budgets: &Budgets,
    size: usize,
    cols: &'a [(Dialect, Value, Vec<Figure>)],
) -> Vec<(&'a str, Vec<String>, String, &'static str)> {
    let mut out = Vec::new();
    for row in 0..cols[0].2.len() {
        let mut verdicts = Vec::new();
        let mut budget_text = String::new();
        let mut cells = Vec::new();
        for (_, _, figs) in cols {
            let fig = &figs[row];
            let bare = |v: f64| {
                fmt_value(v, fig.unit)
                    .trim_end_matches(" ms")
                    .trim_end_matches(" MB")
                    .to_owned()
            };
            cells.push(match (fig.median(), fig.spread()) {
                (Some(m), Some((lo, hi))) => {
                    format!("{} [{}-{}]", fmt_value(m, fig.unit), bare(lo), bare(hi))
                }
                _ => "not measured yet".to_owned(),
            });
            let budget = budgets.for_figure(size, fig);
            if let Some(b) = budget {
                budget_text = format!(
                    "≤ {}{}",
                    fmt_value(b.limit, fig.unit),
                    if b.plus_write { " + write" } else { "" }
                );
            }
            verdicts.push(verdict(fig, budget));
        }
        let worst = if verdicts.contains(&"OVER") {
            "OVER"
        } else if verdicts.contains(&"not measured yet") {
            "not measured yet"
        } else if verdicts.iter().all(|v| *v == "ok") {
            "ok"
        } else {
            "-"
        };
        out.push((cols[0].2[row].op, cells, budget_text, worst));
    }
    out
}

/// Prints the tables, and writes the markdown ones to `markdown` when given (relative to the
/// workspace root).
pub fn print_tables(
    budgets: &Budgets,
    by_size: &BTreeMap<usize, Columns>,
    markdown: Option<&Path>,
) -> AnyResult<()> {
    let mut out = std::io::stdout().lock();
    let mut md = String::new();
    for (size, cols) in by_size {
        let heads: Vec<String> = cols
            .iter()
            .map(|(dialect, stats, _)| {
                let mb = stats["bytes"].as_f64().unwrap_or(0.0) / 1e6;
                format!("{dialect} ({mb:.0} MB) median [min-max]")
            })
            .collect();
        let title = format!("{} entries", synth::format_count(*size));
        writeln!(out)?;
        let mut header = format!("{title:<72}");
        for h in &heads {
            header.push_str(&format!(" | {h:<30}"));
        }
        header.push_str(" | budget            | verdict");
        writeln!(out, "{header}")?;
        writeln!(out, "{}", "-".repeat(header.chars().count()))?;
        md.push_str(&format!(
            "\n| {title} | {} | budget | verdict |\n|---|{}---|---|\n",
            heads.join(" | "),
            "---|".repeat(heads.len())
        ));
        for (op, cells, budget_text, worst) in table_rows(budgets, *size, cols) {
            let mut line = format!("{op:<72}");
            for cell in &cells {
                line.push_str(&format!(" | {cell:<30}"));
            }
            line.push_str(&format!(" | {budget_text:<17} | {worst}"));
            writeln!(out, "{line}")?;
            let op_md = match op.strip_prefix("  ") {
                Some(sub) => format!("&nbsp;&nbsp;{sub}"),
                None => op.to_owned(),
            };
            let worst_md = if worst == "OVER" { "**OVER**" } else { worst };
            md.push_str(&format!(
                "| {op_md} | {} | {budget_text} | {worst_md} |\n",
                cells.join(" | ")
            ));
        }
    }
    if let Some(md_path) = markdown {
        let md_path = if md_path.is_absolute() {
            md_path.to_path_buf()
        } else {
            workspace_root().join(md_path)
        };
        std::fs::write(&md_path, md.trim_start())?;
        writeln!(out, "\nwrote {}", md_path.display())?;
    }
    Ok(())
}
