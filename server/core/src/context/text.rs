//! Entry texts read for a context, sharing the block of neighbouring bodies they were read in
//! instead of each being copied out of it: the kept messages of a long range are most of a
//! context's bytes, and copying them cost about as much as reading them.

use crate::entry::{for_each_run, Entry, Run};
use std::ops::Range;
use std::sync::Arc;

/// A slice of a shared text, always on character boundaries.
#[derive(Clone)]
pub(crate) struct SharedStr {
    text: Arc<String>,
    range: Range<usize>,
}

impl SharedStr {
    /// A whole text of its own.
    pub(crate) fn new(text: String) -> SharedStr {
        let range = 0..text.len();
        SharedStr {
            text: Arc::new(text),
            range,
        }
    }

    fn of(text: &Arc<String>, range: Range<usize>) -> Option<SharedStr> {
        text.get(range.clone())?;
        Some(SharedStr {
            text: Arc::clone(text),
            range,
        })
    }

    pub(crate) fn as_str(&self) -> &str {
        // Ranges are checked when made, so this never falls back.
        self.text.get(self.range.clone()).unwrap_or_default()
    }

    /// The part at `range` of this slice (`None` off character boundaries or out of bounds).
    pub(crate) fn slice(&self, range: Range<usize>) -> Option<SharedStr> {
        let start = self.range.start.checked_add(range.start)?;
        let end = self.range.start.checked_add(range.end)?;
        if end > self.range.end {
            return None;
        }
        SharedStr::of(&self.text, start..end)
    }
}

impl std::fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Calls `f(k, text)` with each entry's JSON text, in order, read as
/// [`for_each_body`](crate::entry::for_each_body) reads them (`None` for a body that cannot be
/// read or is not UTF-8). The texts of one read share its block when the whole block is UTF-8.
pub(crate) fn for_each_text(entries: &[&Entry], mut f: impl FnMut(usize, Option<SharedStr>)) {
    let _ = for_each_run(entries, |run| {
        match run {
            Run::Inline(k, text) => f(k, Some(SharedStr::new(text.to_owned()))),
            Run::File(run, Ok(block)) => match String::from_utf8(block) {
                Ok(block) => {
                    let block = Arc::new(block);
                    for (k, at) in run.spans(entries) {
                        f(k, at.and_then(|at| SharedStr::of(&block, at)));
                    }
                }
                // Some bytes of the block (perhaps between our bodies) are not UTF-8: each body
                // on its own.
                Err(err) => {
                    let block = err.into_bytes();
                    for (k, at) in run.spans(entries) {
                        let body = at.and_then(|at| block.get(at));
                        let text = body.and_then(|b| std::str::from_utf8(b).ok());
                        f(k, text.map(|t| SharedStr::new(t.to_owned())));
                    }
                }
            },
            Run::File(run, Err(_)) => run.entries.clone().for_each(|k| f(k, None)),
        }
        Ok::<(), ()>(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{OpenOptions, Session};

    /// The texts of every entry, as `Entry::raw` reads them one by one (`None` where that text
    /// is not the entry's UTF-8 bytes).
    fn one_by_one(entries: &[&Entry]) -> Vec<Option<String>> {
        entries
            .iter()
            .map(|e| e.try_raw().ok().map(|t| t.into_owned()))
            .collect()
    }

    #[test]
    fn shared_texts_equal_the_entries_read_one_by_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        // A line that is not UTF-8 between two messages puts bytes that are not UTF-8 inside
        // the block read for them.
        let mixed = crate::test_sessions::session_with_a_line_not_utf8(dir.path());
        let mut files = crate::test_sessions::sample_sessions(dir.path());
        files.push(mixed);
        let mut checked = 0;
        for path in files {
            let Ok(session) = Session::open(&path, OpenOptions::default()) else {
                continue;
            };
            // Without the entries between messages, so that their bytes are in the gaps.
            let entries: Vec<&Entry> = session
                .entries()
                .iter()
                .filter(|e| e.kind() == "message")
                .collect();
            let expected: Vec<Option<String>> = one_by_one(&entries);
            let mut got = vec![None; entries.len()];
            for_each_text(&entries, |k, text| {
                got[k] = text.map(|t| t.as_str().to_owned())
            });
            for (k, (got, expected)) in got.iter().zip(&expected).enumerate() {
                // `raw` decodes a body that is not UTF-8 lossily; the shared text has none.
                let utf8 = expected.as_ref().filter(|t| !t.contains('\u{fffd}'));
                if utf8.is_some() {
                    assert_eq!(got.as_ref(), utf8, "{} entry {k}", path.display());
                }
            }
            checked += 1;
        }
        assert!(checked > 5);
    }

    #[test]
    fn slices_stay_on_character_boundaries_and_inside_their_slice() {
        let whole = SharedStr::new("aé{\"x\":1}".to_owned());
        assert_eq!(whole.as_str(), "aé{\"x\":1}");
        let json = whole.slice(3..10).expect("in bounds");
        assert_eq!(json.as_str(), "{\"x\":1}");
        assert_eq!(
            json.slice(1..4).map(|s| s.as_str().to_owned()),
            Some("\"x\"".to_owned())
        );
        assert!(whole.slice(2..3).is_none(), "inside é");
        assert!(json.slice(0..8).is_none(), "past the slice");
    }
}
