//! Opening a session file, creating a new session, and following a file that another process
//! appends to.

use super::building::Building;
use super::header::{file_version, fold_slot_into_header, starts_with_title_slot};
use super::{FileState, Session, SyncPolicy};
use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::dialect::{Dialect, OMP_ONLY_TYPES};
use crate::entry::BodySource;
use crate::error::{Error, Result};
use crate::ids::{IdSource, RandomIds};
use crate::reader::{read_file_in_parts, read_lines, ReadOptions, ReadOutcome};
use crate::time::{Clock, SystemClock};
use crate::title_slot::TitleSlot;
use serde_json::{Map, Value};
use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How to open or create a session.
pub struct OpenOptions {
    /// Force a dialect instead of detecting it (title slot or omp-only entries → omp, else pi).
    pub dialect: Option<Dialect>,
    /// The clock for new entries.
    pub clock: Arc<dyn Clock>,
    /// Where new ids come from.
    pub ids: Box<dyn IdSource>,
    /// When appended data must reach the disk.
    pub sync: SyncPolicy,
    /// Compute the `/tree` view's facts of every entry while the file is read (default). Off for
    /// readers that never show the tree (indexes, checks); the view then computes them on first use.
    pub view_facts: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            dialect: None,
            clock: Arc::new(SystemClock),
            ids: Box::new(RandomIds),
            sync: SyncPolicy::default(),
            view_facts: true,
        }
    }
}

impl OpenOptions {
    /// Options with a forced dialect.
    pub fn with_dialect(dialect: Dialect) -> Self {
        OpenOptions {
            dialect: Some(dialect),
            ..Self::default()
        }
    }
}

/// What following the file found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FollowOutcome {
    /// Indices of the entries that arrived.
    pub new_entries: Vec<usize>,
    /// Whether the file ends with an incomplete line still being written.
    pub pending: bool,
}

impl Session {
    /// Opens a session file (`SessionManager.open`), without modifying it.
    pub fn open(path: impl AsRef<Path>, options: OpenOptions) -> Result<Session> {
        let path = path.as_ref();
        // A device, FIFO or folder is never a session: opening a FIFO or reading `/dev/zero`
        // would not end. Checked before opening (opening a FIFO blocks) and again after.
        let not_regular = |meta: std::fs::Metadata| !meta.is_file();
        if std::fs::metadata(path).is_ok_and(not_regular) {
            return Err(Error::InvalidHeader {
                path: path.to_path_buf(),
                detail: "it is not a regular file".to_owned(),
            });
        }
        let file = File::open(path).map_err(|e| Error::io("cannot read", path, e))?;
        if file.metadata().is_ok_and(not_regular) {
            return Err(Error::InvalidHeader {
                path: path.to_path_buf(),
                detail: "it is not a regular file".to_owned(),
            });
        }
        let identity = super::persist::FileIdentity::of(&file);
        let size = file
            .metadata()
            .map_err(|e| Error::io("cannot read", path, e))?
            .len();
        let source = BodySource::new(file, path);
        // The view's facts are computed while each line is at hand, for the dialect the file
        // most likely has (a title slot says omp); a wrong guess is corrected below.
        let guess = match options.dialect {
            Some(dialect) => dialect,
            None if starts_with_title_slot(&source, size) => Dialect::Omp,
            None => Dialect::Pi,
        };
        let facts = options.view_facts.then_some(guess);
        let mut building = Building::new(path.to_path_buf(), options, guess);
        read_file_in_parts(&source, size, facts, |part| building.take(part))
            .map_err(|e| Error::io("cannot read", path, e))?;
        let mut session = building.finish(identity)?;
        session.source = Some(source);
        Ok(session)
    }

    pub(super) fn from_outcome(
        path: PathBuf,
        outcome: ReadOutcome,
        identity: Option<super::persist::FileIdentity>,
        options: OpenOptions,
        facts_dialect: Dialect,
    ) -> Result<Session> {
        let ReadOutcome {
            title_slot,
            values,
            diagnostics,
            consumed,
            lines,
            pending,
        } = outcome;
        let mut values = values;
        // The header leaves the list; the rest moves into the session without a copy.
        let header_entry = (!values.is_empty()).then(|| values.remove(0));
        let header = match header_entry.as_ref().map(|h| (h, h.json())) {
            Some((h, Value::Object(map)))
                if h.kind() == "session" && map.get("id").is_some_and(Value::is_string) =>
            {
                map
            }
            Some((h, _)) => {
                return Err(Error::InvalidHeader {
                    path,
                    detail: format!(
                        "line {} should be a session header (`{{\"type\":\"session\",\"id\":…}}`) but is {}",
                        h.line,
                        describe(h)
                    ),
                })
            }
            None if diagnostics.is_empty() && title_slot.is_none() => {
                return Err(Error::InvalidHeader { path, detail: "the file is empty".to_owned() })
            }
            None => {
                return Err(Error::InvalidHeader { path, detail: "no line parses as a session header".to_owned() })
            }
        };
        let rest = values;
        let dialect = options.dialect.unwrap_or_else(|| {
            if title_slot.is_some() || rest.iter().any(|e| OMP_ONLY_TYPES.contains(&e.kind())) {
                Dialect::Omp
            } else {
                Dialect::Pi
            }
        });
        let file_version = file_version(&header);
        let mut session = Session::begin(dialect, header, title_slot, options, rest.len());
        session.diagnostics = diagnostics;
        let mut rest = if file_version < 3 {
            session.diagnostics.push(Diagnostic::new(
                DiagnosticKind::LegacyVersion,
                None,
                format!(
                    "session format version {file_version}: migrated in memory; run `sessiontree migrate` to write it (a backup is kept)"
                ),
            ));
            let session_id = session.session_id().to_owned();
            super::versions::migrate_entries(&mut session.header, rest, session_id)
        } else {
            rest
        };
        if dialect != facts_dialect {
            for entry in &mut rest {
                entry.facts = Default::default();
            }
        }
        session.index_read(rest);
        session.finish_load(path, identity, consumed, lines, pending);
        Ok(session)
    }

    /// A session of `header` being opened, with room for `planned` entries.
    pub(super) fn begin(
        dialect: Dialect,
        header: Map<String, Value>,
        title_slot: Option<TitleSlot>,
        options: OpenOptions,
        planned: usize,
    ) -> Session {
        let file_version = file_version(&header);
        let mut session = Session::empty(dialect, header, options);
        if dialect == Dialect::Omp {
            if let Some(slot) = &title_slot {
                fold_slot_into_header(&mut session.header, slot);
            }
        }
        session.slot = title_slot;
        session.file_version = file_version;
        // Room for the entries appended later: growing these per-entry lists copies them whole
        // (a millisecond at 100k entries, on the first append), and room never written costs
        // nothing.
        let room = planned + planned / 8 + 1024;
        session.parents.reserve(room);
        session.times.reserve(room);
        session.state_kinds.reserve(room);
        session.by_id.reserve(room);
        session
    }

    /// After the last entry read: parents settled, the file checked, its state recorded.
    pub(super) fn finish_load(
        &mut self,
        path: PathBuf,
        identity: Option<super::persist::FileIdentity>,
        len: u64,
        lines: usize,
        pending: u64,
    ) {
        self.settle_parents();
        self.check_integrity();
        self.file = FileState::Written {
            path,
            len,
            lines,
            pending,
            identity,
        };
    }

    /// The dialect turned out other than the one the entries were indexed for: the view's facts
    /// are made again, for it, on first use.
    pub(super) fn switch_dialect(&mut self, dialect: Dialect) {
        self.dialect = dialect;
        self.view_columns = Default::default();
        for entry in &mut self.entries {
            self.view_columns.push(entry, dialect, false);
        }
    }

    /// A new session (`SessionManager.create`): nothing is written until the agent's rule says so
    /// (the first assistant message), exactly as the agents defer it.
    pub fn create(
        dialect: Dialect,
        cwd: &str,
        session_dir: Option<&Path>,
        options: OpenOptions,
    ) -> Session {
        let now = options.clock.now_ms();
        Session::create_with_header(dialect, cwd, session_dir, None, now, options)
    }

    pub(crate) fn create_with_header(
        dialect: Dialect,
        cwd: &str,
        session_dir: Option<&Path>,
        extra: Option<Map<String, Value>>,
        now: i64,
        mut options: OpenOptions,
    ) -> Session {
        let id = options.ids.session_id(now);
        let timestamp = crate::time::format_iso(now);
        let mut header = Map::new();
        header.insert("type".into(), "session".into());
        header.insert("version".into(), 3.into());
        header.insert("id".into(), id.as_str().into());
        header.insert("timestamp".into(), timestamp.as_str().into());
        header.insert("cwd".into(), cwd.into());
        if let Some(extra) = extra {
            for (k, v) in extra {
                header.insert(k, v);
            }
        }
        let mut session = Session::empty(dialect, header, options);
        session.file = match session_dir {
            Some(dir) => FileState::Deferred(dir.join(session_file_name(&timestamp, &id))),
            None => FileState::Memory,
        };
        session
    }

    pub(crate) fn empty(
        dialect: Dialect,
        header: Map<String, Value>,
        options: OpenOptions,
    ) -> Session {
        Session {
            dialect,
            file: FileState::Memory,
            sync: options.sync,
            deferred_sync: None,
            slot: None,
            header,
            file_version: 3,
            entries: Vec::new(),
            by_id: Default::default(),
            last_idless: None,
            labels: Default::default(),
            leaf: None,
            pi_name: None,
            has_assistant: false,
            revision: 0,
            diagnostics: Vec::new(),
            clock: options.clock,
            ids: options.ids,
            source: None,
            store: None,
            parents: Vec::new(),
            times: Vec::new(),
            state_kinds: Vec::new(),
            parents_dirty: false,
            view_columns: Default::default(),
            tree: Default::default(),
            context_stash: Default::default(),
            unresolved_parents: 0,
            duplicate_ids: false,
        }
    }

    /// Reads the complete lines another process appended since we last looked, and indexes them
    /// incrementally. A file that shrank or was replaced is reported as [`Error::FileReplaced`]
    /// (reopen it).
    pub fn follow(&mut self) -> Result<super::load::FollowOutcome> {
        if let Some(link) = self.store.take() {
            return self.follow_store(link);
        }
        // A deferred file its agent has written since: followed from the end of what we hold.
        if let FileState::Deferred(path) = &self.file {
            let path = path.clone();
            if self.take_agents_file(&path)? == super::deferred::AgentsFile::NotYet {
                return Ok(FollowOutcome::default());
            }
        }
        let FileState::Written {
            path,
            len,
            lines,
            identity,
            ..
        } = &self.file
        else {
            return Ok(FollowOutcome::default());
        };
        let (path, len, lines) = (path.clone(), *len, *lines);
        let mut file = File::open(&path).map_err(|e| Error::io("cannot read", &path, e))?;
        let now_identity = super::persist::FileIdentity::of(&file);
        if identity.is_some() && now_identity.is_some() && *identity != now_identity {
            return Err(Error::FileReplaced { path });
        }
        let size = file
            .metadata()
            .map_err(|e| Error::io("cannot read", &path, e))?
            .len();
        if size < len {
            return Err(Error::FileReplaced { path });
        }
        if size == len {
            if let FileState::Written { pending, .. } = &mut self.file {
                *pending = 0;
            }
            return Ok(FollowOutcome::default());
        }
        file.seek(SeekFrom::Start(len))
            .map_err(|e| Error::io("cannot read", &path, e))?;
        let options = ReadOptions {
            first_line: lines + 1,
            detect_slot: false,
            facts: Some(self.dialect),
            source: self.source.clone().map(|source| (source, len)),
        };
        let outcome =
            read_lines(&file, &options).map_err(|e| Error::io("cannot read", &path, e))?;
        let start = self.entries.len();
        self.diagnostics.extend(outcome.diagnostics);
        // Lines appended to a legacy file by a legacy writer are indexed as they are, like any other.
        for entry in outcome.values {
            self.insert(entry);
        }
        if let FileState::Written {
            len,
            lines,
            pending,
            ..
        } = &mut self.file
        {
            *len += outcome.consumed;
            *lines += outcome.lines;
            *pending = outcome.pending;
        }
        self.settle_parents();
        let new_entries: Vec<usize> = (start..self.entries.len()).collect();
        if !new_entries.is_empty() {
            self.revision += 1;
        }
        Ok(FollowOutcome {
            new_entries,
            pending: outcome.pending > 0,
        })
    }

    /// Records integrity problems the agents would trip over: orphans, parent cycles, labels on
    /// unknown entries, assistant usage without cost.
    fn check_integrity(&mut self) {
        use crate::entry::Parent;
        // Parents were resolved once at load (`settle_parents` ran before this): an entry naming a
        // parent has none resolved exactly when that id is unknown.
        let mut found = Vec::new();
        for (i, entry) in self.entries.iter().enumerate() {
            if let Parent::Id(p) = &entry.parent {
                if self.parent_index(i).is_none() {
                    found.push(Diagnostic::new(
                        DiagnosticKind::Orphan,
                        Some(entry.line),
                        format!("parent {p} does not exist; the entry is shown as an extra root"),
                    ));
                }
            }
            if entry.kind() == "label" {
                let value = entry.json();
                if let Some(target) = value.get("targetId").and_then(Value::as_str) {
                    if !self.by_id.contains_key(target) {
                        found.push(Diagnostic::new(
                            DiagnosticKind::LabelOnUnknownEntry,
                            Some(entry.line),
                            format!("label targets {target}, which does not exist"),
                        ));
                    }
                }
            }
            if entry.usage_without_cost {
                found.push(Diagnostic::new(
                    DiagnosticKind::UsageWithoutCost,
                    Some(entry.line),
                    "assistant usage has no `cost`; omp fails to open this file",
                ));
            }
        }
        found.extend(self.parent_cycles());
        self.diagnostics.extend(found);
    }

    /// A diagnostic for each parent cycle, at the entry where its walk comes back.
    fn parent_cycles(&self) -> Vec<Diagnostic> {
        use crate::entry::Parent;
        // Parent cycles: walk each chain once, colouring entries as we go. A cycle needs a
        // parent at or after its child (a self-parent is a root): without one, no walk.
        let forward = self
            .parents
            .iter()
            .enumerate()
            .any(|(i, &p)| p != super::NO_PARENT && p as usize > i);
        if !forward {
            return Vec::new();
        }
        let mut found = Vec::new();
        let n = self.entries.len();
        let mut state = vec![0u8; n]; // 0 = unseen, 1 = on the current walk, 2 = done
        let mut walk = Vec::new();
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            walk.clear();
            let mut cursor = Some(start);
            while let Some(i) = cursor {
                match state[i] {
                    2 => break,
                    1 => {
                        let entry = &self.entries[i];
                        found.push(Diagnostic::new(
                            DiagnosticKind::ParentCycle,
                            Some(entry.line),
                            format!(
                                "entry {} is its own ancestor (a parent cycle); paths stop at the first repeat",
                                entry.id().unwrap_or("(no id)")
                            ),
                        ));
                        break;
                    }
                    _ => {}
                }
                state[i] = 1;
                walk.push(i);
                let entry = &self.entries[i];
                // A self-parent is a root in getTree, not a cycle.
                cursor = match (&entry.parent, entry.id()) {
                    (Parent::Id(p), Some(id)) if &**p == id => None,
                    (Parent::Id(_), _) => self.parent_index(i),
                    _ => None,
                };
            }
            for &i in &walk {
                state[i] = 2;
            }
        }
        found
    }
}

fn describe(entry: &crate::entry::Entry) -> String {
    if !entry.is_object {
        "not a JSON object".to_owned()
    } else if entry.kind() == "title" {
        "an omp title slot that is not 256 bytes of valid slot JSON".to_owned()
    } else if entry.kind() == "session" {
        "a session header without a string `id`".to_owned()
    } else if entry.kind().is_empty() {
        "a JSON object without a string `type`".to_owned()
    } else {
        format!("an entry of type `{}`", entry.kind())
    }
}

/// `<ISO time with ":" and "." as "-">_<session id>.jsonl`, as both agents name files.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    format!("{}_{session_id}.jsonl", timestamp.replace([':', '.'], "-"))
}

#[cfg(test)]
mod tests {
    use crate::{OpenOptions, Session};

    /// A first line that is JSON but not a session entry is named plainly, not as a type `` entry.
    #[test]
    fn a_first_line_without_a_type_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cases = [
            ("{\"a\":1}\n", "a JSON object without a string `type`"),
            ("{\"type\":\"x\",\"id\":\"1\"}\n", "an entry of type `x`"),
            ("[1]\n", "not a JSON object"),
        ];
        for (i, (text, want)) in cases.into_iter().enumerate() {
            let path = dir.path().join(format!("data{i}.jsonl"));
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
            let error = Session::open(&path, OpenOptions::default())
                .err()
                .unwrap_or_else(|| panic!("{text} opened"))
                .to_string();
            assert!(error.contains(want), "{text}: {error}");
            assert!(!error.contains("``"), "{error}");
        }
    }
}
