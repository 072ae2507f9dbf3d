//! What a branch summary entry stores, as the session's agent stores it: the agent's preamble,
//! the model's text, the files in the agent's format, and `details: {readFiles, modifiedFiles}`.
//!
//! - pi (0.73.1): [`PI_PREAMBLE`], the text as it came, then `\n\n<read-files>\n…\n</read-files>`
//!   and `\n\n<modified-files>\n…\n</modified-files>` for the lists that are not empty.
//! - omp (18.2.3): [`OMP_PREAMBLE`] (its prompt file ends in a newline, which omp's prompt
//!   formatter drops, so the text follows the colon directly), the text; then every
//!   `<files>`/`<read-files>`/`<modified-files>` block is cut out of that (with the white space
//!   after it), the end trimmed, and `\n\n` and omp's `<files>` tree appended when there are
//!   files ([`super::omp_files`]).
//!
//! The preambles are written here and nowhere else; `tests/agent_summaries.rs` checks them and
//! whole stored summaries against the installed agents.

use super::files::FileLists;
use super::omp_files::files_block;
use super::SummaryRequest;
use crate::dialect::Dialect;
use crate::js;
use serde_json::{json, Value};

/// pi's preamble (`BRANCH_SUMMARY_PREAMBLE` in its `branch-summarization.js`).
pub const PI_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// omp's preamble (`prompts/branch-summary-preamble.md` of `@oh-my-pi/pi-agent-core`, as its
/// prompt renderer gives it: without the file's last newline).
pub const OMP_PREAMBLE: &str =
    "User explored another conversation branch, then returned here.\nExploration summary:";

/// The preamble a stored summary starts with in `dialect`'s files.
pub fn preamble(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Pi => PI_PREAMBLE,
        Dialect::Omp => OMP_PREAMBLE,
    }
}

/// A finished summary, ready for `branch_with_summary`.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The stored text.
    pub text: String,
    /// `{readFiles, modifiedFiles}`.
    pub details: Value,
}

/// The stored summary for a model's answer (its text blocks joined by `\n`, as the agents join
/// them).
pub fn finish(request: &SummaryRequest, model_text: &str) -> Finished {
    let dialect = request.dialect;
    let lists = request.file_ops.lists(dialect);
    let text = match dialect {
        Dialect::Pi => format!("{PI_PREAMBLE}{model_text}{}", pi_file_lists(&lists)),
        Dialect::Omp => {
            let base = strip_file_blocks(&format!("{OMP_PREAMBLE}{model_text}"));
            let files = files_block(&lists, &request.file_ops.read);
            match (base.is_empty(), files.is_empty()) {
                (_, true) => base,
                (true, false) => files,
                (false, false) => format!("{base}\n\n{files}"),
            }
        }
    };
    Finished {
        text,
        details: json!({"readFiles": lists.read, "modifiedFiles": lists.modified}),
    }
}

/// pi's lists, each in its tag, led by a blank line; nothing when both are empty.
fn pi_file_lists(lists: &FileLists) -> String {
    let mut out = String::new();
    for (tag, files) in [
        ("read-files", &lists.read),
        ("modified-files", &lists.modified),
    ] {
        if !files.is_empty() {
            out.push_str(&format!("\n\n<{tag}>\n{}\n</{tag}>", files.join("\n")));
        }
    }
    out
}

/// omp's `stripFileOperationTags`: each `<files>…</files>` (to the first closing tag) with the
/// white space after it cut out, then the same for `<read-files>` and `<modified-files>`, then
/// the end trimmed.
fn strip_file_blocks(text: &str) -> String {
    let mut text = text.to_owned();
    for tag in ["files", "read-files", "modified-files"] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        let mut from = 0;
        while let Some(start) = text[from..].find(&open).map(|at| from + at) {
            let Some(end) = text[start + open.len()..]
                .find(&close)
                .map(|at| start + open.len() + at + close.len())
            else {
                break;
            };
            let space = text[end..].len() - js::trim_start(&text[end..]).len();
            text.replace_range(start..end + space, "");
            from = start;
        }
    }
    js::trim_end(&text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn omp_cuts_file_blocks_out_of_the_text() {
        assert_eq!(
            strip_file_blocks("a <files>x</files>  \n b<read-files>\n</read-files><files>y"),
            "a b<files>y"
        );
        assert_eq!(strip_file_blocks("x \u{3000}\n"), "x");
        assert_eq!(
            strip_file_blocks("<modified-files>a</modified-files>\u{feff}<files>"),
            "<files>"
        );
    }
}
