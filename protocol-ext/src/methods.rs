//! The methods: one marker type per method with its params and result types beside it.
//! Names are the only place a method string is written in Rust.

use crate::types::*;
use crate::{Direction, Notification, Request};
use serde::{Deserialize, Serialize};
use serde_json::Value;

macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:literal, $dir:ident, $params:ty, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl Request for $name {
            const METHOD: &'static str = $method;
            const DIRECTION: Direction = Direction::$dir;
            type Params = $params;
            type Result = $result;
        }
    };
}

macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:literal, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub enum $name {}
        impl Notification for $name {
            const METHOD: &'static str = $method;
            const DIRECTION: Direction = Direction::ServerToClient;
            type Params = $params;
        }
    };
}

// ---------------------------------------------------------------- listSessions

request!(
    /// The sessions of the workspace: both agents' session folders for each folder, plus extra roots.
    ListSessions, "sessionTree/listSessions", ClientToServer, ListSessionsParams, ListSessionsResult
);

/// Params of [`ListSessions`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsParams {
    /// Folder URIs to list for; empty = the workspace folders given at `initialize`.
    #[serde(default)]
    pub folders: Vec<String>,
}

/// Result of [`ListSessions`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsResult {
    /// Newest first.
    pub sessions: Vec<SessionInfo>,
    /// Configured session stores that could not be listed, with why (their sessions are missing
    /// from `sessions`; the files' are there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<UnavailableStore>,
}

/// A session store that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnavailableStore {
    /// The store's address (never with credentials).
    pub store: String,
    /// Why, for people.
    pub message: String,
}

// ---------------------------------------------------------------- open / close

request!(
    /// Opens a session file (idempotent); the server follows it live until `close`.
    Open, "sessionTree/open", ClientToServer, OpenParams, OpenResult
);

/// Params of [`Open`] and [`Close`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenParams {
    /// `file://` URI of the session file.
    pub uri: String,
}

/// Result of [`Open`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenResult {
    /// The session file.
    pub uri: String,
    /// The header's session id.
    pub session_id: String,
    /// The file's dialect.
    pub dialect: Dialect,
    /// The session name, drawn as rows are (control characters as their Control Pictures).
    #[serde(default)]
    pub name: Option<String>,
    /// The header's working directory.
    pub cwd: String,
    /// The current leaf (the last entry of the file on open).
    #[serde(default)]
    pub leaf: Option<String>,
    /// The session's revision.
    pub revision: u64,
    /// Entries in the file.
    pub entry_count: u32,
    /// Problems found in the file.
    pub diagnostics: Vec<SessionDiagnostic>,
}

request!(
    /// Stops following a session and forgets its leaf.
    Close, "sessionTree/close", ClientToServer, OpenParams, CloseResult
);

/// Result of [`Close`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseResult {
    /// Whether the session was open.
    #[serde(default)]
    pub closed: bool,
}

// ---------------------------------------------------------------- rows

request!(
    /// The `/tree` view: the filtered, searched window of rows around the selection.
    Rows, "sessionTree/rows", ClientToServer, RowsParams, RowsResult
);

/// Params of [`Rows`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowsParams {
    /// The session.
    pub uri: String,
    /// Filter mode.
    #[serde(default)]
    pub filter: FilterMode,
    /// Search text (space-separated words, all must match); empty = no search.
    #[serde(default)]
    pub search: String,
    /// The selected entry id; `null` = the leaf.
    #[serde(default)]
    pub selection: Option<String>,
    /// Width in columns (0 = 120).
    #[serde(default)]
    pub width: u32,
    /// The terminal height the agent would have: the window is the agent's (pi `max(5, h/2)`
    /// rows; omp also leaves room for its chrome). 0 = every row.
    #[serde(default)]
    pub height: u32,
    /// Folded entries, as pi's `/tree` folds them (Ctrl+← / Alt+←): their descendants are
    /// hidden, whatever the filter shows, and pi draws `⊞` on them. omp has no folding of its
    /// own and is folded by the same rule, with no marker drawn (the rows' `foldable` / `folded`
    /// say it). The client keeps the set for its session and sends it with each request; pi
    /// clears it when the filter or the search changes, and so do the clients. A selection
    /// inside a folded branch (the leaf, say) selects the folded row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<String>,
    /// Move the selection first, as pi's fold keys do when they do not fold (the client folds a
    /// `foldable` row and unfolds a `folded` one; on other rows the key moves): the rows are
    /// then the window around where it went, and `selection` in the result names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<SegmentMove>,
}

/// Result of [`Rows`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowsResult {
    /// The revision the rows were computed at.
    pub revision: u64,
    /// The current leaf.
    #[serde(default)]
    pub leaf: Option<String>,
    /// The rows in the window.
    pub rows: Vec<Row>,
    /// The window exactly as the agent's `/tree` prints it (text lines, ANSI removed).
    pub lines: Vec<String>,
    /// The selected entry after filtering (the nearest visible one).
    #[serde(default)]
    pub selection: Option<String>,
    /// Index of the first row of the window among all visible rows.
    pub window_start: u32,
    /// Visible rows in total (before windowing).
    pub total_rows: u32,
}

// ---------------------------------------------------------------- tree

request!(
    /// The whole tree, structured and paged (pre-order).
    Tree, "sessionTree/tree", ClientToServer, TreeParams, TreeResult
);

/// Params of [`Tree`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeParams {
    /// The session.
    pub uri: String,
    /// First node to return (pre-order index).
    #[serde(default)]
    pub offset: u32,
    /// How many nodes at most (0 = all).
    #[serde(default)]
    pub limit: u32,
}

/// Result of [`Tree`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeResult {
    /// The revision the tree was read at.
    pub revision: u64,
    /// The current leaf.
    #[serde(default)]
    pub leaf: Option<String>,
    /// Nodes in the whole tree.
    pub total: u32,
    /// The offset asked for.
    pub offset: u32,
    /// The page.
    pub nodes: Vec<TreeNode>,
}

// ---------------------------------------------------------------- entry

request!(
    /// One entry: its full JSON and a markdown rendering.
    GetEntry, "sessionTree/entry", ClientToServer, EntryParams, EntryResult
);

/// Params of [`GetEntry`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryParams {
    /// The session.
    pub uri: String,
    /// The entry id.
    pub id: String,
}

/// Result of [`GetEntry`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryResult {
    /// The session's revision.
    pub revision: u64,
    /// The entry as written in the file.
    pub entry: Value,
    /// The entry rendered as markdown.
    pub markdown: String,
    /// The label in effect.
    #[serde(default)]
    pub label: Option<String>,
    /// 1-based line in the file.
    pub line: u32,
    /// Children ids, sorted as in the tree.
    pub children: Vec<String>,
}

// ---------------------------------------------------------------- context

request!(
    /// What the model would see at the leaf (or at `leaf`): state, messages, model-facing text.
    Context, "sessionTree/context", ClientToServer, ContextParams, ContextResult
);

/// Params of [`Context`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextParams {
    /// The session.
    pub uri: String,
    /// Build the context at this entry instead of the leaf.
    #[serde(default)]
    pub leaf: Option<String>,
    /// Whether to include the model-facing `text` (default true). A view that shows only the
    /// messages passes false: the answer is then about half as long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_text: Option<bool>,
}

/// Result of [`Context`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextResult {
    /// The session's revision.
    pub revision: u64,
    /// The entry the context was built at.
    #[serde(default)]
    pub leaf: Option<String>,
    /// Thinking level, model(s), mode, … as the dialect records them.
    pub state: Value,
    /// The messages, as `buildSessionContext` returns them.
    pub messages: Vec<Value>,
    /// The model-facing text of every message, in order (absent when the params' `withText` is
    /// false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

// ---------------------------------------------------------------- navigate

request!(
    /// The `/tree` flow: move the leaf to an entry, optionally leaving a branch summary.
    Navigate, "sessionTree/navigate", ClientToServer, NavigateParams, NavigateResult
);

/// The answer to "Summarize branch?".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SummarizeChoice {
    /// No summary.
    #[default]
    None,
    /// Summarize with the default prompt.
    Summarize,
    /// Summarize with `customInstructions`.
    Custom,
}

/// Params of [`Navigate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateParams {
    /// The session.
    pub uri: String,
    /// The entry chosen in the tree.
    pub target_id: String,
    /// Whether to summarize the abandoned branch.
    #[serde(default)]
    pub summarize: SummarizeChoice,
    /// Instructions for `summarize: "custom"`.
    #[serde(default)]
    pub custom_instructions: Option<String>,
    /// pi only: a label to attach (to the summary entry, or to the target without one).
    #[serde(default)]
    pub label: Option<String>,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
    /// Write even though an agent without the sessiontree bridge works in the session's folder
    /// (otherwise refused with `agentRunning`; see `docs/agents.md`).
    #[serde(default)]
    pub force: bool,
}

/// Where navigation put the leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NavigateDecision {
    /// Nothing moved (the target is the leaf already, or a hook cancelled).
    Stay,
    /// The leaf is the target.
    Target,
    /// The leaf is the target's parent (a user or custom message: its text goes back to the editor).
    Parent,
    /// The leaf is reset (a root user message): the next append starts a new root.
    Root,
    /// omp, an `ask` tool result: the question is to be asked again (`toolCallId`); nothing moved.
    ReopenAsk,
}

/// Result of [`Navigate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResult {
    /// The session's revision after the move.
    pub revision: u64,
    /// What happened.
    pub decision: NavigateDecision,
    /// The leaf before.
    #[serde(default)]
    pub old_leaf: Option<String>,
    /// The leaf after: the summary entry when one was written (it hangs at the position moved
    /// to).
    #[serde(default)]
    pub new_leaf: Option<String>,
    /// Text to put back into the editor (the chosen user or custom message).
    #[serde(default)]
    pub editor_text: Option<String>,
    /// The target was the current position: nothing to do.
    #[serde(default)]
    pub already_at_this_point: bool,
    /// A `beforeTree` hook cancelled the move.
    #[serde(default)]
    pub cancelled: bool,
    /// The `branch_summary` entry written, when a summary was left.
    #[serde(default)]
    pub summary_entry_id: Option<String>,
    /// A summary was asked for but nothing was abandoned, so none was written.
    #[serde(default)]
    pub summary_skipped: bool,
    /// `reopenAsk`: the `ask` tool call whose question is asked again.
    #[serde(default)]
    pub tool_call_id: Option<String>,
}

// ---------------------------------------------------------------- branch

request!(
    /// The `/branch` flow: fork the path before a user message into a new session file.
    Branch, "sessionTree/branch", ClientToServer, BranchParams, BranchResult
);

/// Params of [`Branch`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchParams {
    /// The session.
    pub uri: String,
    /// A user message entry.
    pub entry_id: String,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
}

/// Result of [`Branch`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchResult {
    /// The new session file (`null` when a hook cancelled).
    #[serde(default)]
    pub new_uri: Option<String>,
    /// Its path.
    #[serde(default)]
    pub new_path: Option<String>,
    /// Its session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Whether the file exists yet (pi defers a file without an assistant message).
    #[serde(default)]
    pub written: bool,
    /// The user message's text, for the editor.
    pub editor_text: String,
    /// A `beforeBranch` hook cancelled.
    #[serde(default)]
    pub cancelled: bool,
    /// The source session's revision.
    pub revision: u64,
}

// ---------------------------------------------------------------- setLabel

request!(
    /// Sets, changes or clears (`label: null` or `""`) the label of any entry.
    SetLabel, "sessionTree/setLabel", ClientToServer, SetLabelParams, MutationResult
);

/// Params of [`SetLabel`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetLabelParams {
    /// The session.
    pub uri: String,
    /// The labelled entry.
    pub target_id: String,
    /// The label; `null` or `""` clears.
    #[serde(default)]
    pub label: Option<String>,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
    /// Write even though an agent without the sessiontree bridge works in the session's folder
    /// (otherwise refused with `agentRunning`; see `docs/agents.md`).
    #[serde(default)]
    pub force: bool,
}

// ---------------------------------------------------------------- append

request!(
    /// The chat buffer's submit: a user message or a custom message at the leaf.
    Append, "sessionTree/append", ClientToServer, AppendParams, MutationResult
);

/// What [`Append`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AppendKind {
    /// A `message` entry with a `user` message.
    #[default]
    User,
    /// A `custom_message` entry.
    Custom,
}

/// Params of [`Append`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendParams {
    /// The session.
    pub uri: String,
    /// What to write.
    #[serde(default)]
    pub kind: AppendKind,
    /// The message text.
    pub text: String,
    /// `custom`: the extension type.
    #[serde(default)]
    pub custom_type: Option<String>,
    /// `custom`: whether the agent's UI shows it.
    #[serde(default)]
    pub display: bool,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
    /// Write even though an agent without the sessiontree bridge works in the session's folder
    /// (otherwise refused with `agentRunning`; see `docs/agents.md`).
    #[serde(default)]
    pub force: bool,
}

// ---------------------------------------------------------------- names

request!(
    /// Renames the session as the user (pi `session_info`, omp user title).
    SetName, "sessionTree/setName", ClientToServer, SetNameParams, NameResult
);

/// Params of [`SetName`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetNameParams {
    /// The session.
    pub uri: String,
    /// The new name.
    pub name: String,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
    /// Write even though an agent without the sessiontree bridge works in the session's folder
    /// (otherwise refused with `agentRunning`; see `docs/agents.md`).
    #[serde(default)]
    pub force: bool,
}

/// Result of [`SetName`] and [`NameFromPlanTitle`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NameResult {
    /// The session's revision after.
    pub revision: u64,
    /// The leaf after.
    #[serde(default)]
    pub leaf: Option<String>,
    /// The entry written, when one was.
    #[serde(default)]
    pub entry_id: Option<String>,
    /// The session name after, drawn as rows are (control characters as their Control Pictures).
    #[serde(default)]
    pub name: Option<String>,
    /// Whether the name was applied.
    #[serde(default)]
    pub applied: bool,
}

request!(
    /// Names the session from an approved plan title (`humanizePlanTitle`), never over an existing name.
    NameFromPlanTitle, "sessionTree/nameFromPlanTitle", ClientToServer, NameFromPlanTitleParams, NameResult
);

/// Params of [`NameFromPlanTitle`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NameFromPlanTitleParams {
    /// The session.
    pub uri: String,
    /// The plan's title (e.g. `fix-login_flow`).
    pub plan_title: String,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
    /// Write even though an agent without the sessiontree bridge works in the session's folder
    /// (otherwise refused with `agentRunning`; see `docs/agents.md`).
    #[serde(default)]
    pub force: bool,
}

// ---------------------------------------------------------------- notifications

notification!(
    /// The tree changed: an append (ours or an agent's), a leaf move, a reload.
    DidChange, "sessionTree/didChange", DidChangeParams
);

/// Why a session changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeReason {
    /// A client appended.
    Append,
    /// A label was set or cleared.
    Label,
    /// The session was renamed.
    Name,
    /// The leaf moved.
    Navigate,
    /// Another process appended to the file.
    Follow,
    /// The file was rewritten, truncated or replaced, and reloaded.
    Reload,
}

/// Params of [`DidChange`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeParams {
    /// The session.
    pub uri: String,
    /// The revision after the change.
    pub revision: u64,
    /// The leaf after the change.
    #[serde(default)]
    pub leaf: Option<String>,
    /// Why.
    pub reason: ChangeReason,
    /// Ids of the entries that arrived (in file order).
    #[serde(default)]
    pub new_entry_ids: Vec<String>,
}

notification!(
    /// The navigation happened (the agents' `session_tree` event).
    DidNavigate, "sessionTree/didNavigate", DidNavigateParams
);

/// Params of [`DidNavigate`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidNavigateParams {
    /// The session.
    pub uri: String,
    /// The revision after.
    pub revision: u64,
    /// The leaf after: the summary entry when one was written (it hangs at the position moved
    /// to).
    #[serde(default)]
    pub new_leaf: Option<String>,
    /// The leaf before.
    #[serde(default)]
    pub old_leaf: Option<String>,
    /// The `branch_summary` entry, when one was written.
    #[serde(default)]
    pub summary_entry_id: Option<String>,
    /// Whether a client's `beforeTree` answer supplied the summary.
    #[serde(default)]
    pub from_client: bool,
}

notification!(
    /// A `/branch` created a new session file.
    DidBranch, "sessionTree/didBranch", DidBranchParams
);

/// Params of [`DidBranch`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidBranchParams {
    /// The source session.
    pub uri: String,
    /// The user message branched from.
    pub entry_id: String,
    /// The new session file.
    pub new_uri: String,
    /// Whether the new file exists yet.
    #[serde(default)]
    pub written: bool,
}

// ---------------------------------------------------------------- hooks (server → client requests)

request!(
    /// Before a navigation: the client may cancel it or supply the summary. Sent only to clients
    /// that declared `experimental.sessionTree.hooks`.
    BeforeTree, "sessionTree/beforeTree", ServerToClient, BeforeTreeParams, BeforeTreeResult
);

/// Params of [`BeforeTree`] (the agents' tree preparation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeTreeParams {
    /// The session.
    pub uri: String,
    /// The entry chosen.
    pub target_id: String,
    /// The leaf before.
    #[serde(default)]
    pub old_leaf: Option<String>,
    /// The deepest entry on both paths.
    #[serde(default)]
    pub common_ancestor: Option<String>,
    /// The abandoned entries' ids, oldest first.
    pub entries_to_summarize: Vec<String>,
    /// The abandoned entries themselves (as written), in the same order: what a summary covers.
    #[serde(default)]
    pub entries: Vec<Value>,
    /// Whether the user asked for a summary.
    #[serde(default)]
    pub user_wants_summary: bool,
    /// The user's custom instructions.
    #[serde(default)]
    pub custom_instructions: Option<String>,
}

/// Result of [`BeforeTree`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeTreeResult {
    /// Cancel the navigation.
    #[serde(default)]
    pub cancel: bool,
    /// Use this summary instead of generating one.
    #[serde(default)]
    pub summary: Option<SuppliedSummary>,
}

request!(
    /// Before a `/branch`: the client may cancel it. Sent only to clients that declared hooks.
    BeforeBranch, "sessionTree/beforeBranch", ServerToClient, BeforeBranchParams, BeforeBranchResult
);

/// Params of [`BeforeBranch`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeBranchParams {
    /// The session.
    pub uri: String,
    /// The user message branched from.
    pub entry_id: String,
}

/// Result of [`BeforeBranch`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeBranchResult {
    /// Cancel the branch.
    #[serde(default)]
    pub cancel: bool,
}

// ---------------------------------------------------------------- the live agent

mod agent;
pub use agent::*;

// ---------------------------------------------------------------- rewind (code with the conversation)

mod rewind;
pub use rewind::*;
