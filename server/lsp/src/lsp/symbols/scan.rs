//! Scoring the names of every file on the threads a call may use (`parallel`), in chunks taken in file order, stopping early
//! once the answer is known: the answer ranks by score, then file, then entry, so when the chunks
//! done from the start hold `limit` names with the best score a name can get, no later name can
//! enter it.

use super::item::Item;
use nucleo_matcher::{Config, Matcher};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Names per chunk: small enough that a thread scores little past the point where the answer is
/// known, large enough that taking a chunk costs nothing next to scoring it.
const CHUNK: usize = 1024;

/// A score with the file and entry it belongs to.
pub type Scored = (u32, usize, usize);

/// A run of names of one file.
struct Chunk {
    file: usize,
    range: std::ops::Range<usize>,
}

/// The chunks scored so far, and how far from the start they are all done.
struct Progress {
    done: Vec<Option<Vec<Scored>>>,
    frontier: usize,
    best_in_frontier: usize,
}

struct Scan<'a, F> {
    files: &'a [Arc<Vec<Item>>],
    chunks: Vec<Chunk>,
    next: AtomicUsize,
    stop: AtomicBool,
    progress: Mutex<Progress>,
    limit: usize,
    best: u32,
    score: &'a F,
}

/// Every match (score, file, entry) of the files, except names that cannot be among the best
/// `limit`; `best` is a score no name exceeds. `score` is called for names in any order.
pub fn scan<F>(files: &[Arc<Vec<Item>>], limit: usize, best: u32, score: &F) -> Vec<Scored>
where
    F: Fn(&Item, &mut Matcher, &mut Vec<char>) -> Option<u32> + Sync,
{
    let scan = Scan::new(files, limit, best, score);
    // A thread that panicked leaves chunks undone; `collect` scores them here.
    sessiontree_core::parallel::on_every_thread(|| scan.work());
    scan.collect()
}

/// The best `limit`, best first; ties in file, then entry order.
pub fn best_first(mut scored: Vec<Scored>, limit: usize) -> Vec<Scored> {
    let rank = |a: &Scored, b: &Scored| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2));
    if scored.len() > limit && limit > 0 {
        scored.select_nth_unstable_by(limit - 1, rank);
    }
    scored.truncate(limit);
    scored.sort_by(rank);
    scored
}

impl<'a, F> Scan<'a, F>
where
    F: Fn(&Item, &mut Matcher, &mut Vec<char>) -> Option<u32> + Sync,
{
    fn new(files: &'a [Arc<Vec<Item>>], limit: usize, best: u32, score: &'a F) -> Self {
        let chunks: Vec<Chunk> = files
            .iter()
            .enumerate()
            .flat_map(|(file, items)| {
                (0..items.len()).step_by(CHUNK).map(move |start| Chunk {
                    file,
                    range: start..(start + CHUNK).min(items.len()),
                })
            })
            .collect();
        Scan {
            files,
            progress: Mutex::new(Progress {
                done: (0..chunks.len()).map(|_| None).collect(),
                frontier: 0,
                best_in_frontier: 0,
            }),
            chunks,
            next: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            limit,
            best,
            score,
        }
    }

    fn score_chunk(&self, c: usize, matcher: &mut Matcher, buf: &mut Vec<char>) -> Vec<Scored> {
        let chunk = &self.chunks[c];
        let items = &self.files[chunk.file];
        chunk
            .range
            .clone()
            .filter_map(|i| Some(((self.score)(&items[i], matcher, buf)?, chunk.file, i)))
            .collect()
    }

    /// Takes chunks in order until none is left or the answer is known.
    fn work(&self) {
        let mut matcher = Matcher::new(Config::DEFAULT);
        let mut buf = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.chunks.len() {
                break;
            }
            let scored = self.score_chunk(c, &mut matcher, &mut buf);
            let Ok(mut progress) = self.progress.lock() else {
                break;
            };
            progress.done[c] = Some(scored);
            while let Some(Some(done)) = progress.done.get(progress.frontier) {
                let best = done.iter().filter(|s| s.0 >= self.best).count();
                progress.best_in_frontier += best;
                progress.frontier += 1;
            }
            if progress.best_in_frontier >= self.limit {
                self.stop.store(true, Ordering::Relaxed);
            }
        }
    }

    /// The scores of the chunks from the start up to where the answer is known, scoring any
    /// chunk left undone.
    fn collect(&self) -> Vec<Scored> {
        let done = match self.progress.lock() {
            Ok(mut progress) => std::mem::take(&mut progress.done),
            Err(poisoned) => std::mem::take(&mut poisoned.into_inner().done),
        };
        let (mut matcher, mut buf) = (Matcher::new(Config::DEFAULT), Vec::new());
        let (mut all, mut best) = (Vec::new(), 0);
        for (c, scored) in done.into_iter().enumerate() {
            if best >= self.limit {
                break;
            }
            let scored = match scored {
                Some(scored) => scored,
                None => self.score_chunk(c, &mut matcher, &mut buf),
            };
            best += scored.iter().filter(|s| s.0 >= self.best).count();
            all.extend(scored);
        }
        all
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::query::Query;
    use super::*;

    const WORDS: &[&str] = &[
        "writer",
        "client",
        "parse",
        "config",
        "wr",
        "iter",
        "cli",
        "ent",
        "Writer",
        "a",
        "e",
        "x",
        "café",
        "东京",
        "→",
        "(thinking)",
        "w-r",
        "ab",
    ];

    /// Files of names built from the words by a fixed pseudo-random sequence (several chunks,
    /// many names scoring the best, some ending in an ellipsis).
    pub(in crate::symbols) fn files() -> Vec<Arc<Vec<Item>>> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        [2500, 3 * CHUNK, 7, 0, 1800]
            .into_iter()
            .map(|len| {
                let items = (0..len)
                    .map(|_| {
                        let words: Vec<&str> = (0..1 + next(12))
                            .map(|_| WORDS[next(WORDS.len())])
                            .collect();
                        let mut name = format!("user: {}", words.join(" "));
                        if next(2) == 0 {
                            name.push('…');
                        }
                        Item::new(name, "id".into(), 1, 1)
                    })
                    .collect();
                Arc::new(items)
            })
            .collect()
    }

    #[test]
    fn stopping_early_keeps_the_answer_of_scoring_every_name() {
        let files = files();
        for query in [
            "writer client",
            "e",
            "",
            "  ",
            "wrtr",
            "!x ab",
            "zzz",
            "'cli",
            "东京",
            "iter$",
        ] {
            let parsed = Query::new(query);
            let score = |item: &Item, m: &mut Matcher, b: &mut Vec<char>| parsed.score(item, m, b);
            let mut matcher = Matcher::new(Config::DEFAULT);
            let mut buf = Vec::new();
            let every: Vec<Scored> = files
                .iter()
                .enumerate()
                .flat_map(|(f, items)| items.iter().enumerate().map(move |(i, item)| (f, i, item)))
                .filter_map(|(f, i, item)| Some((score(item, &mut matcher, &mut buf)?, f, i)))
                .collect();
            for limit in [0, 1, 200, 5000, 20_000] {
                let want = best_first(every.clone(), limit);
                let got = best_first(scan(&files, limit, parsed.best(), &score), limit);
                assert_eq!(got, want, "{query:?}, limit {limit}");
            }
        }
    }

    #[test]
    fn a_common_query_stops_after_the_chunk_where_the_answer_is_known() {
        let files = files();
        let parsed = Query::new("writer");
        let calls = AtomicUsize::new(0);
        let score = |item: &Item, m: &mut Matcher, b: &mut Vec<char>| {
            calls.fetch_add(1, Ordering::Relaxed);
            parsed.score(item, m, b)
        };
        let first = &files[0][..CHUNK];
        let best =
            |item: &Item| parsed.score(item, &mut Matcher::new(Config::DEFAULT), &mut Vec::new());
        let in_first = first
            .iter()
            .filter(|i| best(i) == Some(parsed.best()))
            .count();
        assert!(in_first >= 200, "{in_first}");
        // One thread, so the point where it stops does not depend on timing.
        let one = Scan::new(&files, 200, parsed.best(), &score);
        one.work();
        assert_eq!(calls.load(Ordering::Relaxed), CHUNK);
        assert_eq!(
            one.collect().len(),
            first.iter().filter(|i| best(i).is_some()).count()
        );
    }
}
