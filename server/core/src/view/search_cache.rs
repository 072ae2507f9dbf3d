//! A search that tests most entries reads the laid-out search strings in file order and notes,
//! entry by entry, whether each matched (and whether it matched loosely, see
//! [`super::fuzzy_ascii::Verdict`]). The tree model keeps the last few of these by the query's
//! terms, and the next key starts from one of them:
//! - a kept search whose terms the query all has: only the entries that matched them are tested,
//!   and only for the query's other terms (typing a second word);
//! - a kept search each of whose terms the query has or extends (typing on in a word, no new
//!   letter–digit pair): only the entries that matched it loosely are tested, for every term.

use super::fuzzy_ascii::Verdict;
use super::search::Query;
use crate::dialect::Dialect;
use crate::session::columns::ViewColumns;
use std::sync::{Arc, Mutex};

/// An entry's answer: its string matches the query.
pub(crate) const MATCHES: u8 = 1;
/// An entry's answer: its string matches the query loosely.
pub(crate) const LOOSELY: u8 = 2;
/// An entry's answer: its string is not laid out; the search tests it by position.
pub(crate) const UNDECIDED: u8 = 4;

/// How many searches a model keeps (one byte an entry each).
const KEPT: usize = 8;

/// One search's answers by entry, with its terms sorted and without repeats.
type Kept = (Vec<String>, Arc<Vec<u8>>);

/// The answers of a model's recent searches, oldest first.
#[derive(Debug, Default)]
pub(crate) struct SearchCache {
    recent: Mutex<Vec<Kept>>,
}

/// How a kept search bears on a query.
enum Base {
    /// The query has all of its terms.
    Shares(Kept),
    /// The query has or extends each of its terms.
    Narrows(Kept),
}

impl SearchCache {
    /// Each entry's answer to `query` from its laid-out string ([`MATCHES`], [`LOOSELY`],
    /// [`UNDECIDED`] bits), over the full chunks of the model's columns, on two threads, built
    /// on the kept search that bears on it with the most terms.
    pub fn by_entry(&self, columns: &ViewColumns, dialect: Dialect, query: &Query) -> Arc<Vec<u8>> {
        let mut terms: Vec<(String, usize)> = query.terms().into_iter().zip(0..).collect();
        terms.sort();
        terms.dedup_by(|a, b| a.0 == b.0);
        let keys: Vec<String> = terms.iter().map(|(term, _)| term.clone()).collect();
        let base = self.base_for(&keys);
        if let Some(Base::Shares((kept, answers))) = &base {
            if kept.len() == keys.len() {
                return Arc::clone(answers);
            }
        }
        // The terms to test, and the answers they start from.
        let (tested, prior): (Vec<usize>, Option<&[u8]>) = match &base {
            Some(Base::Shares((kept, answers))) => (
                terms
                    .iter()
                    .filter(|(term, _)| kept.binary_search(term).is_err())
                    .map(|&(_, i)| i)
                    .collect(),
                Some(&answers[..]),
            ),
            Some(Base::Narrows((_, answers))) => {
                (terms.iter().map(|&(_, i)| i).collect(), Some(&answers[..]))
            }
            None => (terms.iter().map(|&(_, i)| i).collect(), None),
        };
        let shares = matches!(base, Some(Base::Shares(_)));
        let answer = |entry: usize, text: &[u8]| -> u8 {
            let before = prior
                .and_then(|p| p.get(entry).copied())
                .filter(|a| a & UNDECIDED == 0)
                .unwrap_or(MATCHES | LOOSELY);
            if before & LOOSELY == 0 {
                return 0;
            }
            let mut bits = match shares {
                true => before,
                false => MATCHES | LOOSELY,
            };
            for &i in &tested {
                if bits & LOOSELY == 0 {
                    break;
                }
                bits &= bits_of(query.term_verdict(i, text));
            }
            bits
        };
        let chunks = columns.full_chunks();
        let half = chunks / 2;
        let [mut answers, second] =
            crate::parallel::on_two_threads((0, half), (half, chunks), |range| {
                columns.answers_by_entry(dialect, range, UNDECIDED, answer)
            });
        answers.extend(second);
        let answers = Arc::new(answers);
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.push((keys, Arc::clone(&answers)));
        if recent.len() > KEPT {
            recent.remove(0);
        }
        answers
    }

    /// The kept search that bears on a query with these terms (sorted), with the most terms;
    /// of two with as many, one the query shares.
    fn base_for(&self, keys: &[String]) -> Option<Base> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let mut best: Option<(usize, bool, &Kept)> = None;
        for kept in recent.iter().rev() {
            let shares = kept.0.iter().all(|k| keys.binary_search(k).is_ok());
            let narrows = shares
                || kept
                    .0
                    .iter()
                    .all(|k| keys.iter().any(|key| key == k || extends(key, k)));
            let rank = (kept.0.len(), shares);
            if narrows && best.is_none_or(|(len, s, _)| rank > (len, s)) {
                best = Some((rank.0, rank.1, kept));
            }
        }
        best.map(|(_, shares, kept)| match shares {
            true => Base::Shares(kept.clone()),
            false => Base::Narrows(kept.clone()),
        })
    }
}

/// A verdict as answer bits.
fn bits_of(verdict: Verdict) -> u8 {
    (u8::from(verdict.matches) * MATCHES) | (u8::from(verdict.loosely) * LOOSELY)
}

/// Whether `longer` is `shorter` with characters added at the end, none of which makes a
/// letter–digit pair with the character before it (which would give the longer term a swapped
/// form the shorter one lacks).
fn extends(longer: &str, shorter: &str) -> bool {
    let Some(added) = longer.strip_prefix(shorter) else {
        return false;
    };
    let last = shorter.chars().last();
    !added.is_empty()
        && last
            .into_iter()
            .chain(added.chars())
            .zip(added.chars())
            .all(|(a, b)| {
                let pair = (a.is_ascii_lowercase() && b.is_ascii_digit())
                    || (a.is_ascii_digit() && b.is_ascii_lowercase());
                !pair
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_extends_another_without_a_new_letter_digit_pair() {
        assert!(extends("pars", "par"));
        assert!(extends("parse", "par"));
        assert!(extends("a1bc", "a1b"));
        assert!(extends("x12", "x1"));
        assert!(!extends("par", "par"));
        assert!(!extends("abcd1", "abcd"));
        assert!(!extends("ab1x", "ab"));
        assert!(!extends("1a", "1"));
        assert!(!extends("spar", "par"));
        assert!(extends("p", ""));
    }
}
