//! `sessiontree-rewind`: code with the conversation. Every user message and every turn-ending
//! assistant message of a session can give back the workspace's files as they were there.
//!
//! Snapshots are git trees written through a private index (never the user's index, HEAD,
//! branches, stash or working tree), kept reachable through the one ref `refs/sessiontree/snapshots`;
//! a ledger maps session + entry to snapshot. Compare reads git's objects; restore takes an undo
//! point first, replaces each file atomically, and rolls back on failure. This crate reads sessions
//! through `sessiontree-core`'s public API and knows nothing of LSP or the CLI. See `docs/rewind.md`.

pub mod compare;
pub mod error;
pub mod git;
pub mod ledger;
pub mod monitor;
pub mod operations;
pub mod points;
pub mod record;
pub mod restore;
pub mod retention;
mod settled;
pub mod snapshot;
pub mod store;
pub mod workspace;

pub use compare::{Change, FileAt, Status};
pub use error::{Error, Result};
pub use ledger::Moment;
pub use monitor::watch_work_trees;
pub use operations::{Comparison, PointTarget, RestoreReport, Rewind, Snapshot};
pub use points::{Point, Points, Resolved, Source};
pub use restore::{Action, Plan};
pub use retention::{PruneReport, Retention};
pub use workspace::Workspace;
