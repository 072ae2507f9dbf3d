//! Problems found in a session file. The engine never drops data or stops on them: it records a
//! diagnostic, answers as well as it can, and leaves the file as it is.

use serde::Serialize;

/// What kind of problem a diagnostic reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticKind {
    /// A line that is not JSON.
    MalformedLine,
    /// A line that is the JSON value `null`.
    NullLine,
    /// A line with bytes that are not UTF-8.
    InvalidUtf8,
    /// The first value is not a session header.
    InvalidHeader,
    /// The file uses an older format version (migrated in memory only).
    LegacyVersion,
    /// Two entries share an id (the later one wins, as in the agents).
    DuplicateId,
    /// An entry whose parent id names no entry (shown as an extra root).
    Orphan,
    /// A chain of parent ids that loops.
    ParentCycle,
    /// A label whose target id names no entry.
    LabelOnUnknownEntry,
    /// A line that parses as JSON but is not an object.
    NotAnObject,
    /// An entry without a string id.
    MissingId,
    /// An assistant message whose `usage` lacks `cost` (omp fails to load such a file).
    UsageWithoutCost,
    /// A second session header further down the file.
    ExtraHeader,
}

/// Severity, in LSP terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Severity {
    /// The file cannot be used as the agents intend.
    Error,
    /// Data the agents would lose, skip or mishandle.
    Warning,
    /// Worth knowing.
    Information,
}

/// One problem, located by its 1-based physical line when it has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// What it is.
    pub kind: DiagnosticKind,
    /// Where (1-based line number of the file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// A sentence naming the problem.
    pub message: String,
    /// How bad it is.
    pub severity: Severity,
}

impl Diagnostic {
    /// A diagnostic with the kind's usual severity.
    pub fn new(kind: DiagnosticKind, line: Option<usize>, message: impl Into<String>) -> Self {
        let severity = match kind {
            DiagnosticKind::InvalidHeader
            | DiagnosticKind::ParentCycle
            | DiagnosticKind::NullLine => Severity::Error,
            DiagnosticKind::LegacyVersion => Severity::Information,
            _ => Severity::Warning,
        };
        Diagnostic {
            kind,
            line,
            message: message.into(),
            severity,
        }
    }
}
