//! What a listing shows of a store's sessions, read without taking their values whole.
//!
//! A session's summary (`sessiontree_core::listing`: dialect, name, first user message, entry
//! count, fork source) is what the file of the same bytes gives, and some of it (the entry
//! count, pi's last name, an omp-only entry anywhere) needs every line, as it does for a file.
//! So a store's session is summarized once and kept: the next listings read only what omp's own
//! listing reads (`SCAN`, `STRLEN`, the `meta` and `title` hashes) and summarize again only a
//! session whose length, `meta` time or title changed. A session summarized is read as the
//! engine opens a store's session, never whole into one buffer: the heads of all of them (the
//! title slot, the header and, for most sessions, everything) in one pipeline, and the rest of a
//! longer value scanned by byte range with only the first user message's body read back.

use sessiontree_core::listing::{self as summary, Listing};
use sessiontree_core::title_slot::TitleSlot;
use sessiontree_redis::{listing, Link, RedisStore};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Bytes of each session read in the listing's one pipeline (a session no longer than this is
/// summarized from them alone).
const HEAD: u64 = 16 << 10;

/// What a summary was made from: when any of it changes, the session is summarized again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ms: Option<i64>,
    title: Option<TitleSlot>,
}

impl Stamp {
    fn of(listed: &listing::Listed) -> Stamp {
        Stamp {
            size: listed.size,
            mtime_ms: listed.mtime_ms,
            title: listed.title.clone(),
        }
    }
}

/// The summaries of one store's sessions, by path.
#[derive(Debug, Default)]
pub struct Summaries {
    kept: Mutex<HashMap<PathBuf, (Stamp, Option<Listing>)>>,
}

impl Summaries {
    /// The summary of each of `listed` (`None`: not a session, or gone), in order, summarizing
    /// those not kept for their current stamp; `all` is the store's whole listing (summaries of
    /// sessions no longer in it are dropped). Blocks.
    pub fn of(
        &self,
        link: &Arc<Link>,
        listed: &[&listing::Listed],
        all: &[listing::Listed],
    ) -> std::io::Result<Vec<Option<Listing>>> {
        let kept = |path: &PathBuf, stamp: &Stamp| {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.get(path)
                .filter(|(s, _)| s == stamp)
                .map(|(_, l)| l.clone())
        };
        let mut out: Vec<Option<Option<Listing>>> = listed
            .iter()
            .map(|l| kept(&l.path, &Stamp::of(l)))
            .collect();
        let missing: Vec<usize> = (0..listed.len()).filter(|&i| out[i].is_none()).collect();
        if !missing.is_empty() {
            let paths: Vec<PathBuf> = missing.iter().map(|&i| listed[i].path.clone()).collect();
            let heads = listing::heads(link, &paths, HEAD)?;
            let mut kept = Vec::with_capacity(missing.len());
            for (&i, head) in missing.iter().zip(heads) {
                let item = listed[i];
                let made = head.and_then(|(size, head)| {
                    let store = Arc::new(RedisStore::new(Arc::clone(link), &item.path));
                    summary::from_store(store, size, head, 0)
                });
                kept.push((item.path.clone(), Stamp::of(item), made.clone()));
                out[i] = Some(made);
            }
            let mut map = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            for (path, stamp, made) in kept {
                map.insert(path, (stamp, made));
            }
        }
        {
            let mut map = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            let present: std::collections::HashSet<&PathBuf> =
                all.iter().map(|l| &l.path).collect();
            map.retain(|path, _| present.contains(path));
        }
        Ok(out.into_iter().map(Option::flatten).collect())
    }
}
