//! The error kinds: the `data.kind` string of every JSON-RPC error the server answers with, and
//! the JSON-RPC code each kind travels under.

use serde::{Deserialize, Serialize};

/// Why a request failed (sent as `error.data.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// No entry has this id.
    EntryNotFound,
    /// The session is not open (call `sessionTree/open` first).
    SessionNotFound,
    /// The file does not exist (any more).
    FileNotFound,
    /// The file does not start with a session header.
    InvalidHeader,
    /// A legacy file: run `sessiontree migrate` before writing.
    NeedsMigration,
    /// `baseRevision` is not the session's revision.
    StaleRevision,
    /// The params are malformed or inconsistent.
    InvalidParams,
    /// `/branch` needs a user message.
    NotUserMessage,
    /// Another process is mid-line; try again.
    WriterBusy,
    /// The file was truncated or replaced under the server.
    FileReplaced,
    /// A summary was asked for and no model is configured.
    NoModel,
    /// The summary provider failed: the model server answered an error status, could not be
    /// reached (refused, TLS, timeout) or sent a malformed stream, or the summary command failed.
    Provider,
    /// The operation does not exist in this session's dialect.
    Unsupported,
    /// Reading or writing failed.
    Io,
    /// The session's agent (omp or pi) is not installed or is turned off; the message names the
    /// setting.
    AgentNotInstalled,
    /// The agent could not start, exited, or failed the operation; the message carries its last
    /// stderr lines.
    AgentFailed,
    /// The agent is answering; wait for the turn to end, abort it, or queue the prompt.
    AgentBusy,
    /// An agent without the sessiontree bridge is writing this session: writing behind its back
    /// would fork its tree. Attach it (the bridge) or force the write.
    AgentRunning,
    /// The agent in the user's terminal has not let the editor move its leaf yet (its user runs
    /// `/sessiontree` there once).
    AgentNotArmed,
    /// The session's workspace is not a git work tree (rewind points need one).
    NotARepository,
    /// Neither the entry nor any entry above it has a rewind point.
    NoRewindPoint,
    /// The rewind point's snapshot was pruned.
    SnapshotPruned,
    /// No restore was made in the workspace.
    NothingToUndo,
    /// A restore failed part way and the files were put back as they were.
    RestoreRolledBack,
    /// A restore failed part way and putting the files back failed too (the undo point is kept).
    RestoreBroken,
    /// A git command failed or git is missing.
    GitFailed,
    /// A bug or an unexpected state in the server.
    Internal,
    /// A message that is not JSON (or not UTF-8, or not in a readable frame): answered with
    /// `id: null`, and the server reads on.
    ParseError,
    /// A JSON text that is not a JSON-RPC request, notification or response (a batch, a bare
    /// value, no `"jsonrpc": "2.0"`, an id that is not an integer or a string): answered with
    /// `id: null`, and the server reads on.
    InvalidRequest,
}

impl ErrorKind {
    /// Every kind, for docs and tests.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::EntryNotFound,
        ErrorKind::SessionNotFound,
        ErrorKind::FileNotFound,
        ErrorKind::InvalidHeader,
        ErrorKind::NeedsMigration,
        ErrorKind::StaleRevision,
        ErrorKind::InvalidParams,
        ErrorKind::NotUserMessage,
        ErrorKind::WriterBusy,
        ErrorKind::FileReplaced,
        ErrorKind::NoModel,
        ErrorKind::Provider,
        ErrorKind::Unsupported,
        ErrorKind::Io,
        ErrorKind::AgentNotInstalled,
        ErrorKind::AgentFailed,
        ErrorKind::AgentBusy,
        ErrorKind::AgentRunning,
        ErrorKind::AgentNotArmed,
        ErrorKind::NotARepository,
        ErrorKind::NoRewindPoint,
        ErrorKind::SnapshotPruned,
        ErrorKind::NothingToUndo,
        ErrorKind::RestoreRolledBack,
        ErrorKind::RestoreBroken,
        ErrorKind::GitFailed,
        ErrorKind::Internal,
        ErrorKind::ParseError,
        ErrorKind::InvalidRequest,
    ];

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::EntryNotFound => "entryNotFound",
            ErrorKind::SessionNotFound => "sessionNotFound",
            ErrorKind::FileNotFound => "fileNotFound",
            ErrorKind::InvalidHeader => "invalidHeader",
            ErrorKind::NeedsMigration => "needsMigration",
            ErrorKind::StaleRevision => "staleRevision",
            ErrorKind::InvalidParams => "invalidParams",
            ErrorKind::NotUserMessage => "notUserMessage",
            ErrorKind::WriterBusy => "writerBusy",
            ErrorKind::FileReplaced => "fileReplaced",
            ErrorKind::NoModel => "noModel",
            ErrorKind::Provider => "provider",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Io => "io",
            ErrorKind::AgentNotInstalled => "agentNotInstalled",
            ErrorKind::AgentFailed => "agentFailed",
            ErrorKind::AgentBusy => "agentBusy",
            ErrorKind::AgentRunning => "agentRunning",
            ErrorKind::AgentNotArmed => "agentNotArmed",
            ErrorKind::NotARepository => "notARepository",
            ErrorKind::NoRewindPoint => "noRewindPoint",
            ErrorKind::SnapshotPruned => "snapshotPruned",
            ErrorKind::NothingToUndo => "nothingToUndo",
            ErrorKind::RestoreRolledBack => "restoreRolledBack",
            ErrorKind::RestoreBroken => "restoreBroken",
            ErrorKind::GitFailed => "gitFailed",
            ErrorKind::Internal => "internal",
            ErrorKind::ParseError => "parseError",
            ErrorKind::InvalidRequest => "invalidRequest",
        }
    }

    /// Reads a wire string (the engine's `Error::kind()` strings included; its `invalidInput`
    /// is our `invalidParams`).
    pub fn parse(s: &str) -> Option<ErrorKind> {
        if s == "invalidInput" {
            return Some(ErrorKind::InvalidParams);
        }
        ErrorKind::ALL.iter().copied().find(|k| k.as_str() == s)
    }

    /// The JSON-RPC error code: `-32602` (InvalidParams) for requests that name something wrong,
    /// `-32801` (ContentModified) for a stale revision, `-32603` (InternalError) for bugs,
    /// JSON-RPC's `-32700` (ParseError) and `-32600` (InvalidRequest) for messages that cannot be
    /// read, and `-32803` (RequestFailed) for everything the request was right to ask but could
    /// not get.
    pub fn code(self) -> i64 {
        match self {
            ErrorKind::EntryNotFound
            | ErrorKind::SessionNotFound
            | ErrorKind::InvalidParams
            | ErrorKind::NotUserMessage => -32602,
            ErrorKind::StaleRevision => -32801,
            ErrorKind::Internal => -32603,
            ErrorKind::ParseError => -32700,
            ErrorKind::InvalidRequest => -32600,
            _ => -32803,
        }
    }
}

/// The `data` member of a protocol error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorData {
    /// What went wrong.
    pub kind: ErrorKind,
    /// The session's revision, when the error is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_match_serde() {
        for kind in ErrorKind::ALL {
            assert_eq!(
                serde_json::to_value(kind).ok(),
                Some(serde_json::Value::from(kind.as_str()))
            );
            assert_eq!(ErrorKind::parse(kind.as_str()), Some(*kind));
        }
    }
}
