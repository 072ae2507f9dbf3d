//! Which rows a filter mode shows, per dialect: the five modes and their cycling order, each
//! dialect's hidden bookkeeping types, the rule that hides text-less assistant turns (tool-call-only
//! and thinking-only) in every mode unless they are the leaf or ended in error/aborted/length, and
//! the search test on top.

use super::flatten::{Model, Node};
use super::search::Query;
use super::text;
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

/// Whether a node passes the mode (search aside).
pub(crate) fn passes(node: &Node, mode: FilterMode, model: &Model) -> bool {
    if node.kind() == "message"
        && node.role() == Some("assistant")
        && !node.is_leaf
        && node.facts.blank_assistant
    {
        return false;
    }
    let settings = text::is_settings(node.kind(), model.dialect);
    match mode {
        FilterMode::UserOnly => match model.dialect {
            crate::Dialect::Pi => node.kind() == "message" && node.role() == Some("user"),
            crate::Dialect::Omp => node.facts.user_request,
        },
        FilterMode::NoTools => {
            !(settings || (node.kind() == "message" && node.role() == Some("toolResult")))
        }
        FilterMode::LabeledOnly => node.label.is_some(),
        FilterMode::All => true,
        FilterMode::Default => !settings,
    }
}

/// Positions of the visible nodes, in row order. A search (omp's fuzzy rule costs microseconds a
/// text) runs on two threads over halves of the tree.
pub(crate) fn visible(model: &Model, mode: FilterMode, query: &Query) -> Vec<usize> {
    let shown = |range: std::ops::Range<usize>| -> Vec<usize> {
        range
            .filter(|&pos| {
                let n = &model.nodes[pos];
                passes(n, mode, model) && query.matches(&n.search())
            })
            .collect()
    };
    let n = model.nodes.len();
    if query.is_empty() || n < 2048 {
        return shown(0..n);
    }
    let mid = n / 2;
    std::thread::scope(|scope| {
        let second = scope.spawn(|| shown(mid..n));
        let mut first = shown(0..mid);
        match second.join() {
            Ok(rest) => first.extend(rest),
            // A panic in the matcher would be a bug; finish the work here rather than lose rows.
            Err(_) => first.extend(shown(mid..n)),
        }
        first
    })
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
