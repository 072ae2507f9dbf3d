//! `workspace/symbol`: fuzzy search (nucleo-matcher, ranked) over every entry of the workspace's
//! sessions, files and the sessions of the configured stores alike ([`Searched`]). Each session's
//! entries are summarized once and cached until it changes (a file's modification time and length;
//! a store's session's `meta` time and length).

use crate::to_proto;
use dashmap::DashMap;
use sessiontree_core::parallel;
use sessiontree_core::view::TreeModel;
use sessiontree_core::Session;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use tower_lsp_server::ls_types as lsp;

mod item;
mod query;
mod scan;

use item::Item;
use query::Query;

/// A session `workspace/symbol` searches.
pub enum Searched {
    /// A session file.
    File(PathBuf),
    /// A session of a store.
    Store(StoreSession),
    /// A session open in the server (a file's or a store's).
    Open(OpenSession),
}

/// A session open in the server: named from the session and `/tree` model its owner already
/// holds, so it is never read (or held) a second time.
pub struct OpenSession {
    /// The key it is registered under (its file's path, or its URI).
    pub key: PathBuf,
    /// Its URI.
    pub uri: String,
    /// Runs a [`Visit`] where the session lives, waits for it and hands back its answer (`None`:
    /// the session is gone). Blocks.
    pub visit: Box<dyn Fn(Visit) -> Option<Visited> + Send + Sync>,
}

/// What runs where an open session lives, given the session, its [`Stamp`] and a way to its
/// `/tree` model for a home folder (the one its owner keeps, built only when asked for).
pub type Visit =
    Box<dyn FnOnce(&Session, Stamp, &dyn Fn(Option<&Path>) -> Arc<TreeModel>) -> Visited + Send>;

/// An open session's answer to a [`Visit`]: its stamp, and its name and items unless they are
/// the ones already indexed for that stamp.
pub struct Visited {
    stamp: Stamp,
    fresh: Option<(String, Vec<Item>)>,
}

/// A session of a store, as its listing showed it.
pub struct StoreSession {
    /// Its URI (the key it is cached under).
    pub uri: String,
    /// Its `meta` time and length when listed.
    pub stamp: Stamp,
    /// Opens it from the store.
    pub open: Box<dyn Fn() -> Option<Session> + Send + Sync>,
}

impl Searched {
    /// The key its entries are cached under: the file's path, or the URI.
    fn key(&self) -> &Path {
        match self {
            Searched::File(path) => path,
            Searched::Store(s) => Path::new(&s.uri),
            Searched::Open(s) => &s.key,
        }
    }

    /// Its state now, when it is read rather than visited (`None`: it cannot be looked at).
    fn stamp(&self) -> Option<Stamp> {
        match self {
            Searched::File(path) => stamp(path),
            Searched::Store(s) => Some(s.stamp),
            Searched::Open(_) => None,
        }
    }

    fn open(&self) -> Option<Session> {
        match self {
            // With its view facts: each entry is named by its `/tree` row text.
            Searched::File(path) => Session::open(path, Default::default()).ok(),
            Searched::Store(s) => (s.open)(),
            Searched::Open(_) => None,
        }
    }

    fn uri(&self) -> Option<lsp::Uri> {
        match self {
            Searched::File(path) => to_proto::lsp_uri(path),
            Searched::Store(s) => s.uri.parse().ok(),
            Searched::Open(s) => s.uri.parse().ok(),
        }
    }
}

/// The entries of one file, with the file state they were read at.
#[derive(Debug)]
struct Indexed {
    stamp: Stamp,
    container: String,
    items: Arc<Vec<Item>>,
}

/// Per-file cache of searchable entries, and the last answer.
#[derive(Debug, Default)]
pub struct SymbolIndex {
    files: DashMap<PathBuf, Indexed>,
    last: std::sync::Mutex<Option<LastAnswer>>,
}

/// An answer and what it was computed from: the same query over the same files, each at the same
/// indexed revision (the same `Arc` of items), has the same answer.
#[derive(Debug)]
struct LastAnswer {
    query: String,
    limit: usize,
    files: Vec<PathBuf>,
    items: Vec<Arc<Vec<Item>>>,
    answer: Vec<lsp::SymbolInformation>,
}

impl LastAnswer {
    fn answers(
        &self,
        query: &str,
        limit: usize,
        files: &[PathBuf],
        indexed: &[(lsp::Uri, String, Arc<Vec<Item>>)],
    ) -> bool {
        self.query == query
            && self.limit == limit
            && self.files == files
            && self.items.len() == indexed.len()
            && self
                .items
                .iter()
                .zip(indexed)
                .all(|(a, (_, _, b))| Arc::ptr_eq(a, b))
    }
}

/// Every match that may be among the best `limit`, with its score. When a quick look can tell
/// which names may score the best a name can, those alone are scored first: if `limit` of them
/// do, they are the answer (ties go in file order), and no other name needs nucleo.
fn best_scored(query: &Query, items: &[Arc<Vec<Item>>], limit: usize) -> Vec<scan::Scored> {
    let best = query.best();
    if query.sees_best() {
        let at_best = scan::scan(items, limit, best, &|item, matcher, buf| {
            if !query.may_score_best(item) {
                return None;
            }
            query.score(item, matcher, buf).filter(|&s| s >= best)
        });
        if at_best.len() >= limit {
            return at_best;
        }
    }
    scan::scan(items, limit, best, &|item, matcher, buf| {
        query.score(item, matcher, buf)
    })
}

/// Sessions with more entries than this are summarized in two halves at once (when a call may
/// use two threads, see `sessiontree_core::parallel`).
const SPLIT_FROM: usize = 20_000;

/// Files from this size on are summarized one at a time (see [`SymbolIndex::items_of_all`]).
const ALONE_FROM: u64 = 32 << 20;

/// The searchable entries of an open session, in file order, each named by its `/tree` row text
/// (`home` shortens tool-call paths to `~`, as the rows do; cut at
/// [`to_proto::SYMBOL_NAME_CHARS`]). One sequential read of the file (of
/// each half, when it has `split_from` entries or more) for the lines' widths; an unreadable body
/// ends its half's items there.
pub(crate) fn searchable_items(
    session: &Session,
    path: &Path,
    home: Option<&Path>,
    split_from: usize,
) -> Vec<Item> {
    items_named_by(session, &TreeModel::new(session, home), path, split_from)
}

/// [`searchable_items`] with the session's `/tree` model at hand.
fn items_named_by(
    session: &Session,
    model: &TreeModel,
    path: &Path,
    split_from: usize,
) -> Vec<Item> {
    model.prepare_entry_texts();
    let names = model.entry_texts(session);
    let entries = session.entries();
    let texts = session.raw_texts();
    let n = entries.len();
    // The first half's list takes the second's items too: room for all of them.
    let half = |range: std::ops::Range<usize>, room: usize| {
        let mut items: Vec<Item> = Vec::with_capacity(room);
        let read = texts.for_each_in(range, |i, raw| {
            let e = &entries[i];
            if let (true, Some(id)) = (e.line > 0, e.id()) {
                items.push(Item::new(
                    to_proto::symbol_name(&names.text(i), names.label(i)),
                    id.to_owned(),
                    e.line,
                    to_proto::u32_of(item::utf16_len(raw)),
                ));
            }
        });
        if let Err(err) = read {
            tracing::warn!("workspace symbols of {}: {err}", path.display());
        }
        items
    };
    if n < split_from.max(2) {
        return half(0..n, n);
    }
    let (mut first, second) = parallel::join(|| half(0..n / 2, n), || half(n / 2..n, n - n / 2));
    first.extend(second);
    first
}

/// What a session's items were read at: the same stamp, the same items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// A file's modification time and length, or a store's session's `meta` time and length.
    Stored(Option<SystemTime>, u64),
    /// An open session: which opening of it (its owner's, see [`OpenSession`]) and its revision.
    Open { opening: u64, revision: u64 },
}

impl Stamp {
    /// The length it was read at (an open session's counts as small: it is not read).
    fn len(&self) -> u64 {
        match self {
            Stamp::Stored(_, len) => *len,
            Stamp::Open { .. } => 0,
        }
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp::Stored(meta.modified().ok(), meta.len()))
}

/// The name a session is listed under: its own, else its file's (or key's) last part.
fn container_of(session: &Session, key: &Path) -> String {
    session
        .session_name()
        .map(str::to_owned)
        .unwrap_or_else(|| {
            key.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

impl SymbolIndex {
    /// The file's entries as summarized before, when the file has not changed since.
    fn cached(&self, path: &Path, now: &Stamp) -> Option<(String, Arc<Vec<Item>>)> {
        let hit = self.files.get(path)?;
        (hit.stamp == *now).then(|| (hit.container.clone(), Arc::clone(&hit.items)))
    }

    /// Reads and summarizes the session as it is at `now`.
    fn items(
        &self,
        target: &Searched,
        now: Stamp,
        home: Option<&Path>,
    ) -> (String, Arc<Vec<Item>>) {
        let path = target.key();
        let Some(session) = target.open() else {
            // Not a session: remember that too, so every query does not read it again.
            let empty = Arc::new(Vec::new());
            self.files.insert(
                path.to_path_buf(),
                Indexed {
                    stamp: now,
                    container: String::new(),
                    items: Arc::clone(&empty),
                },
            );
            return (String::new(), empty);
        };
        let items = searchable_items(&session, path, home, SPLIT_FROM);
        let container = container_of(&session, path);
        drop(session);
        self.keep(path, now, container, items)
    }

    /// Indexes `items` of the session at `key` as read at `stamp`.
    fn keep(
        &self,
        key: &Path,
        stamp: Stamp,
        container: String,
        items: Vec<Item>,
    ) -> (String, Arc<Vec<Item>>) {
        let items = Arc::new(items);
        self.files.insert(
            key.to_path_buf(),
            Indexed {
                stamp,
                container: container.clone(),
                items: Arc::clone(&items),
            },
        );
        (container, items)
    }

    /// An open session's items, named where it lives: only its stamp when the items indexed for
    /// that stamp are still kept (`None`: the session is gone).
    fn items_of_open(
        &self,
        open: &OpenSession,
        home: Option<&Path>,
    ) -> Option<(String, Arc<Vec<Item>>)> {
        let kept = self.files.get(&open.key).map(|hit| hit.stamp);
        let visit = |kept: Option<Stamp>| {
            let key = open.key.clone();
            let home = home.map(Path::to_path_buf);
            let job: Visit = Box::new(move |session, stamp, model| {
                let fresh = (kept != Some(stamp)).then(|| {
                    let model = model(home.as_deref());
                    let items = items_named_by(session, &model, &key, SPLIT_FROM);
                    (container_of(session, &key), items)
                });
                Visited { stamp, fresh }
            });
            (open.visit)(job)
        };
        let visited = visit(kept)?;
        if let Some((container, items)) = visited.fresh {
            return Some(self.keep(&open.key, visited.stamp, container, items));
        }
        match self.cached(&open.key, &visited.stamp) {
            Some(hit) => Some(hit),
            // Another query indexed it anew meanwhile: name it again.
            None => {
                let visited = visit(None)?;
                let (container, items) = visited.fresh?;
                Some(self.keep(&open.key, visited.stamp, container, items))
            }
        }
    }

    /// Each file's summarized entries, in order (`None`: the file cannot be looked at). Files
    /// that changed since they were summarized, or are new, are read again: from [`ALONE_FROM`]
    /// bytes one at a time (each is summarized on two threads already, and two at once would hold
    /// two sessions' memory), the others two at a time.
    fn items_of_all(
        &self,
        files: &[Searched],
        home: Option<&Path>,
    ) -> Vec<Option<(String, Arc<Vec<Item>>)>> {
        self.items_of_all_with(files, home, ALONE_FROM)
    }

    fn items_of_all_with(
        &self,
        files: &[Searched],
        home: Option<&Path>,
        alone_from: u64,
    ) -> Vec<Option<(String, Arc<Vec<Item>>)>> {
        let mut all: Vec<Option<(String, Arc<Vec<Item>>)>> = files.iter().map(|_| None).collect();
        let mut stale: Vec<(usize, Stamp)> = Vec::new();
        for (i, target) in files.iter().enumerate() {
            if let Searched::Open(open) = target {
                all[i] = self.items_of_open(open, home);
                continue;
            }
            let Some(now) = target.stamp() else { continue };
            match self.cached(target.key(), &now) {
                Some(hit) => all[i] = Some(hit),
                None => stale.push((i, now)),
            }
        }
        let (mut alone, mut shared): (Vec<_>, Vec<_>) = stale
            .into_iter()
            .partition(|(_, now)| now.len() >= alone_from);
        if shared.len() < 2 {
            alone.append(&mut shared);
        }
        for (i, now) in alone {
            all[i] = Some(self.items(&files[i], now, home));
        }
        if shared.is_empty() {
            return all;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let work = || {
            let mut done = Vec::new();
            loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(i, now)) = shared.get(k) else {
                    return done;
                };
                done.push((i, self.items(&files[i], now, home)));
            }
        };
        // Two at a time: the queue is shared, each side takes the next file.
        let (mut done, more) = parallel::join(work, work);
        done.extend(more);
        for (i, items) in done {
            all[i] = Some(items);
        }
        all
    }

    /// The best matches for `query` over the session files, best first, at most `limit`.
    #[cfg(test)]
    pub fn search(
        &self,
        files: &[PathBuf],
        query: &str,
        limit: usize,
    ) -> Vec<lsp::SymbolInformation> {
        let targets: Vec<Searched> = files.iter().cloned().map(Searched::File).collect();
        self.search_in(&targets, None, query, limit)
    }

    /// The best matches for `query` over the sessions, best first, at most `limit` (`home`
    /// shortens tool-call paths in the names to `~`, as the rows do).
    #[allow(deprecated)] // `SymbolInformation::deprecated` must still be filled in.
    pub fn search_in(
        &self,
        targets: &[Searched],
        home: Option<&Path>,
        query: &str,
        limit: usize,
    ) -> Vec<lsp::SymbolInformation> {
        let files: Vec<PathBuf> = targets.iter().map(|t| t.key().to_path_buf()).collect();
        let files = files.as_slice();
        let indexed: Vec<(lsp::Uri, String, Arc<Vec<Item>>)> = self
            .items_of_all(targets, home)
            .into_iter()
            .zip(targets)
            .filter_map(|(items, target)| {
                let uri = target.uri()?;
                let (container, items) = items?;
                Some((uri, container, items))
            })
            .collect();
        if let Ok(last) = self.last.lock() {
            if let Some(last) = last
                .as_ref()
                .filter(|l| l.answers(query, limit, files, &indexed))
            {
                return last.answer.clone();
            }
        }
        // Score (on the threads a call may use, stopping once the best `limit` are known), then build answers
        // for the best `limit` only.
        let parsed = Query::new(query);
        let items: Vec<Arc<Vec<Item>>> = indexed
            .iter()
            .map(|(_, _, items)| Arc::clone(items))
            .collect();
        let scored = best_scored(&parsed, &items, limit);
        let answer: Vec<lsp::SymbolInformation> = scan::best_first(scored, limit)
            .into_iter()
            .map(|(_, f, i)| {
                let (uri, container, items) = &indexed[f];
                let item = &items[i];
                let l = to_proto::u32_of(item.line - 1);
                lsp::SymbolInformation {
                    name: item.name.clone(),
                    kind: lsp::SymbolKind::EVENT,
                    tags: None,
                    deprecated: None,
                    location: lsp::Location::new(
                        uri.clone(),
                        lsp::Range::new(
                            lsp::Position::new(l, 0),
                            lsp::Position::new(l, item.width),
                        ),
                    ),
                    container_name: Some(format!("{container} · {}", item.id)),
                }
            })
            .collect();
        if let Ok(mut last) = self.last.lock() {
            *last = Some(LastAnswer {
                query: query.to_owned(),
                limit,
                files: files.to_vec(),
                items,
                answer: answer.clone(),
            });
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::item::tests::NAMES;
    use super::*;
    use nucleo_matcher::{Config, Matcher};

    #[test]
    fn looking_at_names_that_may_score_best_first_keeps_the_answer() {
        let files = scan::tests::files();
        let (mut matcher, mut buf) = (Matcher::new(Config::DEFAULT), Vec::new());
        let mut answered_from_best = 0;
        for query in [
            "writer client",
            "writer",
            "e",
            "x",
            "wrtr",
            "ab",
            "cli ent",
            "iter",
            "",
            "!x writer",
            "Writer parse",
            "'client",
            "café",
        ] {
            let parsed = Query::new(query);
            let mut every = Vec::new();
            for (f, items) in files.iter().enumerate() {
                for (i, item) in items.iter().enumerate() {
                    if let Some(score) = parsed.score(item, &mut matcher, &mut buf) {
                        every.push((score, f, i));
                    }
                }
            }
            for limit in [0, 1, 50, 200, 20_000] {
                let got = scan::best_first(best_scored(&parsed, &files, limit), limit);
                assert_eq!(
                    got,
                    scan::best_first(every.clone(), limit),
                    "{query:?} {limit}"
                );
                answered_from_best += usize::from(
                    limit > 0 && parsed.sees_best() && got.iter().all(|s| s.0 == parsed.best()),
                );
            }
        }
        assert!(answered_from_best > 5, "{answered_from_best}");
    }

    #[test]
    fn a_repeated_query_over_unchanged_files_gets_the_same_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned(),
        ];
        let mut parent = "null".to_owned();
        for (i, name) in NAMES.iter().enumerate() {
            lines.push(format!(
                r#"{{"type":"message","id":"e{i}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":{}}}}}"#,
                serde_json::to_string(name).unwrap()
            ));
            parent = format!("\"e{i}\"");
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let files = vec![path.clone()];
        let index = SymbolIndex::default();
        let first = index.search(&files, "parse config", 200);
        assert!(!first.is_empty());
        assert_eq!(index.search(&files, "parse config", 200), first);
        let fresh = SymbolIndex::default().search(&files, "parse config", 200);
        assert_eq!(fresh, first);
        // A changed file is read again.
        let mut more = lines.join("\n") + "\n";
        more.push_str(&format!(
            r#"{{"type":"message","id":"z","parentId":{parent},"timestamp":"2025-01-01T00:00:02.000Z","message":{{"role":"user","content":"parse config again"}}}}"#
        ));
        more.push('\n');
        std::fs::write(&path, more).unwrap();
        let after = index.search(&files, "parse config", 200);
        assert_eq!(after.len(), first.len() + 1);
        assert_eq!(
            after,
            SymbolIndex::default().search(&files, "parse config", 200)
        );
    }

    #[test]
    fn a_large_session_summarized_in_halves_gives_the_items_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        for dialect in [
            sessiontree_core::Dialect::Pi,
            sessiontree_core::Dialect::Omp,
        ] {
            let session = crate::test_sessions::generated(dir.path(), dialect, 700, 3);
            let path = session.path().unwrap().to_path_buf();
            let seen = |items: Vec<Item>| -> Vec<(String, String, usize, u32)> {
                items
                    .into_iter()
                    .map(|i| (i.name, i.id, i.line, i.width))
                    .collect()
            };
            let whole = seen(searchable_items(&session, &path, None, usize::MAX));
            assert!(whole.len() > 600);
            for split_from in [2, 700] {
                assert_eq!(
                    seen(searchable_items(&session, &path, None, split_from)),
                    whole
                );
            }
        }
    }

    /// An open session is named from the session and model its owner holds: never read from
    /// its file (here gone), and named again only when its stamp changed.
    #[test]
    fn an_open_session_is_named_where_it_lives_and_again_only_after_a_change() {
        use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let session =
            crate::test_sessions::generated(dir.path(), sessiontree_core::Dialect::Pi, 60, 5);
        let path = session.path().unwrap().to_path_buf();
        let want: Vec<(String, String)> = searchable_items(&session, &path, None, usize::MAX)
            .into_iter()
            .map(|i| (i.name, i.id))
            .collect();
        assert!(want.len() > 40);
        std::fs::remove_file(&path).unwrap();
        let revision = Arc::new(AtomicU64::new(1));
        let models = Arc::new(AtomicUsize::new(0));
        let owner = Arc::new(std::sync::Mutex::new(session));
        let open = || {
            let (revision, models, owner) = (
                Arc::clone(&revision),
                Arc::clone(&models),
                Arc::clone(&owner),
            );
            Searched::Open(OpenSession {
                key: path.clone(),
                uri: to_proto::lsp_uri(&path).unwrap().to_string(),
                visit: Box::new(move |visit| {
                    let session = owner.lock().unwrap();
                    let stamp = Stamp::Open {
                        opening: 7,
                        revision: revision.load(Ordering::SeqCst),
                    };
                    let model = |home: Option<&Path>| {
                        models.fetch_add(1, Ordering::SeqCst);
                        Arc::new(TreeModel::new(&session, home))
                    };
                    Some(visit(&session, stamp, &model))
                }),
            })
        };
        let index = SymbolIndex::default();
        let names = |found: Vec<lsp::SymbolInformation>| -> Vec<String> {
            found.into_iter().map(|s| s.name).collect()
        };
        let found = names(index.search_in(&[open()], None, "", 20_000));
        let mut want_names: Vec<String> = want.iter().map(|(n, _)| n.clone()).collect();
        let mut got = found.clone();
        want_names.sort();
        got.sort();
        assert_eq!(got, want_names);
        assert_eq!(models.load(Ordering::SeqCst), 1);
        // The same revision: the kept items, no model built.
        let again = index.search_in(&[open()], None, "user", 200);
        assert_eq!(models.load(Ordering::SeqCst), 1);
        assert!(!again.is_empty());
        // A new revision is named again.
        revision.store(2, Ordering::SeqCst);
        index.search_in(&[open()], None, "user", 200);
        assert_eq!(models.load(Ordering::SeqCst), 2);
        // Gone: nothing, and no panic.
        let gone = Searched::Open(OpenSession {
            key: path.clone(),
            uri: to_proto::lsp_uri(&path).unwrap().to_string(),
            visit: Box::new(|_| None),
        });
        assert!(index.search_in(&[gone], None, "user", 200).is_empty());
    }

    /// Files summarized two at a time still rank in file order: the same name in every file
    /// comes back file by file.
    #[test]
    fn files_summarized_in_parallel_keep_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..7)
            .map(|f| {
                let path = dir.path().join(format!("s{f}.jsonl"));
                let lines = [
                    format!(r#"{{"type":"session","version":3,"id":"s{f}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}}"#),
                    format!(r#"{{"type":"message","id":"f{f}","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"parse the config file{}"}}}}"#, " ".repeat(f * 100)),
                ];
                std::fs::write(&path, lines.join("\n") + "\n").unwrap();
                path
            })
            .collect();
        for alone_from in [u64::MAX, 0, 600] {
            let index = SymbolIndex::default();
            let targets: Vec<Searched> = files.iter().cloned().map(Searched::File).collect();
            let items = index.items_of_all_with(&targets, None, alone_from);
            let containers: Vec<String> = items.into_iter().map(|i| i.unwrap().0).collect();
            let names: Vec<String> = (0..7).map(|f| format!("s{f}.jsonl")).collect();
            assert_eq!(containers, names);
        }
        for _ in 0..5 {
            let found = SymbolIndex::default().search(&files, "parse config", 200);
            let order: Vec<String> = found.iter().map(|s| s.location.uri.to_string()).collect();
            let want: Vec<String> = files
                .iter()
                .map(|p| to_proto::lsp_uri(p).unwrap().to_string())
                .collect();
            assert_eq!(order, want);
            for symbol in &found {
                let file = symbol
                    .location
                    .uri
                    .path()
                    .as_str()
                    .rsplit('/')
                    .next()
                    .unwrap();
                let n = file.trim_start_matches('s').trim_end_matches(".jsonl");
                let want = format!("{file} · f{n}");
                assert_eq!(symbol.container_name.as_deref(), Some(want.as_str()));
            }
        }
    }
}
