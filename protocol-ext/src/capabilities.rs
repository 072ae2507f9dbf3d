//! What each side declares at `initialize`: the server's `experimental.sessionTree`, the client's
//! `experimental.sessionTree` (hooks), the initialization options, and the
//! `workspace/executeCommand` command names used by code lenses and code actions.

use serde::{Deserialize, Serialize};

/// The key under `experimental` in both capability objects.
pub const EXPERIMENTAL_KEY: &str = "sessionTree";

/// The server's `capabilities.experimental.sessionTree`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerExperimental {
    /// [`crate::PROTOCOL_VERSION`].
    pub version: u32,
    /// Optional parts the server implements (see [`FEATURES`]).
    pub features: Vec<String>,
}

/// The features this server version announces.
pub const FEATURES: &[&str] = &[
    "listSessions",
    "rows",
    "tree",
    "entry",
    "context",
    "navigate",
    "branch",
    "labels",
    "append",
    "names",
    "hooks",
    "liveFollow",
];

/// The client's `capabilities.experimental.sessionTree`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientExperimental {
    /// The client answers `sessionTree/beforeTree` and `sessionTree/beforeBranch`.
    #[serde(default)]
    pub hooks: bool,
}

/// `initializationOptions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializationOptions {
    /// More folders holding session files (listed recursively one level deep).
    #[serde(default)]
    pub extra_roots: Vec<String>,
    /// "Live writer" = modified within this many seconds (default 10).
    #[serde(default)]
    pub live_writer_seconds: Option<u64>,
    /// Override omp's agent folder (default `$PI_CODING_AGENT_DIR` or `~/.omp/agent`).
    #[serde(default)]
    pub omp_agent_dir: Option<String>,
    /// Override pi's agent folder (default `~/.pi/agent`).
    #[serde(default)]
    pub pi_agent_dir: Option<String>,
    /// Override the home folder used for omp's folder names.
    #[serde(default)]
    pub home: Option<String>,
}

/// `workspace/executeCommand` commands (code lenses and code actions). Arguments:
/// `[uri, entryId]` for navigate and branch, `[uri, entryId, label | null]` for label.
pub mod commands {
    /// Navigate to an entry (`sessionTree/navigate` without a summary).
    pub const NAVIGATE: &str = "sessionTree.navigate";
    /// Branch from a user message (`sessionTree/branch`).
    pub const BRANCH: &str = "sessionTree.branch";
    /// Set or clear a label (`sessionTree/setLabel`).
    pub const LABEL: &str = "sessionTree.label";
    /// All of them.
    pub const ALL: &[&str] = &[NAVIGATE, BRANCH, LABEL];
}
