//! The one place engine values become protocol and LSP values: dialects, diagnostics, tree nodes,
//! URIs. Everything the engine returns crosses into the wire format here.

use crate::errors::{ApiError, ApiResult};
use sessiontree_core::diagnostics::{Diagnostic, Severity};
use sessiontree_core::{Entry, Session};
use sessiontree_protocol as proto;
use std::path::{Path, PathBuf};
use tower_lsp_server::ls_types::{self as lsp, Uri};

/// Engine dialect → protocol dialect.
pub fn dialect(d: sessiontree_core::Dialect) -> proto::Dialect {
    match d {
        sessiontree_core::Dialect::Omp => proto::Dialect::Omp,
        sessiontree_core::Dialect::Pi => proto::Dialect::Pi,
    }
}

/// A `file://` URI string → a path.
pub fn path_of(uri: &str) -> ApiResult<PathBuf> {
    let parsed: Uri = uri
        .parse()
        .map_err(|_| ApiError::invalid_params(format!("`{uri}` is not a URI")))?;
    parsed
        .to_file_path()
        .map(|p| p.into_owned())
        .ok_or_else(|| ApiError::invalid_params(format!("`{uri}` is not a file:// URI")))
}

/// A path → its `file://` URI string (lossy for paths no URI can hold).
pub fn uri_of(path: &Path) -> String {
    Uri::from_file_path(path)
        .map(|u| u.as_str().to_owned())
        .unwrap_or_else(|| format!("file://{}", path.display()))
}

/// A path → an LSP URI.
pub fn lsp_uri(path: &Path) -> Option<Uri> {
    Uri::from_file_path(path)
}

fn severity_str(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information => "information",
    }
}

/// Engine diagnostic → protocol diagnostic.
pub fn session_diagnostic(d: &Diagnostic) -> proto::SessionDiagnostic {
    let kind = serde_json::to_value(d.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    proto::SessionDiagnostic {
        kind,
        line: d.line.and_then(|l| u32::try_from(l).ok()),
        message: d.message.clone(),
        severity: severity_str(d.severity).to_owned(),
    }
}

/// Engine diagnostic → LSP diagnostic on its line (line 1 when it has none).
pub fn lsp_diagnostic(d: &Diagnostic, line_len: impl Fn(usize) -> u32) -> lsp::Diagnostic {
    let line = d.line.unwrap_or(1).max(1);
    let l = u32::try_from(line - 1).unwrap_or(0);
    let kind = session_diagnostic(d).kind;
    lsp::Diagnostic {
        range: lsp::Range::new(
            lsp::Position::new(l, 0),
            lsp::Position::new(l, line_len(line)),
        ),
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Information => lsp::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lsp::NumberOrString::String(kind)),
        source: Some("sessiontree".to_owned()),
        message: d.message.clone(),
        ..Default::default()
    }
}

/// The open answer for a session.
pub fn open_result(uri: &str, session: &Session, revision: u64) -> proto::OpenResult {
    proto::OpenResult {
        uri: uri.to_owned(),
        session_id: session.session_id().to_owned(),
        dialect: dialect(session.dialect()),
        name: session.session_name().map(drawable),
        cwd: session.cwd().to_owned(),
        leaf: session.leaf_id().map(str::to_owned),
        revision,
        entry_count: u32::try_from(session.entries().len()).unwrap_or(u32::MAX),
        diagnostics: session
            .diagnostics()
            .iter()
            .map(session_diagnostic)
            .collect(),
    }
}

/// The engine's listing of a session file → the protocol's session info. Names and messages are
/// drawn as rows are; `agent` is whose folder the file was found in, `live` whether an agent is
/// probably writing it.
pub fn session_info(
    uri: String,
    path: &Path,
    agent: Option<proto::Dialect>,
    listing: &sessiontree_core::listing::Listing,
    live: bool,
) -> proto::SessionInfo {
    proto::SessionInfo {
        uri,
        path: path.to_string_lossy().into_owned(),
        agent,
        dialect: dialect(listing.dialect),
        session_id: listing.session_id.clone(),
        cwd: listing.cwd.clone(),
        parent_session: listing.parent_session.clone(),
        name: listing.name.as_deref().map(drawable),
        first_user_message: listing.first_user_message.as_deref().map(drawable),
        entry_count: u32_of(listing.entry_count),
        modified: sessiontree_core::time::format_iso(
            i64::try_from(listing.modified_ms).unwrap_or(0),
        ),
        modified_ms: listing.modified_ms,
        live_writer: live,
    }
}

/// The ids of entries at the given indices (id-less ones skipped).
pub fn ids_of(session: &Session, indices: impl IntoIterator<Item = usize>) -> Vec<String> {
    indices
        .into_iter()
        .filter_map(|i| session.entry_at(i).and_then(Entry::id).map(str::to_owned))
        .collect()
}

/// Text a panel can draw: every C0 control character and DEL becomes its visible Control
/// Pictures symbol (ESC → `␛`), one character for one, so match ranges stay valid and no
/// terminal escape sequence reaches a terminal panel (Neovim) or a tree view.
pub fn drawable(text: &str) -> String {
    if !text.chars().any(is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| match c {
            '\u{7f}' => '\u{2421}',
            c if c < ' ' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            c => c,
        })
        .collect()
}

fn is_control(c: char) -> bool {
    c < ' ' || c == '\u{7f}'
}

/// The one line a surface shows for an entry (outline, workspace symbols): the engine's one
/// description of it (its row text, [`sessiontree_core::view::TreeModel::entry_text`]) after its
/// label in brackets, as the agents draw a labeled row; drawable.
pub fn entry_name(text: &str, label: Option<&str>) -> String {
    match label.filter(|l| !l.is_empty()) {
        Some(label) => drawable(&format!("[{label}] {text}")),
        None => drawable(text),
    }
}

/// How many characters of an entry's name a workspace symbol carries: enough to tell entries
/// apart in a pick list, and a bound on what every query scores (a tool result's row text can run
/// to thousands of characters).
pub const SYMBOL_NAME_CHARS: usize = 200;

/// A workspace symbol's name: [`entry_name`], its first [`SYMBOL_NAME_CHARS`] characters, with `…`
/// when cut.
pub fn symbol_name(text: &str, label: Option<&str>) -> String {
    let name = entry_name(text, label);
    match name.char_indices().nth(SYMBOL_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name,
    }
}

/// The LSP symbol kind of an entry, by its type and (for messages) its role.
pub fn symbol_kind(kind: &str, role: Option<&str>) -> lsp::SymbolKind {
    match (kind, role) {
        ("message", Some("user")) => lsp::SymbolKind::EVENT,
        ("message", Some("assistant")) => lsp::SymbolKind::METHOD,
        ("message", Some("toolResult")) => lsp::SymbolKind::FUNCTION,
        ("message", _) => lsp::SymbolKind::OBJECT,
        ("branch_summary", _) | ("compaction", _) => lsp::SymbolKind::NAMESPACE,
        ("label", _) => lsp::SymbolKind::KEY,
        ("custom_message", _) => lsp::SymbolKind::STRUCT,
        _ => lsp::SymbolKind::PROPERTY,
    }
}

/// Saturating `usize` → `u32`.
pub fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A message of the engine's transcript → the protocol's transcript item.
pub fn transcript_item(item: sessiontree_core::transcript::Item) -> proto::TranscriptItem {
    use sessiontree_core::transcript::Block;
    let blocks = item
        .blocks
        .into_iter()
        .map(|block| match block {
            Block::Text { text } => proto::DisplayBlock::Text { text },
            Block::Markdown { text } => proto::DisplayBlock::Markdown { text },
            Block::Thinking { text } => proto::DisplayBlock::Thinking { text },
            Block::ToolCall {
                id,
                name,
                summary,
                arguments,
            } => proto::DisplayBlock::ToolCall {
                id,
                name,
                summary,
                arguments,
            },
            Block::ToolResult {
                id,
                name,
                summary,
                text,
                is_error,
            } => proto::DisplayBlock::ToolResult {
                id,
                name,
                summary,
                text,
                is_error,
            },
            Block::Image { mime_type } => proto::DisplayBlock::Image { mime_type },
            Block::Command {
                command,
                output,
                exit_code,
            } => proto::DisplayBlock::Command {
                command,
                output,
                exit_code,
            },
            Block::Notice { text, is_error } => proto::DisplayBlock::Notice { text, is_error },
        })
        .collect();
    proto::TranscriptItem {
        entry_id: item.entry_id,
        role: item.role.as_str().to_owned(),
        detail: item.detail,
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_name_is_the_entry_name_cut_at_its_bound() {
        assert_eq!(symbol_name("user: hi", Some("done")), "[done] user: hi");
        let long = format!("assistant: {}", "é".repeat(500));
        let cut = symbol_name(&long, None);
        assert_eq!(cut.chars().count(), SYMBOL_NAME_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert!(long.starts_with(cut.trim_end_matches('…')));
        let exact: String = "x".repeat(SYMBOL_NAME_CHARS);
        assert_eq!(symbol_name(&exact, None), exact);
        // Control characters are drawn before the cut counts them.
        assert_eq!(symbol_name("a\tb", None), "a\u{2409}b");
    }
}
