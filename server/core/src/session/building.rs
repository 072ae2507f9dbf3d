//! A session built from a file's parts while the rest of the file is read.
//!
//! The reader hands the parts over in file order ([`crate::reader::read_file_in_parts`]); each is
//! indexed as it comes, on the reading thread that finished it, so indexing 100k entries overlaps
//! the reading instead of following it. A first part that does not start with a session header of
//! the current format version (no header, a legacy version that needs migrating) is not indexed
//! part by part: the parts are gathered and the session is made from the whole, as
//! [`Session::from_outcome`] always did, with the same errors and diagnostics.

use super::{OpenOptions, Session};
use crate::diagnostics::Diagnostic;
use crate::dialect::{Dialect, OMP_ONLY_TYPES};
use crate::entry::Entry;
use crate::error::Result;
use crate::reader::ReadOutcome;
use serde_json::Value;
use std::path::PathBuf;

/// Where the build stands.
pub(super) struct Building {
    path: PathBuf,
    /// The dialect the reader made view facts for.
    facts_dialect: Dialect,
    state: State,
}

enum State {
    /// No part yet.
    Start(OpenOptions),
    /// Each part is indexed as it comes.
    Indexing(Box<Indexing>),
    /// The parts are gathered, to be made into a session as a whole.
    Gathering(OpenOptions, ReadOutcome),
    /// Only while a part is taken.
    Taking,
}

struct Indexing {
    session: Session,
    /// Whether the dialect was given (else it was taken from the title slot, and an omp-only
    /// entry type later in the file makes it omp).
    forced: bool,
    omp_types_seen: bool,
    /// The reader's diagnostics, which come before the index's (as when the whole was indexed).
    read_diagnostics: Vec<Diagnostic>,
    consumed: u64,
    lines: usize,
    pending: u64,
}

impl Building {
    pub fn new(path: PathBuf, options: OpenOptions, facts_dialect: Dialect) -> Building {
        Building {
            path,
            facts_dialect,
            state: State::Start(options),
        }
    }

    /// The next part of the file.
    pub fn take(&mut self, part: ReadOutcome) {
        self.state = match std::mem::replace(&mut self.state, State::Taking) {
            State::Start(options) => Indexing::start(options, part),
            State::Indexing(mut indexing) => {
                indexing.take(part);
                State::Indexing(indexing)
            }
            State::Gathering(options, mut whole) => {
                whole.append(part);
                State::Gathering(options, whole)
            }
            State::Taking => State::Taking,
        };
    }

    /// The session, once every part was taken.
    pub fn finish(self, identity: Option<super::persist::FileIdentity>) -> Result<Session> {
        match self.state {
            State::Indexing(indexing) => Ok(indexing.finish(self.path, identity)),
            State::Gathering(options, whole) => {
                Session::from_outcome(self.path, whole, identity, options, self.facts_dialect)
            }
            State::Start(options) => Session::from_outcome(
                self.path,
                ReadOutcome::default(),
                identity,
                options,
                self.facts_dialect,
            ),
            // Only when taking a part panicked (the reading thread reports it first).
            State::Taking => Err(crate::error::Error::io(
                "cannot read",
                &self.path,
                std::io::Error::other("the file was not read whole"),
            )),
        }
    }
}

fn has_omp_types(entries: &[Entry]) -> bool {
    entries.iter().any(|e| OMP_ONLY_TYPES.contains(&e.kind()))
}

impl Indexing {
    /// Starts indexing on the first part when it opens with a session header of version 3 or
    /// later; otherwise starts gathering.
    fn start(options: OpenOptions, mut part: ReadOutcome) -> State {
        let header = match part.values.first() {
            Some(first) if first.kind() == "session" => match first.json() {
                Value::Object(map)
                    if map.get("id").is_some_and(Value::is_string)
                        && super::header::file_version(&map) >= 3 =>
                {
                    map
                }
                _ => return State::Gathering(options, part),
            },
            _ => return State::Gathering(options, part),
        };
        part.values.remove(0);
        let forced = options.dialect.is_some();
        let dialect = options.dialect.unwrap_or(match part.title_slot {
            Some(_) => Dialect::Omp,
            None => Dialect::Pi,
        });
        // The first part's list was sized for the whole file's entries.
        let planned = part.values.capacity();
        let mut session = Session::begin(dialect, header, part.title_slot, options, planned);
        let omp_types_seen = has_omp_types(&part.values);
        session.index_read(part.values);
        State::Indexing(Box::new(Indexing {
            session,
            forced,
            omp_types_seen,
            read_diagnostics: part.diagnostics,
            consumed: part.consumed,
            lines: part.lines,
            pending: part.pending,
        }))
    }

    fn take(&mut self, part: ReadOutcome) {
        self.omp_types_seen |= has_omp_types(&part.values);
        self.read_diagnostics.extend(part.diagnostics);
        self.session.index_read(part.values);
        self.consumed += part.consumed;
        self.lines += part.lines;
        self.pending = part.pending;
    }

    fn finish(self, path: PathBuf, identity: Option<super::persist::FileIdentity>) -> Session {
        let mut session = self.session;
        if !self.forced && self.omp_types_seen && session.dialect == Dialect::Pi {
            // The view facts were made for pi: they are made again, for omp, on first use.
            session.switch_dialect(Dialect::Omp);
        }
        let index_diagnostics = std::mem::replace(&mut session.diagnostics, self.read_diagnostics);
        session.diagnostics.extend(index_diagnostics);
        session.finish_load(path, identity, self.consumed, self.lines, self.pending);
        session
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::BodySource;
    use crate::reader::read_file;
    use crate::view::{compute_rows, FilterMode, ViewState};
    use std::path::Path;

    /// The session as opening made it before parts were indexed as they came: the whole file
    /// read, then made into a session at once.
    fn open_whole(path: &Path, options: OpenOptions) -> Result<Session> {
        let file = std::fs::File::open(path).unwrap();
        let identity = super::super::persist::FileIdentity::of(&file);
        let size = file.metadata().unwrap().len();
        let source = BodySource::new(file, path);
        let guess = options.dialect.unwrap_or(
            if super::super::header::starts_with_title_slot(&source, size) {
                Dialect::Omp
            } else {
                Dialect::Pi
            },
        );
        let outcome = read_file(&source, size, Some(guess)).unwrap();
        let mut session =
            Session::from_outcome(path.to_path_buf(), outcome, identity, options, guess)?;
        session.source = Some(source);
        Ok(session)
    }

    /// Everything a client can see of a session.
    fn seen(session: &Session) -> Value {
        let parents: Vec<Option<usize>> = (0..session.entries().len())
            .map(|i| session.parent_index(i))
            .collect();
        let labels: Vec<(String, String)> = session
            .labels()
            .map(|(id, l)| (id.to_owned(), l.label.clone()))
            .collect();
        let mut views = Vec::new();
        for filter in FilterMode::ALL {
            for search in ["", "cache entry"] {
                let state = ViewState {
                    filter,
                    search: search.to_owned(),
                    ..ViewState::default()
                };
                views.push(serde_json::to_value(compute_rows(session, &state, None)).unwrap());
            }
        }
        serde_json::json!({
            "dialect": format!("{:?}", session.dialect()),
            "header": session.header(),
            "name": session.session_name(),
            "leaf": session.leaf_id(),
            "diagnostics": serde_json::to_value(session.diagnostics()).unwrap(),
            "entries": session.entries().iter().map(|e| (e.line, e.raw().into_owned())).collect::<Vec<_>>(),
            "ids": session.entries().iter().map(|e| e.id().map(|id| session.index_of(id))).collect::<Vec<_>>(),
            "parents": parents,
            "labels": labels,
            "file": format!("{:?}", session.file),
            "snapshot": crate::snapshot::snapshot(session),
            "views": views,
        })
    }

    /// A generated session of several megabytes (read in parts), its lines changed by `edit`.
    fn large_file(dir: &Path, dialect: Dialect, edit: impl FnOnce(&mut Vec<String>)) -> PathBuf {
        let path = dir.join(format!("{dialect:?}.jsonl"));
        let options = crate::synth::SynthOptions {
            dialect,
            entries: 3_000,
            seed: 7,
        };
        crate::synth::generate_file(options, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        edit(&mut lines);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        assert!(
            std::fs::metadata(&path).unwrap().len() > 6 << 20,
            "read in several parts"
        );
        path
    }

    fn id_of(line: &str) -> String {
        let value: Value = serde_json::from_str(line).unwrap();
        value["id"].as_str().unwrap().to_owned()
    }

    /// Duplicate ids, an entry whose parent comes later, a second header, lines that are not
    /// JSON and a label on no entry, spread over the file's parts.
    fn awkward(lines: &mut Vec<String>) {
        let n = lines.len();
        let first = lines
            .iter()
            .position(|l| l.contains("\"type\":\"message\""))
            .unwrap();
        let early_id = id_of(&lines[first + 1]);
        let late_id = id_of(&lines[n - 10]);
        lines.insert(n - 5, lines[first + 1].clone());
        lines.insert(n / 2, format!(
            r#"{{"type":"message","id":"orphan01","parentId":"{late_id}","timestamp":"2025-01-01T00:00:00.000Z","message":{{"role":"user","content":"cache entry before its parent"}}}}"#
        ));
        lines.insert(n / 3, r#"{"type":"session","version":3,"id":"second","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned());
        lines.insert(n / 4, "not json at all".to_owned());
        lines.insert(2 * n / 3, r#"{"type":"label","id":"lab00001","parentId":null,"targetId":"nowhere","label":"x","timestamp":"2025-01-01T00:00:00.000Z"}"#.to_owned());
        lines.insert(3 * n / 4, format!(
            r#"{{"type":"label","id":"lab00002","parentId":null,"targetId":"{early_id}","label":"cache entry","timestamp":"2025-01-01T00:00:00.000Z"}}"#
        ));
    }

    fn assert_same_as_whole(path: &Path, dialect: Option<Dialect>) {
        let options = || OpenOptions {
            dialect,
            ..OpenOptions::default()
        };
        let parts = Session::open(path, options());
        let whole = open_whole(path, options());
        match (parts, whole) {
            (Ok(parts), Ok(whole)) => assert!(seen(&parts) == seen(&whole), "{}", path.display()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{:?} / {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }

    #[test]
    fn a_file_indexed_part_by_part_is_the_file_indexed_whole() {
        let dir = tempfile::tempdir().unwrap();
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let path = large_file(dir.path(), dialect, awkward);
            assert_same_as_whole(&path, None);
            assert_same_as_whole(&path, Some(Dialect::Pi));
            assert_same_as_whole(&path, Some(Dialect::Omp));
        }
    }

    /// pi's file shape with an omp-only entry type far into the file is omp's.
    #[test]
    fn an_omp_entry_type_in_a_later_part_makes_the_file_omp() {
        let dir = tempfile::tempdir().unwrap();
        let path = large_file(dir.path(), Dialect::Pi, |lines| {
            let n = lines.len();
            let parent = id_of(&lines[n - 3]);
            let child = lines.remove(n - 2);
            let mode = format!(
                r#"{{"type":"mode_change","id":"mode0001","parentId":"{parent}","timestamp":"2025-01-01T00:00:00.000Z","mode":"plan"}}"#
            );
            let child = child.replace(
                &format!("\"parentId\":\"{parent}\""),
                "\"parentId\":\"mode0001\"",
            );
            lines.insert(n - 2, child);
            lines.insert(n - 2, mode);
        });
        let session = Session::open(&path, OpenOptions::default()).unwrap();
        assert_eq!(session.dialect(), Dialect::Omp);
        assert_same_as_whole(&path, None);
        assert_same_as_whole(&path, Some(Dialect::Pi));
    }

    /// A legacy header, or no header in the first part, leaves the parts to be made into a
    /// session whole: migrated, or refused with the same words.
    #[test]
    fn files_not_indexed_part_by_part_open_as_before() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = large_file(dir.path(), Dialect::Pi, |lines| {
            lines[0] = lines[0].replace("\"version\":3", "\"version\":2");
        });
        let session = Session::open(&legacy, OpenOptions::default()).unwrap();
        assert!(session
            .diagnostics()
            .iter()
            .any(|d| d.kind == crate::diagnostics::DiagnosticKind::LegacyVersion));
        assert_same_as_whole(&legacy, None);
        let headless = large_file(dir.path(), Dialect::Pi, |lines| {
            let header = lines.remove(0);
            let junk = "x".repeat(1000);
            for _ in 0..1000 {
                lines.insert(0, junk.clone());
            }
            lines.insert(1000, header);
        });
        assert_same_as_whole(&headless, None);
        let no_header = large_file(dir.path(), Dialect::Pi, |lines| {
            lines.remove(0);
        });
        let error = Session::open(&no_header, OpenOptions::default()).unwrap_err();
        assert!(
            error.to_string().contains("should be a session header"),
            "{error}"
        );
        assert_same_as_whole(&no_header, None);
    }
}
