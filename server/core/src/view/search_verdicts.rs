//! A search that tests most entries reads the laid-out search strings in file order and notes,
//! entry by entry, whether each matched. The tree model keeps the last few of these by the
//! query's terms: the next key usually keeps all terms but the one being typed, so only the
//! entries that matched the kept terms are tested again, and only for the others.

use super::flatten::Model;
use super::search::Query;
use std::sync::{Arc, Mutex};

/// How many searches a model keeps (one byte an entry each).
const KEPT: usize = 8;

/// One search's answers by entry ([`super::columns::ViewColumns::matches_by_entry`]'s), with
/// its terms sorted and without repeats.
type Kept = (Vec<String>, Arc<Vec<u8>>);

/// The answers of a model's recent searches, oldest first.
#[derive(Debug, Default)]
pub(crate) struct SearchVerdicts {
    recent: Mutex<Vec<Kept>>,
}

impl SearchVerdicts {
    /// Each entry's answer to `query` from its laid-out string (1: matches, 0: not,
    /// [`super::columns::UNDECIDED`]: not laid out, to be tested by position), over the model's full chunks, on
    /// two threads. Built on the kept search with the most of the query's terms and no others.
    pub fn by_entry(&self, model: &Model, query: &Query) -> Arc<Vec<u8>> {
        let mut terms: Vec<(String, usize)> = query.terms().into_iter().zip(0..).collect();
        terms.sort();
        terms.dedup_by(|a, b| a.0 == b.0);
        let keys: Vec<String> = terms.iter().map(|(term, _)| term.clone()).collect();
        let base = self.base_for(&keys);
        if let Some((base_keys, answers)) = &base {
            if base_keys.len() == keys.len() {
                return Arc::clone(answers);
            }
        }
        let rest: Vec<usize> = terms
            .iter()
            .filter(|(term, _)| {
                base.as_ref()
                    .is_none_or(|(base_keys, _)| base_keys.binary_search(term).is_err())
            })
            .map(|&(_, i)| i)
            .collect();
        let prior = base.as_ref().map(|(_, answers)| &answers[..]);
        let chunks = model.columns.full_chunks();
        let half = chunks / 2;
        let [mut answers, second] = super::on_two_threads((0, half), (half, chunks), |range| {
            model
                .columns
                .matches_by_entry(model.dialect, range, prior, |text| {
                    rest.iter().all(|&i| query.term_matches_column(i, text))
                })
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

    /// The kept search whose terms are all among `keys` (sorted), with the most terms.
    fn base_for(&self, keys: &[String]) -> Option<Kept> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .iter()
            .filter(|(kept, _)| kept.iter().all(|k| keys.binary_search(k).is_ok()))
            .max_by_key(|(kept, _)| kept.len())
            .cloned()
    }
}
