//! Retention: how many snapshots the store keeps and for how long. Off by default (every snapshot
//! is kept); set in the repository's git config:
//!
//! ```text
//! git config sessiontree.rewind.maxSnapshots 500
//! git config sessiontree.rewind.maxAgeDays 30
//! ```
//!
//! The snapshots of labelled entries and the latest undo point of each work tree are pinned. A
//! pruned snapshot is written to the ledger as pruned before the store lets go of it, so it is
//! always reported as pruned, never restored in part.

use crate::error::Result;
use crate::ledger::{now, Record};
use crate::operations::{live_trees, Rewind};
use crate::store;
use crate::workspace::Workspace;
use sessiontree_core::Session;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The retention rules.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Retention {
    /// Keep at most this many snapshots (pinned ones not counted).
    pub max_snapshots: Option<usize>,
    /// Keep no snapshot last used longer ago than this (pinned ones excepted).
    pub max_age_days: Option<f64>,
}

impl Retention {
    /// Reads `sessiontree.rewind.maxSnapshots` and `sessiontree.rewind.maxAgeDays`.
    pub fn from_git_config(workspace: &Workspace) -> Retention {
        let get = |key: &str| {
            workspace
                .git()
                .line(["config", "--get", key])
                .ok()
                .filter(|s| !s.is_empty())
        };
        Retention {
            max_snapshots: get("sessiontree.rewind.maxSnapshots").and_then(|s| s.parse().ok()),
            max_age_days: get("sessiontree.rewind.maxAgeDays").and_then(|s| s.parse().ok()),
        }
    }

    /// Whether nothing is ever pruned.
    pub fn is_off(&self) -> bool {
        self.max_snapshots.is_none() && self.max_age_days.is_none()
    }
}

/// What a prune did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Snapshots kept.
    pub kept: usize,
    /// Of those, pinned (labelled entries, undo points).
    pub pinned: usize,
    /// The trees let go.
    pub pruned: Vec<String>,
}

impl Rewind {
    /// Applies the retention rules. `sessions` are open sessions whose labels count (the session
    /// files the ledger names are read for theirs too).
    pub fn prune(&self, retention: &Retention, sessions: &[&Session]) -> Result<PruneReport> {
        let _lock = self.workspace().lock()?;
        let records = self.ledger().read()?;
        let live = live_trees(&records);
        let pinned = pinned_trees(&records, sessions);
        let mut candidates: Vec<(&str, &str)> = live
            .iter()
            .filter(|(tree, _)| !pinned.contains(**tree))
            .map(|(tree, at)| (*tree, *at))
            .collect();
        // Newest first.
        candidates.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let cutoff = retention.max_age_days.map(|days| {
            let ms = (days * 86_400_000.0) as i64;
            (chrono::Utc::now() - chrono::Duration::milliseconds(ms))
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string()
        });
        let mut pruned = Vec::new();
        for (n, (tree, at)) in candidates.iter().enumerate() {
            let too_many = retention.max_snapshots.is_some_and(|max| n >= max);
            let too_old = cutoff.as_deref().is_some_and(|cut| *at < cut);
            if too_many || too_old {
                pruned.push((*tree).to_owned());
            }
        }
        let kept: BTreeSet<String> = live
            .keys()
            .filter(|t| !pruned.iter().any(|p| p == **t))
            .map(|t| (*t).to_owned())
            .collect();
        if !pruned.is_empty() {
            let at = now();
            let marks: Vec<Record> = pruned
                .iter()
                .map(|tree| Record::Pruned {
                    tree: tree.clone(),
                    pruned_at: at.clone(),
                })
                .collect();
            // Marked first: a crash after this leaves a snapshot reported as pruned, never a
            // point whose objects vanish unannounced.
            self.ledger().append(&marks)?;
            store::keep_only(self.workspace(), &kept)?;
        }
        Ok(PruneReport {
            pinned: kept.iter().filter(|t| pinned.contains(t.as_str())).count(),
            kept: kept.len(),
            pruned,
        })
    }
}

/// Trees bound to labelled entries and each work tree's latest undo point.
fn pinned_trees(records: &[Record], sessions: &[&Session]) -> HashSet<String> {
    let mut labelled: HashMap<String, HashSet<String>> = HashMap::new();
    for session in sessions {
        labelled
            .entry(session.session_id().to_owned())
            .or_default()
            .extend(session.labels().map(|(id, _)| id.to_owned()));
    }
    let mut files: HashSet<&str> = HashSet::new();
    for record in records {
        if let Record::Point(p) = record {
            if !labelled.contains_key(&p.session) {
                if let Some(file) = p.file.as_deref() {
                    files.insert(file);
                }
            }
        }
    }
    for file in files {
        if let Ok(session) = Session::open(file, Default::default()) {
            labelled
                .entry(session.session_id().to_owned())
                .or_default()
                .extend(session.labels().map(|(id, _)| id.to_owned()));
        }
    }
    let mut out = HashSet::new();
    let mut last_undo: HashMap<&str, &str> = HashMap::new();
    for record in records {
        match record {
            Record::Point(p) => {
                if labelled
                    .get(&p.session)
                    .is_some_and(|l| l.contains(&p.entry))
                {
                    out.insert(p.tree.clone());
                }
            }
            Record::Undo { tree, worktree, .. } => {
                last_undo.insert(worktree, tree);
            }
            Record::Pruned { .. } => {}
        }
    }
    out.extend(last_undo.into_values().map(str::to_owned));
    out
}
