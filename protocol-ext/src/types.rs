//! Shapes shared by several methods: dialects, rows, tree nodes, diagnostics, mutation answers.
//! Plain data with serde derives; no behaviour lives here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which agent's rules a session file follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Dialect {
    /// oh-my-pi (`omp`): title slot on line 1.
    Omp,
    /// upstream pi.
    Pi,
}

/// The `/tree` filter modes of the agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FilterMode {
    /// The agent's default view (settings and bookkeeping entries hidden).
    #[default]
    Default,
    /// Like default, without tool results.
    NoTools,
    /// Only user messages.
    UserOnly,
    /// Only labelled entries.
    LabeledOnly,
    /// Everything.
    All,
}

/// A move of the selection along the tree's branches, as pi's `/tree` makes it when Ctrl+← /
/// Ctrl+→ (Alt+← / Alt+→) do not fold or unfold (`findBranchSegmentStart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SegmentMove {
    /// Up the visible parents to the first row of the branch segment holding the selection; from
    /// a segment's first row, to the first row of the segment above (a root: stays).
    Up,
    /// Down the first visible children to the first child of the next branch point, or to the
    /// end of the chain.
    Down,
}

/// A half-open range of characters (Unicode scalar values) inside a row's `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CharRange {
    /// First character.
    pub start: u32,
    /// One past the last character.
    pub end: u32,
}

/// One row of the `/tree` view, as both plugins draw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The entry the row shows (`null` for id-less entries).
    pub id: Option<String>,
    /// The entry's `type`.
    pub kind: String,
    /// `message.role` for message entries.
    #[serde(default)]
    pub role: Option<String>,
    /// Indentation level as the agent draws it.
    #[serde(default)]
    pub depth: u32,
    /// Indentation and connectors (`├─ `, `│  `, …) as drawn. A gutter wider than the request's
    /// `width` keeps its right end, led by `…` (`width` characters in all).
    pub prefix: String,
    /// The row's text after the prefix and the label (role prefix, content preview).
    pub text: String,
    /// The label in effect on the entry.
    #[serde(default)]
    pub label: Option<String>,
    /// Whether the entry is on the path root → leaf.
    #[serde(default)]
    pub on_active_path: bool,
    /// Whether the entry is the current leaf.
    #[serde(default)]
    pub is_leaf: bool,
    /// Whether the row has visible children.
    #[serde(default)]
    pub has_children: bool,
    /// The row can be folded: it has visible children and is a root (no visible parent) or
    /// starts a branch (pi: its visible parent has more than one visible child, and pi draws
    /// `⊟` in its connector; omp: it is drawn with a connector, and omp draws no marker, so a
    /// client draws one from this field).
    #[serde(default)]
    pub foldable: bool,
    /// The row is folded (named in the request's `folded`): its descendants are hidden. pi draws
    /// `⊞`; omp draws nothing, so a client draws the marker from this field.
    #[serde(default)]
    pub folded: bool,
    /// Whether the row is the selection.
    #[serde(default)]
    pub selected: bool,
    /// Search matches inside `text`.
    #[serde(default)]
    pub matches: Vec<CharRange>,
}

/// One node of the session tree in pre-order (children sorted by timestamp, as the agents sort).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeNode {
    /// The entry id (`null` for id-less entries).
    pub id: Option<String>,
    /// The parent id as written (`null` for roots).
    #[serde(default)]
    pub parent_id: Option<String>,
    /// Depth in the tree (roots are 0).
    pub depth: u32,
    /// The entry's `type`.
    pub kind: String,
    /// `message.role` for message entries.
    #[serde(default)]
    pub role: Option<String>,
    /// The entry's one description: the text of its row in `sessionTree/rows`.
    pub preview: String,
    /// The label in effect.
    #[serde(default)]
    pub label: Option<String>,
    /// The entry's `timestamp`.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// 1-based line in the file (0 when not written yet).
    pub line: u32,
    /// How many children the node has.
    pub child_count: u32,
    /// Whether the entry is on the path root → leaf.
    #[serde(default)]
    pub on_active_path: bool,
    /// Whether the entry is the current leaf.
    #[serde(default)]
    pub is_leaf: bool,
}

/// One problem found in a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionDiagnostic {
    /// What it is (`malformedLine`, `orphan`, `parentCycle`, `duplicateId`, `labelOnUnknownEntry`, …).
    pub kind: String,
    /// 1-based line, when the problem has one.
    #[serde(default)]
    pub line: Option<u32>,
    /// A sentence naming the problem.
    pub message: String,
    /// `error`, `warning` or `information`.
    pub severity: String,
}

/// What a session mutation answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutationResult {
    /// The session's revision after the change.
    pub revision: u64,
    /// The leaf after the change.
    #[serde(default)]
    pub leaf: Option<String>,
    /// The entry written, when one was.
    #[serde(default)]
    pub entry_id: Option<String>,
}

/// One session file found by `listSessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// `file://` URI of the file.
    pub uri: String,
    /// The file path.
    pub path: String,
    /// Whose session folder it was found in (`null` for extra roots).
    #[serde(default)]
    pub agent: Option<Dialect>,
    /// The file's own dialect (title slot → omp).
    pub dialect: Dialect,
    /// The header's session id.
    pub session_id: String,
    /// The header's working directory.
    pub cwd: String,
    /// The header's `parentSession`: the session file this one was forked from (`/branch`), if any.
    #[serde(default)]
    pub parent_session: Option<String>,
    /// The session name (pi `session_info`, omp title slot), drawn as rows are: control
    /// characters as their Control Pictures (a tab `␉`, a bell `␇`).
    #[serde(default)]
    pub name: Option<String>,
    /// The first user message's text, cut to one line (drawn as rows are).
    #[serde(default)]
    pub first_user_message: Option<String>,
    /// Entries in the file (header and title slot excluded).
    pub entry_count: u32,
    /// Last modification, ISO 8601.
    pub modified: String,
    /// Last modification, epoch milliseconds.
    pub modified_ms: u64,
    /// Modified within the last few seconds: an agent is probably writing to it.
    #[serde(default)]
    pub live_writer: bool,
}

/// A summary a client supplies from a hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuppliedSummary {
    /// The summary text.
    pub summary: String,
    /// Extension details stored with it.
    #[serde(default)]
    pub details: Option<Value>,
}
