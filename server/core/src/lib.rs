//! `sessiontree-core`: the session engine.
//!
//! Reads and writes the JSONL session files of the pi-family coding agents (upstream pi and
//! oh-my-pi), exact to each agent's semantics, without ever losing a byte: appends are whole
//! lines, nothing existing is rewritten except omp's title slot, and files the agents would wipe or
//! rewrite are left alone until an explicit migrate. No tokio and no LSP types live here.

pub mod cells;
pub mod context;
pub mod describe;
pub mod diagnostics;
pub mod dialect;
pub mod entry;
mod entry_value;
pub mod error;
pub mod facts;
pub mod ids;
pub mod js;
pub mod json;
mod json_scan;
pub mod listing;
#[doc(hidden)]
pub mod message_line;
pub mod migrate;
pub mod parallel;
pub mod reader;
pub mod session;
pub mod snapshot;
pub mod summary;
#[cfg(any(test, feature = "synth"))]
pub mod synth;
#[cfg(test)]
mod test_sessions;
pub mod time;
pub mod title_cleaning;
pub mod title_slot;
pub mod transcript;
pub mod tree;
pub mod type_names;
pub mod view;

pub use dialect::Dialect;
pub use entry::{Entry, Parent};
pub use error::{Error, Result};
pub use session::{OpenOptions, Session};
