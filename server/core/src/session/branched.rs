//! `createBranchedSession(leafId)`: a new session holding only the path to an entry, with the
//! labels in effect on that path re-created after it, written by each dialect's rule.

use super::{load::OpenOptions, FileState, Session};
use crate::dialect::Dialect;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::ids::IdSource;
use serde_json::{Map, Value};
use std::sync::Arc;

impl Session {
    /// Forks the path root → `leaf_id` into a new session and returns it (the caller switches to
    /// it, as the agents' manager does). `ids` supplies the new session's ids (share the source).
    ///
    /// pi writes the new file only when the path holds an assistant message (otherwise it is
    /// deferred like a new session) and gives carried labels their original timestamps; omp writes
    /// it at once, with a title slot, and stamps carried labels with the current time.
    pub fn create_branched_session(
        &mut self,
        leaf_id: &str,
        ids: Box<dyn IdSource>,
    ) -> Result<Session> {
        let path = self.branch_path(Some(leaf_id));
        if path.is_empty() {
            return Err(Error::EntryNotFound(leaf_id.to_owned()));
        }
        // Each kept entry carries its view facts along, so the new session need not make them.
        let kept: Vec<Entry> = path
            .iter()
            .filter(|&&i| self.entries[i].kind() != "label")
            .map(|&i| {
                let entry = self.entries[i].clone();
                if let Some(scanned) = self.view_columns.scanned(i) {
                    let _ = entry.facts.set(scanned.clone());
                }
                entry
            })
            .collect();
        let kept_ids: std::collections::HashSet<&str, foldhash::fast::RandomState> =
            kept.iter().filter_map(Entry::id).collect();
        let carried: Vec<(String, super::LabelState)> = self
            .labels
            .iter()
            .filter(|(target, _)| kept_ids.contains(&***target))
            .map(|(t, l)| (t.to_string(), l.clone()))
            .collect();

        let now = self.clock.now_ms();
        let mut extra = Map::new();
        let persist = !matches!(self.file, FileState::Memory);
        if self.dialect == Dialect::Omp {
            if let Some(title) = self.header.get("title") {
                extra.insert("title".into(), title.clone());
            }
            if let Some(source) = self.header.get("titleSource") {
                extra.insert("titleSource".into(), source.clone());
            }
        }
        if persist {
            if let Some(p) = self.file.path() {
                extra.insert(
                    "parentSession".into(),
                    p.to_string_lossy().into_owned().into(),
                );
            }
        }
        if self.dialect == Dialect::Omp {
            if let Some(dirs) = self
                .header
                .get("additionalDirectories")
                .filter(|d| d.as_array().is_some_and(|a| !a.is_empty()))
            {
                extra.insert("additionalDirectories".into(), dirs.clone());
            }
        }
        let (dir, options) = self.sibling_options(ids);
        let cwd = self.cwd().to_owned();
        let mut fork = Session::create_with_header(
            self.dialect,
            &cwd,
            dir.as_deref(),
            Some(extra),
            now,
            options,
        );
        fork.store = self.sibling_store(&fork);
        fork.reserve(kept.len() + carried.len());
        for entry in kept {
            let mut entry = entry;
            entry.line = 0;
            fork.insert(entry);
        }
        let mut parent = fork.leaf.clone();
        for (target, state) in carried {
            let id = fork.fresh_id();
            let timestamp = match self.dialect {
                Dialect::Pi => state.timestamp.map_or(Value::Null, Value::from),
                Dialect::Omp => fork.now_iso().into(),
            };
            let mut map = Map::new();
            map.insert("type".into(), "label".into());
            map.insert("id".into(), id.as_str().into());
            map.insert(
                "parentId".into(),
                parent.as_deref().map_or(Value::Null, Value::from),
            );
            map.insert("timestamp".into(), timestamp);
            map.insert("targetId".into(), target.into());
            map.insert("label".into(), state.label.into());
            fork.insert(Entry::from_value(&Value::Object(map)));
            parent = Some(id.into());
        }
        fork.settle_parents();
        fork.diagnostics.clear();
        if fork.dialect == Dialect::Omp || fork.has_assistant {
            fork.ensure_fork_on_disk()?;
        }
        Ok(fork)
    }

    /// The /branch flow for a root user message: a brand-new empty session whose header records
    /// `parentSession` (the agents' `newSession({parentSession})`).
    pub fn new_session_from(&self, ids: Box<dyn IdSource>) -> Result<Session> {
        let now = self.clock.now_ms();
        let mut extra = Map::new();
        if let Some(p) = self.file.path() {
            extra.insert(
                "parentSession".into(),
                p.to_string_lossy().into_owned().into(),
            );
        }
        let (dir, options) = self.sibling_options(ids);
        let mut session = Session::create_with_header(
            self.dialect,
            self.cwd(),
            dir.as_deref(),
            Some(extra),
            now,
            options,
        );
        session.store = self.sibling_store(&session);
        if session.dialect == Dialect::Omp {
            session.ensure_on_disk()?;
        }
        Ok(session)
    }

    /// Where a session made from this one lives (this file's folder) and how it is opened (same
    /// dialect, clock and sync policy; the caller's id source).
    fn sibling_options(&self, ids: Box<dyn IdSource>) -> (Option<std::path::PathBuf>, OpenOptions) {
        let dir = self
            .file
            .path()
            .and_then(|p| p.parent())
            .map(std::path::Path::to_path_buf);
        let options = OpenOptions {
            dialect: Some(self.dialect),
            clock: Arc::clone(&self.clock),
            ids,
            sync: self.sync,
            view_facts: true,
        };
        (dir, options)
    }
}
