//! [`session_context`]: the context of a loaded [`Session`] at a leaf, without parsing the entries
//! whose content cannot change it. With a compaction on the path only the last one's kept range and
//! what follows are emitted, so of the entries before the kept range only the state-bearing ones are
//! parsed (and of the assistant messages there, only those whose provider/model can still win), and
//! [`build_context`](super::build_context) runs on that shorter path. The result equals `build_context` on the whole path
//! (checked for every fixture leaf and for generated sessions by `tests/context_fast.rs`); the rare
//! omp compactions whose replay looks further back (context rollover, provider payloads) take the
//! whole path.

use super::message_facts::{self, Probed};
use super::{build_context_owned, state, SessionContext};
use crate::dialect::Dialect;
use crate::entry::Entry;
use crate::facts::StateKind;
use crate::js;
use crate::session::{Session, Stash};
use serde_json::Value;
use std::sync::Arc;

const CONTEXT_NOTES_TYPE: &str = "experimental_context_notes";

/// `buildSessionContext()` at `leaf` (default: the session's leaf), as [`build_context`](super::build_context) on the
/// parsed path from the root to `leaf` would give it.
pub fn session_context(session: &Session, leaf: Option<&str>) -> SessionContext {
    let (at, entries): (Vec<usize>, Vec<&Entry>) = session
        .branch_path(leaf)
        .into_iter()
        .filter_map(|i| Some((i, session.entry_at(i)?)))
        .unzip();
    let kept_kinds = session.state_kinds();
    let kinds: Vec<StateKind> = at
        .iter()
        .zip(&entries)
        .map(|(&i, entry)| {
            kept_kinds
                .get(i)
                .copied()
                .unwrap_or_else(|| StateKind::of(entry.kind(), entry.role()))
        })
        .collect();
    let path = Path {
        entries: &entries,
        kinds: &kinds,
        at: &at,
        kept: session.context_stash(),
    };
    let (values, probed) = reduced_path(session.dialect(), &path).into_iter().unzip();
    build_context_owned(session.dialect(), values, probed)
}

/// The entries a context build reads, with their indices in the session.
struct Path<'a> {
    entries: &'a [&'a Entry],
    /// The entries' [`StateKind`]s.
    kinds: &'a [StateKind],
    at: &'a [usize],
    kept: &'a Stash,
}

/// An entry as the rules read it: its value (for a probed message, only its `type` and `id`) and
/// its probed message.
type Read = (Value, Option<Arc<Probed>>);

/// The entries the last context build read (the kept range and what follows it), as it read them,
/// with their indices in path order, kept in the session's [`Stash`]: an entry's text never
/// changes once written, so the next build (after an append, in another view) reads and probes
/// only the entries it has not seen. Up to [`KeptReads::BYTES`] of message text is kept.
#[derive(Debug, Default)]
struct KeptReads {
    at: Vec<usize>,
    reads: Vec<Option<Read>>,
}

impl KeptReads {
    /// The most message text kept between builds.
    const BYTES: usize = 16 << 20;

    /// The kept reads of the entries at `at`, by position. Both lists are runs of root-to-leaf
    /// paths, and two such paths that share an entry share everything above it: what they share
    /// is one run, starting at the first entry of one of them, and lasting while the two agree.
    fn reuse(mut self, at: &[usize]) -> Vec<Option<Read>> {
        let mut out: Vec<Option<Read>> = Vec::with_capacity(at.len());
        let starts = match at
            .first()
            .and_then(|&i| self.at.iter().position(|&j| j == i))
        {
            Some(old) => Some((0, old)),
            None => self
                .at
                .first()
                .and_then(|&j| at.iter().position(|&i| i == j))
                .map(|new| (new, 0)),
        };
        if let Some((new, old)) = starts {
            out.resize_with(new, || None);
            let kept = self.at[old..].iter().zip(&mut self.reads[old..]);
            for (&i, (&was, read)) in at[new..].iter().zip(kept) {
                if i != was {
                    break;
                }
                out.push(read.take());
            }
        }
        out.resize_with(at.len(), || None);
        out
    }
}

/// The path `build_context` needs: every entry from the kept range of the last compaction on, and
/// before it only the entries that set state. Every entry of a `branch_path` has a distinct string
/// id, which the id comparisons below rely on.
fn reduced_path(dialect: Dialect, whole_path: &Path<'_>) -> Vec<Read> {
    let path = whole_path.entries;
    let whole = || read_all(whole_path.entries, whole_path.at, whole_path.kept);
    let kinds = whole_path.kinds;
    let Some(c) = kinds.iter().rposition(|&k| k == StateKind::Compaction) else {
        return whole();
    };
    let compaction = path[c].json();
    if dialect == Dialect::Omp && looks_before_kept_range(&compaction) {
        return whole();
    }
    let first_kept = js::str_of(js::get(&compaction, "firstKeptEntryId"));
    // Ids on a path are distinct, so the last entry holding the id is the first one; it is
    // usually a little before the compaction.
    let k = first_kept
        .and_then(|id| path[..c].iter().rposition(|e| e.id() == Some(id)))
        .unwrap_or(c);
    let prefix = Prefix {
        entries: &path[..k],
        kinds: &kinds[..k],
    };
    let mut keep: Vec<(usize, Value)> = match dialect {
        Dialect::Pi => pi_prefix(prefix),
        Dialect::Omp => omp_prefix(prefix),
    };
    keep.sort_by_key(|(i, _)| *i);
    keep.into_iter()
        .map(|(_, v)| (v, None))
        .chain(read_all(&path[k..], &whole_path.at[k..], whole_path.kept))
        .collect()
}

/// [`read_fresh`] of the entries at `at`, taking those the last build read from `kept`, and
/// keeping this read there for the next one.
fn read_all(entries: &[&Entry], at: &[usize], kept: &Stash) -> Vec<Read> {
    let mut out = kept.take::<KeptReads>().unwrap_or_default().reuse(at);
    let missing: Vec<usize> = (0..out.len()).filter(|&k| out[k].is_none()).collect();
    if !missing.is_empty() {
        let picked: Vec<&Entry> = missing.iter().map(|&k| entries[k]).collect();
        for (k, read) in missing.into_iter().zip(read_fresh(&picked)) {
            out[k] = Some(read);
        }
    }
    let out: Vec<Read> = out
        .into_iter()
        .map(|read| read.unwrap_or((Value::Null, None)))
        .collect();
    let bytes: usize = out
        .iter()
        .filter_map(|(_, probed)| probed.as_ref())
        .map(|p| p.json.as_str().len())
        .sum();
    if bytes <= KeptReads::BYTES {
        // (An entry that could not be read is read again next time.)
        let reads = out
            .iter()
            .map(|(v, p)| (p.is_some() || !v.is_null()).then(|| (v.clone(), p.clone())))
            .collect();
        kept.put(KeptReads {
            at: at.to_vec(),
            reads,
        });
    }
    out
}

/// The entries as the rules read them: message entries whose message the probe can read kept as
/// `{type, id}` plus the probed message, the others parsed as [`Entry::json`] parses them (read
/// again, together, after the probe: they are few).
fn read_fresh(entries: &[&Entry]) -> Vec<Read> {
    let mut out: Vec<Read> = Vec::with_capacity(entries.len());
    super::text::for_each_text(entries, |k, text| {
        let entry = entries[k];
        let probed = match (entry.kind(), entry.id(), text) {
            ("message", Some(id), Some(text)) => {
                message_facts::message_entry(&text).map(|p| (id, p))
            }
            _ => None,
        };
        out.push(match probed {
            Some((id, p)) => {
                let mut stub = serde_json::Map::new();
                stub.insert("type".to_owned(), Value::from("message"));
                stub.insert("id".to_owned(), Value::from(id));
                (Value::Object(stub), Some(Arc::new(p)))
            }
            None => (Value::Null, None),
        });
    });
    let rest: Vec<usize> = (0..out.len()).filter(|&k| out[k].1.is_none()).collect();
    let picked: Vec<&Entry> = rest.iter().map(|&k| entries[k]).collect();
    for (k, value) in rest.into_iter().zip(crate::entry::json_of_all(&picked)) {
        out[k].0 = value;
    }
    out
}

/// omp compactions whose replay reads entries before the kept range: context rollover (the last
/// user request) and provider payloads (the remote replay boundary).
fn looks_before_kept_range(compaction: &Value) -> bool {
    let details = js::get(compaction, "details");
    let rollover = matches!(details, Some(Value::Object(_)))
        && details.and_then(|d| js::str_of(js::get(d, "kind")))
            == Some("experimental-context-rollover");
    rollover || js::get(compaction, "preserveData").is_some()
}

/// The path before the kept range, with its entries' kinds.
#[derive(Clone, Copy)]
struct Prefix<'a> {
    entries: &'a [&'a Entry],
    kinds: &'a [StateKind],
}

impl Prefix<'_> {
    fn last_of(self, kind: StateKind) -> Option<(usize, Value)> {
        let i = self.kinds.iter().rposition(|&k| k == kind)?;
        Some((i, self.entries[i].json()))
    }

    /// The assistant message at `i` when its provider/model can set the state.
    fn assistant_at(self, i: usize) -> Option<(usize, Value)> {
        if self.kinds[i] != StateKind::Assistant {
            return None;
        }
        let value = self.entries[i].json();
        state::assistant_of(&value).is_some().then_some((i, value))
    }
}

/// pi reads the last thinking change and the last model change or assistant message.
fn pi_prefix(prefix: Prefix<'_>) -> Vec<(usize, Value)> {
    let mut keep: Vec<(usize, Value)> = prefix
        .last_of(StateKind::ThinkingLevel)
        .into_iter()
        .collect();
    for i in (0..prefix.kinds.len()).rev() {
        match prefix.kinds[i] {
            StateKind::Model => {
                keep.push((i, prefix.entries[i].json()));
                break;
            }
            StateKind::Assistant => {
                if let Some(found) = prefix.assistant_at(i) {
                    keep.push(found);
                    break;
                }
            }
            _ => {}
        }
    }
    keep
}

/// omp reads the last thinking, service tier and mode changes, every model change and TTSR
/// injection, the `/clear` boundaries and context notes (for the notebook walk), and the assistant
/// messages' provider/model until the first explicit default-role model change: of each run of
/// assistant messages between model changes only the first (where `default` enters the models
/// object) and the last (the value that stays) can matter.
fn omp_prefix(prefix: Prefix<'_>) -> Vec<(usize, Value)> {
    let mut keep: Vec<(usize, Value)> = Vec::new();
    // The last thinking, service tier and mode changes, found in the same walk.
    let mut last_change: [Option<usize>; 3] = [None; 3];
    let mut explicit_default = None;
    let mut run_starts = vec![0];
    for (i, &kind) in prefix.kinds.iter().enumerate() {
        let entry = prefix.entries[i];
        match kind {
            StateKind::ThinkingLevel => last_change[0] = Some(i),
            StateKind::ServiceTier => last_change[1] = Some(i),
            StateKind::Mode => last_change[2] = Some(i),
            StateKind::Model => {
                let value = entry.json();
                if explicit_default.is_none() && state::omp_sets_explicit_default(&value) {
                    explicit_default = Some(i);
                }
                if explicit_default.is_none() {
                    run_starts.push(i + 1);
                }
                keep.push((i, value));
            }
            StateKind::Marker => keep.push((i, entry.json())),
            // A `customType` spelled with `\u` escapes does not show in the raw text; parse those too.
            StateKind::Custom => {
                let raw = entry.raw();
                if raw.contains(CONTEXT_NOTES_TYPE) || raw.contains("\\u") {
                    keep.push((i, entry.json()))
                }
            }
            _ => {}
        }
    }
    keep.extend(
        last_change
            .into_iter()
            .flatten()
            .map(|i| (i, prefix.entries[i].json())),
    );
    // Assistant messages after the first explicit default never set the model again.
    let end = explicit_default.unwrap_or(prefix.kinds.len());
    run_starts.push(end + 1);
    for pair in run_starts.windows(2) {
        let run = pair[0]..(pair[1] - 1).min(end);
        let first = run.clone().find_map(|i| prefix.assistant_at(i));
        let last = run.rev().find_map(|i| prefix.assistant_at(i));
        match (first, last) {
            (Some(a), Some(b)) if a.0 == b.0 => keep.push(a),
            (a, b) => keep.extend(a.into_iter().chain(b)),
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::OpenOptions;
    use crate::test_sessions::generated_session;
    use std::collections::HashMap;
    use std::path::Path;

    fn text(ctx: &SessionContext) -> String {
        format!("{} {:?}", ctx.to_fixture_json(), ctx.llm_texts())
    }

    /// A path meets the kept one in one run, whichever of the two starts first.
    #[test]
    fn kept_reads_are_found_by_position_along_the_path() {
        let kept = |at: &[usize]| KeptReads {
            at: at.to_vec(),
            reads: at.iter().map(|&i| Some((Value::from(i), None))).collect(),
        };
        let reused = |at: &[usize]| -> Vec<Option<u64>> {
            kept(&[5, 6, 7, 8, 9])
                .reuse(at)
                .into_iter()
                .map(|read| read.and_then(|(v, _)| v.as_u64()))
                .collect()
        };
        // Later on the same path, after an append.
        assert_eq!(reused(&[7, 8, 9, 10]), [Some(7), Some(8), Some(9), None]);
        // Starting earlier, then leaving the kept path at a branch.
        assert_eq!(
            reused(&[3, 4, 5, 6, 12]),
            [None, None, Some(5), Some(6), None]
        );
        assert_eq!(reused(&[5, 6, 20, 21]), [Some(5), Some(6), None, None]);
        assert_eq!(reused(&[30, 31]), [None, None]);
        assert_eq!(reused(&[]), Vec::<Option<u64>>::new());
    }

    /// A build after an append reads only the new entry (the rest comes from the last build) and
    /// gives what a session opened afresh gives; an entry read once is not read from the file
    /// again.
    #[test]
    fn a_build_after_an_append_reuses_the_entries_read_and_equals_a_fresh_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut session = generated_session(dir.path(), dialect, 1500, 3);
            let file = session.path().map(Path::to_path_buf);
            let file = file.unwrap_or_else(|| panic!("{dialect:?}: no file"));
            // Where each probed message's text lies in memory: a reused read keeps its place.
            let places = |kept: &Stash| {
                let read = kept.take::<KeptReads>().unwrap_or_default();
                let places: HashMap<usize, usize> = read
                    .at
                    .iter()
                    .zip(&read.reads)
                    .filter_map(|(&i, read)| {
                        let probed = read.as_ref()?.1.as_ref()?;
                        Some((i, probed.json.as_str().as_ptr() as usize))
                    })
                    .collect();
                kept.put(read);
                places
            };
            let first = text(&session_context(&session, None));
            let before = places(session.context_stash());
            assert!(
                before.len() > 10,
                "{dialect:?}: {} messages kept",
                before.len()
            );
            assert_eq!(text(&session_context(&session, None)), first, "{dialect:?}");
            let message = serde_json::json!({
                "role": "user",
                "content": "one more question",
                "timestamp": 1_767_225_600_000u64,
            });
            session
                .append_message(message)
                .unwrap_or_else(|e| panic!("{e}"));
            let after = text(&session_context(&session, None));
            let fresh = Session::open(&file, OpenOptions::with_dialect(dialect))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(after, text(&session_context(&fresh, None)), "{dialect:?}");
            assert_ne!(after, first, "{dialect:?}");
            let now = places(session.context_stash());
            assert_eq!(now.len(), before.len() + 1, "{dialect:?}");
            for (i, place) in &before {
                assert_eq!(
                    now.get(i),
                    Some(place),
                    "{dialect:?}: entry {i} was read again"
                );
            }
        }
    }
}
