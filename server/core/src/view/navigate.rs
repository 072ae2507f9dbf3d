//! What picking a row in `/tree` does, per dialect, as a pure decision plus an `apply` step:
//! picking the current leaf says "Already at this point" (omp's selector still reopens an `ask`
//! answer; omp's `navigateTree` itself still rewinds a user message); a user message or a custom
//! message moves the leaf to its parent (root → reset) and hands its text to the editor (omp: user
//! requests and every custom message but agent skill prompts); anything else moves the leaf to the
//! entry. The abandoned entries and their common ancestor are what a summary would cover; a summary
//! asked for with nothing to summarize is dropped and the move goes ahead without one.

use super::text;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::session::Session;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who asks for the move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Caller {
    /// The interactive `/tree` selector.
    #[default]
    Selector,
    /// `navigateTree` called directly (omp's rewind picker, extensions, RPC).
    Api,
}

/// Options of a navigation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NavigateOptions {
    /// The user asked for a branch summary.
    pub summarize: bool,
    /// Who asks.
    pub caller: Caller,
    /// pi only: a label to attach (to the summary entry, or to the target without one).
    pub label: Option<String>,
}

/// The decided move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The picked entry.
    pub target_id: String,
    /// The leaf before the move.
    pub old_leaf: Option<String>,
    /// The leaf after the move (`None`: reset, the next entry starts a new root).
    pub new_leaf: Option<String>,
    /// Text handed back to the editor (user and custom messages).
    pub editor_text: Option<String>,
    /// The abandoned entries a summary would cover, oldest first.
    pub abandoned: Vec<String>,
    /// The deepest entry shared by the old and new paths.
    pub common_ancestor: Option<String>,
    /// A summary is to be generated and attached at the new leaf.
    pub summarize: bool,
    /// A summary was asked for but there was nothing to summarize.
    pub summary_skipped: bool,
    /// pi: the label to attach.
    pub label: Option<String>,
}

/// The outcome of picking a row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Decision {
    /// Nothing to do: "Already at this point".
    AlreadyHere,
    /// omp's selector on an `ask` tool result: reopen the question (the tool call id) and branch a
    /// new answer as a sibling; nothing moves yet.
    ReopenAsk {
        /// The `ask` tool call whose question is re-asked.
        tool_call_id: String,
    },
    /// Move the leaf.
    Move(Plan),
}

fn is_ask_result(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("message")
        && value.pointer("/message/role").and_then(Value::as_str) == Some("toolResult")
        && value.pointer("/message/toolName").and_then(Value::as_str) == Some("ask")
}

fn is_user_message(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("message")
        && value.pointer("/message/role").and_then(Value::as_str) == Some("user")
}

/// Decides what picking `target_id` does.
pub fn decide(session: &Session, target_id: &str, options: &NavigateOptions) -> Result<Decision> {
    let entry = session
        .entry(target_id)
        .ok_or_else(|| Error::EntryNotFound(target_id.to_owned()))?;
    let value = entry.json();
    let old_leaf = session.leaf_id().map(str::to_owned);
    let at_leaf = old_leaf.as_deref() == Some(target_id);
    let dialect = session.dialect();
    match dialect {
        Dialect::Pi => {
            if at_leaf {
                return Ok(Decision::AlreadyHere);
            }
        }
        Dialect::Omp => {
            let ask = is_ask_result(&value);
            match options.caller {
                Caller::Selector => {
                    if at_leaf && !ask {
                        return Ok(Decision::AlreadyHere);
                    }
                    if ask {
                        let id = value
                            .pointer("/message/toolCallId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned();
                        return Ok(Decision::ReopenAsk { tool_call_id: id });
                    }
                }
                Caller::Api => {
                    if at_leaf && !is_user_message(&value) {
                        return Ok(Decision::AlreadyHere);
                    }
                }
            }
        }
    }
    let parent = entry.parent.id().map(str::to_owned);
    let kind = entry.kind();
    let (new_leaf, editor_text) = match dialect {
        Dialect::Pi if is_user_message(&value) || kind == "custom_message" => {
            (parent, text::editor_text(&value))
        }
        Dialect::Omp if value.as_object().is_some_and(text::omp_is_user_request) => {
            (parent, text::editor_text(&value))
        }
        Dialect::Omp
            if kind == "custom_message"
                && value.get("customType").and_then(Value::as_str) != Some("skill-prompt") =>
        {
            (parent, text::editor_text(&value))
        }
        _ => (Some(target_id.to_owned()), None),
    };
    let collection = session.collect_entries_for_branch_summary(old_leaf.as_deref(), target_id);
    let abandoned: Vec<String> = collection
        .entries
        .iter()
        .filter_map(|&i| session.entry_at(i).and_then(|e| e.id()).map(str::to_owned))
        .collect();
    let summarize = options.summarize && !collection.entries.is_empty();
    Ok(Decision::Move(Plan {
        target_id: target_id.to_owned(),
        old_leaf,
        new_leaf,
        editor_text,
        abandoned,
        common_ancestor: collection.common_ancestor,
        summarize,
        summary_skipped: options.summarize && !summarize,
        label: if dialect == Dialect::Pi {
            options.label.clone().filter(|l| !l.is_empty())
        } else {
            None
        },
    }))
}

/// A generated (or extension-supplied) branch summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// The summary text.
    pub text: String,
    /// `details` (`{readFiles, modifiedFiles}` for generated ones).
    pub details: Option<Value>,
    /// Supplied by an extension.
    pub from_extension: bool,
}

/// Applies a move: `branchWithSummary` when the plan summarizes and a summary is given, else
/// `resetLeaf` for a root move or `branch`. Returns the summary entry's id when one was written.
pub fn apply(
    session: &mut Session,
    plan: &Plan,
    summary: Option<&Summary>,
) -> Result<Option<String>> {
    let summary = summary.filter(|s| plan.summarize && !s.text.is_empty());
    let written = match summary {
        Some(s) => Some(session.branch_with_summary(
            plan.new_leaf.as_deref(),
            &s.text,
            s.details.clone(),
            Some(s.from_extension),
        )?),
        None => {
            match plan.new_leaf.as_deref() {
                None => session.reset_leaf(),
                Some(id) => session.branch(id)?,
            }
            None
        }
    };
    if let Some(label) = plan.label.as_deref() {
        let target = written.as_deref().unwrap_or(&plan.target_id).to_owned();
        session.append_label_change(&target, Some(label))?;
    }
    Ok(written)
}
