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
    /// Optional parts the server implements (see [`FEATURES`]; plus [`SUMMARIES_FEATURE`] when
    /// branch summaries are enabled).
    pub features: Vec<String>,
    /// Whether branch summaries are enabled and who writes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_summary: Option<BranchSummaryStatus>,
}

/// The feature announced (in addition to [`FEATURES`]) when branch summaries are enabled: clients
/// then ask "Summarize branch?" on navigation.
pub const SUMMARIES_FEATURE: &str = "summaries";

/// The server's `experimental.sessionTree.branchSummary`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryStatus {
    /// `branchSummary.enabled` in force (default false, as omp).
    pub enabled: bool,
    /// The provider in force: `openai`, `command`, `client`, or none.
    #[serde(default)]
    pub provider: Option<String>,
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
    "transcript",
    "agent",
    "rewind",
];

/// The client's `capabilities.experimental.sessionTree`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientExperimental {
    /// The client answers `sessionTree/beforeTree` and `sessionTree/beforeBranch`.
    #[serde(default)]
    pub hooks: bool,
    /// The client shows the agent's dialogs (`sessionTree/agentDialog`).
    #[serde(default)]
    pub agent_dialogs: bool,
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
    /// Branch summary settings (`true`/`false` or `{enabled, provider, openai, command,
    /// reserveTokens}`; see `docs/summaries.md`). User-level: the only place besides the agent's
    /// own settings file a `command` provider is taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_summary: Option<serde_json::Value>,
    /// The live agent (see `docs/agents.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentSettings>,
    /// Session stores (omp's Redis storage; see `docs/redis.md`) whose sessions are listed and
    /// opened besides files. Taken only from here (the user's settings), never from workspace
    /// configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stores: Vec<StoreSettings>,
}

/// One entry of `initializationOptions.stores`.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoreSettings {
    /// `redis://HOST:PORT[/DB][?prefix=PREFIX]` (`rediss://` for TLS), without credentials.
    pub url: String,
    /// The ACL user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The environment variable (of the server's process) holding the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// The password itself (from the user's settings; `passwordEnv` keeps it out of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// List every session of the store, not only those in the workspace folders' omp folders.
    #[serde(default)]
    pub list_all: bool,
    /// For a `rediss://` store whose certificate a private CA signed: a PEM file of that CA's
    /// certificate, checked against instead of the public certificate authorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
}

/// Never shows the password.
impl std::fmt::Debug for StoreSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreSettings")
            .field("url", &self.url)
            .field("user", &self.user)
            .field("password_env", &self.password_env)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("list_all", &self.list_all)
            .field("ca_file", &self.ca_file)
            .finish()
    }
}

/// `initializationOptions.agent` (also taken from `workspace/didChangeConfiguration` under
/// `sessiontree.agent`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSettings {
    /// Turn the live agent off: Send then appends without an answer (default: on).
    #[serde(default)]
    pub disabled: bool,
    /// The `pi` executable (default: `pi` on `PATH`).
    #[serde(default)]
    pub pi_path: Option<String>,
    /// The `omp` executable (default: `omp` on `PATH`).
    #[serde(default)]
    pub omp_path: Option<String>,
    /// Arguments given to `pi` before the server's own (`--model …`, `--provider …`).
    #[serde(default)]
    pub pi_args: Vec<String>,
    /// Arguments given to `omp` before the server's own.
    #[serde(default)]
    pub omp_args: Vec<String>,
    /// Stop an agent the server started after this many idle seconds (default 600; 0 = never).
    #[serde(default)]
    pub idle_seconds: Option<u64>,
    /// Write branch summaries with our own providers even when the agent could (default: the
    /// agent summarizes when it is installed).
    #[serde(default)]
    pub own_summaries: bool,
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
