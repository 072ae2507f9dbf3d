//! Which rows a filter mode shows, per dialect: the five modes and their cycling order, each
//! dialect's hidden bookkeeping types, the rule that hides text-less assistant turns (tool-call-only
//! and thinking-only) in every mode unless they are the leaf or ended in error/aborted/length, and
//! the search test on top.

use super::flatten::{flag, Model};
use super::search::Query;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The tree selector's filter modes, in cycling order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FilterMode {
    /// Everything except bookkeeping entries.
    #[default]
    Default,
    /// `default` minus tool results.
    NoTools,
    /// User messages (omp: user requests, including user-invoked skill/collab prompts).
    UserOnly,
    /// Entries with a label.
    LabeledOnly,
    /// Everything.
    All,
}

impl FilterMode {
    /// Every mode, in cycling order.
    pub const ALL: [FilterMode; 5] = [
        FilterMode::Default,
        FilterMode::NoTools,
        FilterMode::UserOnly,
        FilterMode::LabeledOnly,
        FilterMode::All,
    ];

    /// The name used in files, flags and the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            FilterMode::Default => "default",
            FilterMode::NoTools => "no-tools",
            FilterMode::UserOnly => "user-only",
            FilterMode::LabeledOnly => "labeled-only",
            FilterMode::All => "all",
        }
    }

    fn position(self) -> usize {
        FilterMode::ALL.iter().position(|&m| m == self).unwrap_or(0)
    }

    /// The next mode (Ctrl+O): `default → no-tools → user-only → labeled-only → all → default`.
    pub fn next(self) -> FilterMode {
        FilterMode::ALL[(self.position() + 1) % FilterMode::ALL.len()]
    }

    /// The previous mode (Shift+Ctrl+O).
    pub fn prev(self) -> FilterMode {
        FilterMode::ALL[(self.position() + FilterMode::ALL.len() - 1) % FilterMode::ALL.len()]
    }

    /// The footer tag (`" [no-tools]"`, …; empty for `default`).
    pub fn tag(self) -> &'static str {
        match self {
            FilterMode::Default => "",
            FilterMode::NoTools => " [no-tools]",
            FilterMode::UserOnly => " [user]",
            FilterMode::LabeledOnly => " [labeled]",
            FilterMode::All => " [all]",
        }
    }
}

impl fmt::Display for FilterMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FilterMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FilterMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown filter `{s}` (expected default, no-tools, user-only, labeled-only or all)"))
    }
}

/// Whether an entry with these [`flag`]s passes the mode (search aside).
pub(crate) fn passes(flags: u16, mode: FilterMode, dialect: crate::Dialect) -> bool {
    let category = flags & flag::CATEGORY;
    if category == flag::ASSISTANT && flags & flag::LEAF == 0 && flags & flag::BLANK != 0 {
        return false;
    }
    let settings = category == flag::SETTINGS;
    match mode {
        FilterMode::UserOnly => match dialect {
            crate::Dialect::Pi => category == flag::USER,
            crate::Dialect::Omp => flags & flag::USER_REQUEST != 0,
        },
        FilterMode::NoTools => !(settings || category == flag::TOOL_RESULT),
        FilterMode::LabeledOnly => flags & flag::LABELED != 0,
        FilterMode::All => true,
        FilterMode::Default => !settings,
    }
}

/// Positions of the visible nodes, in row order. A search (omp's fuzzy rule costs microseconds a
/// text) runs on two threads over halves of the tree, after the filter (integers only).
pub(crate) fn visible(model: &Model, mode: FilterMode, query: &Query) -> Vec<usize> {
    let dialect = model.dialect;
    // Which keys pass the mode: computed once per key, read per position.
    let pass: Vec<bool> = model
        .flags
        .iter()
        .map(|&f| passes(f, mode, dialect))
        .collect();
    let shown: Vec<usize> = model
        .keys()
        .enumerate()
        .filter(|&(_, k)| pass[k])
        .map(|(pos, _)| pos)
        .collect();
    if query.is_empty() {
        return shown;
    }
    let matching = |list: &[usize]| -> Vec<usize> {
        list.iter()
            .copied()
            .filter(|&pos| model.search_matches(pos, query))
            .collect()
    };
    if shown.len() < 2048 {
        return matching(&shown);
    }
    let (a, b) = shown.split_at(shown.len() / 2);
    let [mut first, rest] = super::on_two_threads(a, b, matching);
    first.extend(rest);
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_both_ways() {
        assert_eq!(FilterMode::Default.next(), FilterMode::NoTools);
        assert_eq!(FilterMode::All.next(), FilterMode::Default);
        assert_eq!(FilterMode::Default.prev(), FilterMode::All);
        assert_eq!(
            "labeled-only".parse::<FilterMode>(),
            Ok(FilterMode::LabeledOnly)
        );
        assert_eq!(
            serde_json::to_string(&FilterMode::NoTools).ok().as_deref(),
            Some("\"no-tools\"")
        );
    }
}
