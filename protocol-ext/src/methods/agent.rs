//! The live agent: the conversation as display blocks, prompting the real omp or pi agent (started
//! by the server or running in the user's terminal with the sessiontree bridge), its streamed
//! answer, its state, its dialogs, and installing the bridge.

use crate::{Direction, Notification, Request};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------- transcript

request!(
    /// The conversation along a path as display blocks, rendered once by the server for every
    /// editor's chat view.
    Transcript, "sessionTree/transcript", ClientToServer, TranscriptParams, TranscriptResult
);

/// Params of [`Transcript`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptParams {
    /// The session.
    pub uri: String,
    /// The path's last entry (default: the leaf).
    #[serde(default)]
    pub leaf: Option<String>,
    /// At most this many messages, the newest (default 500).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of [`Transcript`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptResult {
    /// The session's revision.
    pub revision: u64,
    /// The path's last entry.
    #[serde(default)]
    pub leaf: Option<String>,
    /// The messages, oldest first.
    pub items: Vec<TranscriptItem>,
    /// Messages on the path before the first one given (the limit cut them).
    #[serde(default)]
    pub omitted: u32,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptItem {
    /// The entry it comes from (`null` for a message still streaming).
    #[serde(default)]
    pub entry_id: Option<String>,
    /// `user`, `assistant`, `toolResult`, `bashExecution`, `custom`, `branchSummary` or
    /// `compactionSummary`.
    pub role: String,
    /// What the role alone does not say: a custom message's type, a tool result's tool.
    #[serde(default)]
    pub detail: Option<String>,
    /// What it says, in order.
    pub blocks: Vec<DisplayBlock>,
}

/// One piece of a message, as both editors draw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DisplayBlock {
    /// Text shown as written.
    Text {
        /// The text.
        text: String,
    },
    /// Markdown.
    Markdown {
        /// The markdown.
        text: String,
    },
    /// The model's thinking (drawn folded).
    Thinking {
        /// The thinking.
        text: String,
    },
    /// A tool call (drawn as its one-line summary, expandable to its arguments).
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// One line, as the agents' rows name the call (`write: hello.txt`).
        summary: String,
        /// The arguments, as pretty JSON.
        arguments: String,
    },
    /// A tool's result (drawn as its one-line summary, expandable to the whole text).
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The first line and how many more there are.
        summary: String,
        /// The whole text (cut at 64 KiB with a note).
        text: String,
        /// Whether the tool failed.
        #[serde(default)]
        is_error: bool,
    },
    /// An image (its data stays in the session).
    Image {
        /// Its type.
        mime_type: String,
    },
    /// A command the user ran, and what it printed.
    Command {
        /// The command.
        command: String,
        /// What it printed.
        output: String,
        /// Its exit code.
        #[serde(default)]
        exit_code: Option<i64>,
    },
    /// Something about the message rather than in it: an error, an abort.
    Notice {
        /// What happened.
        text: String,
        /// Whether it is an error.
        #[serde(default)]
        is_error: bool,
    },
}

// ---------------------------------------------------------------- the agent's state

/// Which agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentKind {
    /// oh-my-pi (`omp`).
    Omp,
    /// pi.
    Pi,
}

/// Where the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentSource {
    /// The server started it (RPC mode) for this session.
    Spawned,
    /// The user runs it in a terminal, with the bridge.
    Terminal,
}

/// What the agent is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AgentState {
    /// No agent runs for this session (one is started on the first prompt).
    None,
    /// Starting.
    Starting,
    /// Waiting for a prompt.
    Idle,
    /// Answering.
    Running,
    /// It exited; `message` and `stderrTail` say why. The next prompt starts a new one.
    Exited,
    /// It cannot run: not installed, or turned off; `message` says which setting to set.
    Unavailable,
}

/// The agent of a session, as the chat shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    /// The session.
    pub uri: String,
    /// The session's agent (its dialect's).
    pub agent: AgentKind,
    /// What it is doing.
    pub state: AgentState,
    /// Where it runs (`null` when none does).
    #[serde(default)]
    pub source: Option<AgentSource>,
    /// Its process.
    #[serde(default)]
    pub pid: Option<u32>,
    /// Its model (`provider/id`).
    #[serde(default)]
    pub model: Option<String>,
    /// A terminal agent let the editor move its leaf and /branch (its user ran `/sessiontree`).
    #[serde(default)]
    pub armed: bool,
    /// The executable the server starts.
    #[serde(default)]
    pub executable: Option<String>,
    /// Why it is unavailable or exited.
    #[serde(default)]
    pub message: Option<String>,
    /// The last lines it wrote to stderr (when it exited).
    #[serde(default)]
    pub stderr_tail: Vec<String>,
}

request!(
    /// The agent's state; `start: true` starts it (as the first prompt would).
    GetAgent, "sessionTree/agent", ClientToServer, AgentParams, AgentStatus
);

/// Params of [`GetAgent`] and [`StopAgent`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentParams {
    /// The session.
    pub uri: String,
    /// Start the agent when none runs.
    #[serde(default)]
    pub start: bool,
}

request!(
    /// Stops the agent the server started for the session (a terminal agent is only let go).
    StopAgent, "sessionTree/stopAgent", ClientToServer, AgentParams, AgentStatus
);

// ---------------------------------------------------------------- prompt / abort

request!(
    /// Sends the chat text to the session's agent, which answers from the session's leaf (the
    /// agent's leaf is moved to the editor's first). Answered once the agent accepted the prompt;
    /// the answer streams as `sessionTree/agentEvent` and lands in the tree as `didChange`.
    Prompt, "sessionTree/prompt", ClientToServer, PromptParams, PromptResult
);

/// How a prompt sent while the agent is answering is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeliverAs {
    /// After the current tool calls, before the next model call.
    Steer,
    /// When the agent is done.
    FollowUp,
}

/// Params of [`Prompt`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    /// The session.
    pub uri: String,
    /// The prompt.
    pub text: String,
    /// While the agent answers: queue the prompt this way (without it, `agentBusy`).
    #[serde(default)]
    pub deliver_as: Option<DeliverAs>,
    /// Refuse with `staleRevision` unless the session is at this revision.
    #[serde(default)]
    pub base_revision: Option<u64>,
}

/// Result of [`Prompt`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResult {
    /// The session's revision when the agent took the prompt.
    pub revision: u64,
    /// The turn's number: the `sessionTree/agentEvent`s it causes carry it.
    pub turn: u64,
    /// The agent's state after.
    pub agent: AgentStatus,
}

request!(
    /// Stops the agent's current answer (the agent keeps what it wrote, as its own Escape does).
    Abort, "sessionTree/abort", ClientToServer, AbortParams, AbortResult
);

/// Params of [`Abort`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortParams {
    /// The session.
    pub uri: String,
}

/// Result of [`Abort`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AbortResult {
    /// Whether the agent was answering.
    #[serde(default)]
    pub aborted: bool,
}

// ---------------------------------------------------------------- the stream

notification!(
    /// What the agent does, as it happens: its state, the answer's text as it streams, the
    /// finished messages as display blocks, tool calls, errors, its exit.
    AgentEvent, "sessionTree/agentEvent", AgentEventParams
);

/// Params of [`AgentEvent`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentEventParams {
    /// The session.
    pub uri: String,
    /// Numbers the session's events from 1, in the order they happened.
    pub seq: u64,
    /// The prompt's turn (`PromptResult.turn`); `null` for what no prompt of this client caused
    /// (a terminal agent's own turns, state changes).
    #[serde(default)]
    pub turn: Option<u64>,
    /// What happened.
    pub event: AgentEventBody,
}

/// Which part of a message a delta extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DeltaKind {
    /// The answer's text (markdown).
    Text,
    /// The model's thinking.
    Thinking,
}

/// A notice's weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NoticeLevel {
    /// For information.
    Info,
    /// Worth attention.
    Warning,
    /// Something failed.
    Error,
}

/// What an [`AgentEvent`] says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum AgentEventBody {
    /// The agent's state changed.
    Status {
        /// The state now.
        status: AgentStatus,
    },
    /// The agent took a prompt and starts answering.
    AgentStart,
    /// The agent is done with the prompt (and anything it queued).
    AgentEnd,
    /// A message starts (`message` numbers the messages of the session's stream).
    MessageStart {
        /// The message's number.
        message: u64,
        /// Its role.
        role: String,
    },
    /// More of a streaming message: append `text` to its block `block`.
    Delta {
        /// The message's number.
        message: u64,
        /// The block's index in the message.
        block: u32,
        /// Text or thinking.
        delta: DeltaKind,
        /// The text to append.
        text: String,
    },
    /// A message is complete: its display blocks replace what streamed. It reaches the session
    /// file at the same time (`didChange` follows).
    MessageEnd {
        /// The message's number.
        message: u64,
        /// The whole message.
        item: TranscriptItem,
    },
    /// A tool starts running.
    ToolStart {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        name: String,
    },
    /// A tool's output so far (the whole of it, not the increment).
    ToolUpdate {
        /// The call's id.
        tool_call_id: String,
        /// Its output so far.
        text: String,
    },
    /// A tool finished.
    ToolEnd {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        name: String,
        /// Whether it failed.
        #[serde(default)]
        is_error: bool,
    },
    /// The agent's leaf moved (its own `/tree`, or ours through it).
    Leaf {
        /// The leaf now.
        #[serde(default)]
        leaf: Option<String>,
        /// The branch summary written with the move.
        #[serde(default)]
        summary_entry_id: Option<String>,
    },
    /// Something the agent wants the user to know.
    Notice {
        /// Its weight.
        level: NoticeLevel,
        /// What it says.
        text: String,
    },
    /// The answer failed (the model's error, a refused request).
    Error {
        /// What failed.
        message: String,
    },
    /// The agent's process ended.
    Exited {
        /// Its exit code.
        #[serde(default)]
        code: Option<i32>,
        /// Its last stderr lines.
        #[serde(default)]
        stderr_tail: Vec<String>,
    },
}

// ---------------------------------------------------------------- dialogs

request!(
    /// A dialog the agent opened (an extension asking the user). Sent only to clients that
    /// declared `experimental.sessionTree.agentDialogs`; others' agents get "cancelled" at once,
    /// so an agent never waits on a dialog nobody sees.
    AgentDialog, "sessionTree/agentDialog", ServerToClient, AgentDialogParams, AgentDialogResult
);

/// The kind of an agent's dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum DialogKind {
    /// Pick one of `options`.
    Select,
    /// Yes or no.
    Confirm,
    /// One line of text.
    Input,
    /// Several lines of text (`prefill`).
    Editor,
}

/// Params of [`AgentDialog`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDialogParams {
    /// The session.
    pub uri: String,
    /// The kind.
    pub dialog: DialogKind,
    /// Its title.
    pub title: String,
    /// Its message (confirm).
    #[serde(default)]
    pub message: Option<String>,
    /// The choices (select).
    #[serde(default)]
    pub options: Vec<String>,
    /// A placeholder (input).
    #[serde(default)]
    pub placeholder: Option<String>,
    /// The text to start from (editor).
    #[serde(default)]
    pub prefill: Option<String>,
    /// The agent gives up after this many milliseconds.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Result of [`AgentDialog`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentDialogResult {
    /// The choice or the text (select, input, editor).
    #[serde(default)]
    pub value: Option<String>,
    /// The answer (confirm).
    #[serde(default)]
    pub confirmed: bool,
    /// The user dismissed it.
    #[serde(default)]
    pub cancelled: bool,
}

// ---------------------------------------------------------------- the bridge

request!(
    /// Installs the sessiontree bridge into the agent's extensions folder, so an agent the user
    /// starts in a terminal can be driven from the editor (a one-time set-up).
    InstallBridge, "sessionTree/installBridge", ClientToServer, InstallBridgeParams, InstallBridgeResult
);

/// Params of [`InstallBridge`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallBridgeParams {
    /// Which agent's folder.
    pub agent: AgentKind,
}

/// Result of [`InstallBridge`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallBridgeResult {
    /// The file written.
    pub path: String,
    /// Whether it was written (false: that exact file was there already).
    #[serde(default)]
    pub written: bool,
}
