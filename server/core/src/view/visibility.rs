//! Which rows a filter mode shows, per dialect: the five modes and their cycling order, each
//! dialect's hidden bookkeeping types, the rule that hides text-less assistant turns (tool-call-only
//! and thinking-only) in every mode unless they are the leaf or ended in error/aborted/length, and
//! the search test on top.

use super::flatten::Model;
use super::search::Query;
use super::search_cache::{MATCHES, UNDECIDED};
use crate::facts::flags::flag;
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
    // When the filter shows most entries, every laid-out string is tested in file order first
    // (two threads, half the chunks each; the model keeps the answers for the next key), then
    // labeled entries and strings not laid out by position.
    let by_entry = match shown.len() >= 2048 && shown.len() * 2 >= model.key_count() {
        true => model
            .search_cache
            .by_entry(&model.columns, model.dialect, query),
        false => Default::default(),
    };
    let matches = |pos: usize| -> bool {
        if model.flags_at(pos) & flag::LABELED == 0 {
            let entry = model.key_entry[model.key_at(pos)] as usize;
            match by_entry.get(entry) {
                Some(&answer) if answer & UNDECIDED == 0 => return answer & MATCHES != 0,
                _ => {}
            }
        }
        model.search_matches(pos, query)
    };
    let matching = |list: &[usize]| -> Vec<usize> {
        list.iter().copied().filter(|&pos| matches(pos)).collect()
    };
    if shown.len() < 2048 {
        return matching(&shown);
    }
    let (a, b) = shown.split_at(shown.len() / 2);
    let [mut first, rest] = crate::parallel::on_two_threads(a, b, matching);
    first.extend(rest);
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search over most entries, read from the laid-out strings in file order and built on
    /// the answers kept from the searches before it, shows the rows the per-position test
    /// shows: labeled entries, non-ASCII strings (not laid out for omp), the last partial
    /// chunk, queries typed key by key and with terms dropped, in both dialects and every mode.
    #[test]
    fn searching_the_strings_in_file_order_shows_the_rows_tested_by_position() {
        let dir = tempfile::tempdir().unwrap();
        for dialect in [crate::Dialect::Pi, crate::Dialect::Omp] {
            let mut session = crate::test_sessions::generated_session(dir.path(), dialect, 6000, 3);
            // With texts where a key matches although the key before it does not: a wider span
            // (`abc` in `axxxbc`, `parsex` in `pqqqqarsqex`) or a new swapped form (`abcd1`
            // spelled as `abc1d`).
            crate::test_sessions::append_labeled(&mut session, 9000, |n| match n % 6 {
                0 => format!("İSTANBUL parse {n} config"),
                1 => format!("parseConfig the PAR {n}"),
                2 => format!("axxxbc {n}"),
                3 => format!("abc1 d {n}"),
                4 => format!("pqqqqarsqex {n}"),
                _ => format!("plain cache words {n}"),
            });
            let model = super::super::flatten::Model::build(&session, None);
            let mut shown_rows = 0;
            // Typed key by key (the model keeps each answer for the next key), then terms
            // dropped, reordered and repeated.
            let typed = ["parse config", "abcd1", "parsex", "abc"]
                .into_iter()
                .flat_map(|q| (1..=q.len()).map(move |end| &q[..end]));
            let others = [
                "config",
                "parse",
                "config parse",
                "parse parse config",
                "pars config",
                "par",
                "cache entry",
                "e",
                "zzqx",
                "İstanbul pa",
            ];
            for q in typed.chain(others) {
                let query = Query::new(q, dialect);
                for mode in FilterMode::ALL {
                    let expected: Vec<usize> = visible(&model, mode, &Query::new("", dialect))
                        .into_iter()
                        .filter(|&pos| model.search_matches(pos, &query))
                        .collect();
                    let got = visible(&model, mode, &query);
                    assert_eq!(got, expected, "{dialect:?} {mode:?} {q:?}");
                    shown_rows += got.len();
                }
            }
            assert!(shown_rows > 50_000, "{shown_rows}");
        }
    }

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
