//! What picking a row in `/tree` does, per dialect, as a pure decision plus an `apply` step:
//! picking the current leaf says "Already at this point" (omp's selector still reopens an `ask`
//! answer; omp's `navigateTree` itself still rewinds a user message); a user message or a custom
//! message moves the leaf to its parent (root → reset) and hands its text to the editor (omp: user
//! requests and every custom message but agent skill prompts); anything else moves the leaf to the
//! entry. The abandoned entries and their common ancestor are what a summary would cover; a summary
//! asked for with nothing to summarize is dropped and the move goes ahead without one.

use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::facts;
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

/// omp's draft for a user-invoked skill prompt (`titleTextFromSkillPrompt`): the queued chip text,
/// else the prompt as typed, else `/skill:name args`; `None` to fall back to the text content.
fn skill_prompt_draft(value: &Value) -> Option<String> {
    let (custom_type, attribution, details) = match value.get("type").and_then(Value::as_str) {
        Some("message") => {
            let msg = value.get("message")?;
            if msg.get("role").and_then(Value::as_str) != Some("custom") {
                return None;
            }
            (
                msg.get("customType"),
                msg.get("attribution"),
                msg.get("details"),
            )
        }
        Some("custom_message") => (
            value.get("customType"),
            value.get("attribution"),
            value.get("details"),
        ),
        _ => return None,
    };
    if custom_type.and_then(Value::as_str) != Some("skill-prompt")
        || attribution.and_then(Value::as_str) != Some("user")
    {
        return None;
    }
    let field = |k: &str| {
        details
            .and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .map(|s| crate::js::trim(s).to_owned())
    };
    let text = if let Some(chip) = field("__queueChipText").filter(|c| !c.is_empty()) {
        chip
    } else if let Some(prompt) = field("prompt").filter(|p| !p.is_empty()) {
        prompt
    } else {
        match (field("name").filter(|n| !n.is_empty()), field("args")) {
            (Some(name), Some(args)) if !args.is_empty() => format!("/skill:{name} {args}"),
            (Some(name), _) => format!("/skill:{name}"),
            (None, args) => args.unwrap_or_default(),
        }
    };
    (!text.is_empty()).then_some(text)
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
    // A rewinding target without a `parentId` at all: the agents call `branch(undefined)`, which throws.
    let rewinds = is_user_message(&value)
        || kind == "custom_message"
        || (dialect == Dialect::Omp && value.as_object().is_some_and(facts::omp_is_user_request));
    if rewinds && entry.parent == crate::entry::Parent::Missing {
        return Err(Error::EntryNotFound("undefined".to_owned()));
    }
    let (new_leaf, editor_text) = match dialect {
        Dialect::Pi if is_user_message(&value) || kind == "custom_message" => {
            (parent, facts::editor_text(&value))
        }
        Dialect::Omp if value.as_object().is_some_and(facts::omp_is_user_request) => (
            parent,
            skill_prompt_draft(&value).or_else(|| facts::editor_text(&value)),
        ),
        Dialect::Omp
            if kind == "custom_message"
                && value.get("customType").and_then(Value::as_str) != Some("skill-prompt") =>
        {
            (parent, facts::editor_text(&value))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::testkit::Kit;
    use serde_json::json;

    fn opts() -> NavigateOptions {
        NavigateOptions::default()
    }

    fn plan(k: &Kit, name: &str, options: &NavigateOptions) -> Plan {
        match decide(&k.session, &k.id(name), options) {
            Ok(Decision::Move(plan)) => plan,
            other => panic!("{name}: expected a move, got {other:?}"),
        }
    }

    /// A session with one entry of every kind after a root user message, ending in a leaf.
    fn every_kind(dialect: Dialect) -> Kit {
        let mut k = Kit::new(dialect);
        k.user("root", "first question")
            .assistant("answer", "first answer");
        k.tool(
            "call",
            "result",
            "read",
            json!({"path": "/tmp/refgen-home/project/a.txt"}),
        );
        k.message("bash", json!({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": false, "truncated": false, "timestamp": 1}));
        k.custom_message("custom_msg", "ext-a", "note for the editor", None);
        k.compaction("compaction", "answer");
        k.model("model").thinking("thinking").custom("custom");
        k.label("label", "answer", "important");
        match dialect {
            Dialect::Pi => {
                k.entry("info", "session_info", json!({"name": "A name"}));
            }
            Dialect::Omp => {
                k.entry(
                    "info",
                    "title_change",
                    json!({"title": "A name", "source": "user"}),
                );
                k.entry("tier", "service_tier_change", json!({"serviceTier": null}));
                k.entry("mode", "mode_change", json!({"mode": "plan"}));
                k.entry("ttsr", "ttsr_injection", json!({"injectedRules": ["r"]}));
                k.entry("reset", "reset_boundary", json!({}));
                k.entry("usage", "model_usage", json!({"purpose": "title", "api": "x", "provider": "p", "model": "m", "usage": {}, "stopReason": "stop"}));
                k.entry(
                    "pin",
                    "credential_pin",
                    json!({"provider": "p", "hash": "h"}),
                );
                k.entry(
                    "init",
                    "session_init",
                    json!({"systemPrompt": "s", "task": "t", "tools": []}),
                );
            }
        }
        k.summary_at("summary", "answer");
        k.user("second", "second question")
            .assistant("leaf", "second answer");
        k
    }

    #[test]
    fn already_at_this_point_on_the_leaf() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = every_kind(dialect);
            assert_eq!(
                decide(&k.session, &k.id("leaf"), &opts()).ok(),
                Some(Decision::AlreadyHere),
                "{dialect}"
            );
        }
    }

    #[test]
    fn omp_navigate_tree_still_rewinds_a_leaf_user_message() {
        let mut k = Kit::new(Dialect::Omp);
        k.user("root", "q")
            .assistant("a", "r")
            .user("leaf_user", "again");
        let api = NavigateOptions {
            caller: Caller::Api,
            ..opts()
        };
        let p = plan(&k, "leaf_user", &api);
        assert_eq!(p.new_leaf, Some(k.id("a")));
        assert_eq!(p.editor_text.as_deref(), Some("again"));
        // The /tree selector itself says "Already at this point".
        assert_eq!(
            decide(&k.session, &k.id("leaf_user"), &opts()).ok(),
            Some(Decision::AlreadyHere)
        );
        // pi never rewinds the leaf.
        let mut k = Kit::new(Dialect::Pi);
        k.user("root", "q")
            .assistant("a", "r")
            .user("leaf_user", "again");
        assert_eq!(
            decide(&k.session, &k.id("leaf_user"), &api).ok(),
            Some(Decision::AlreadyHere)
        );
    }

    #[test]
    fn omp_selector_reopens_ask_answers() {
        let mut k = Kit::new(Dialect::Omp);
        k.user("root", "q")
            .tool("call", "ask", "ask", json!({"questions": []}))
            .assistant("leaf", "ok");
        match decide(&k.session, &k.id("ask"), &opts()) {
            Ok(Decision::ReopenAsk { tool_call_id }) => assert_eq!(tool_call_id, "call-call"),
            other => panic!("{other:?}"),
        }
        let api = NavigateOptions {
            caller: Caller::Api,
            ..opts()
        };
        assert_eq!(plan(&k, "ask", &api).new_leaf, Some(k.id("ask")));
    }

    #[test]
    fn every_entry_kind_both_dialects() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = every_kind(dialect);
            // A root user message: reset, its text to the editor.
            let p = plan(&k, "root", &opts());
            assert_eq!(
                (p.new_leaf.as_deref(), p.editor_text.as_deref()),
                (None, Some("first question")),
                "{dialect}"
            );
            // A user message: its parent.
            let p = plan(&k, "second", &opts());
            assert_eq!(p.new_leaf, Some(k.id("summary")), "{dialect}");
            assert_eq!(p.editor_text.as_deref(), Some("second question"));
            // A custom message: its parent, its text to the editor.
            let p = plan(&k, "custom_msg", &opts());
            assert_eq!(p.new_leaf, Some(k.id("bash")), "{dialect}");
            assert_eq!(p.editor_text.as_deref(), Some("note for the editor"));
            // Everything else: the entry itself, nothing for the editor.
            let mut others = vec![
                "answer",
                "call",
                "result",
                "bash",
                "compaction",
                "model",
                "thinking",
                "custom",
                "label",
                "info",
                "summary",
            ];
            if dialect == Dialect::Omp {
                others.extend(["tier", "mode", "ttsr", "reset", "usage", "pin", "init"]);
            }
            for name in others {
                let p = plan(&k, name, &opts());
                assert_eq!(p.new_leaf, Some(k.id(name)), "{dialect} {name}");
                assert_eq!(p.editor_text, None, "{dialect} {name}");
            }
            assert!(matches!(
                decide(&k.session, "nope", &opts()),
                Err(Error::EntryNotFound(_))
            ));
        }
    }

    #[test]
    fn omp_skill_prompts() {
        let mut k = Kit::new(Dialect::Omp);
        k.user("root", "q").assistant("a", "r");
        k.custom_message("agent_skill", "skill-prompt", "expanded skill body", None);
        k.custom_message("user_skill", "skill-prompt", "/skill:x do it", Some("user"));
        k.assistant("leaf", "done");
        // An agent-injected skill prompt is not editable: the leaf lands on it.
        let p = plan(&k, "agent_skill", &opts());
        assert_eq!(
            (p.new_leaf, p.editor_text),
            (Some(k.id("agent_skill")), None)
        );
        // A user-invoked one is a user request: parent, the draft as typed to the editor.
        let p = plan(&k, "user_skill", &opts());
        assert_eq!(p.new_leaf, Some(k.id("agent_skill")));
        assert_eq!(p.editor_text.as_deref(), Some("/skill:x do it"));
    }

    #[test]
    fn omp_skill_prompt_drafts() {
        let v = json!({"type": "custom_message", "customType": "skill-prompt", "attribution": "user",
            "content": "BODY", "details": {"name": "fix", "args": " the parser ", "lineCount": 3}});
        assert_eq!(
            skill_prompt_draft(&v).as_deref(),
            Some("/skill:fix the parser")
        );
        let v = json!({"type": "custom_message", "customType": "skill-prompt", "attribution": "user",
            "content": "BODY", "details": {"name": "fix", "prompt": "please /skill:fix it"}});
        assert_eq!(
            skill_prompt_draft(&v).as_deref(),
            Some("please /skill:fix it")
        );
        let v = json!({"type": "custom_message", "customType": "skill-prompt", "attribution": "agent", "content": "BODY"});
        assert_eq!(skill_prompt_draft(&v), None);
    }

    #[test]
    fn a_user_message_without_parent_id_throws_like_the_agents() {
        let Ok(dir) = tempfile::tempdir() else { return };
        let path = dir.path().join("s.jsonl");
        let text = concat!(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\"}\n",
            "{\"type\":\"message\",\"id\":\"aaaa0001\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"q\"}}\n",
            "{\"type\":\"message\",\"id\":\"aaaa0002\",\"parentId\":\"aaaa0001\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"assistant\",\"content\":\"a\"}}\n",
        );
        assert!(std::fs::write(&path, text).is_ok());
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let Ok(session) =
                Session::open(&path, crate::session::OpenOptions::with_dialect(dialect))
            else {
                panic!("open")
            };
            assert!(
                matches!(
                    decide(&session, "aaaa0001", &opts()),
                    Err(Error::EntryNotFound(_))
                ),
                "{dialect}"
            );
        }
    }

    #[test]
    fn abandoned_entries_and_summaries() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut k = Kit::seed_example(dialect);
            let summarize = NavigateOptions {
                summarize: true,
                ..opts()
            };
            let p = plan(&k, "b_result", &summarize);
            assert_eq!(
                p.abandoned,
                vec![k.id("try_a"), k.id("a_result"), k.id("continue_a")],
                "{dialect}"
            );
            assert_eq!(p.common_ancestor, Some(k.id("plan")));
            assert!(p.summarize && !p.summary_skipped);
            // Back to an ancestor: what lies below it is abandoned.
            let p = plan(&k, "a_result", &summarize);
            assert_eq!(p.abandoned, vec![k.id("continue_a")], "{dialect}");
            // Forward to a descendant: nothing is abandoned, the summary is dropped.
            k.branch("try_a");
            let p = plan(&k, "continue_a", &summarize);
            assert!(
                p.abandoned.is_empty() && !p.summarize && p.summary_skipped,
                "{dialect}"
            );
            assert_eq!(p.new_leaf, Some(k.id("a_result")));
        }
    }

    #[test]
    fn seed_selection_diagram() {
        // selected node ─ is current leaf? → close (no-op)
        //               ─ is user/custom_message? → leaf := parentId (or reset) + editor text
        //               ─ otherwise → leaf := selected id, no editor text
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let k = Kit::seed_example(dialect);
            assert_eq!(
                decide(&k.session, &k.id("continue_a"), &opts()).ok(),
                Some(Decision::AlreadyHere)
            );
            let p = plan(&k, "try_b", &opts());
            assert_eq!(
                (p.new_leaf, p.editor_text.as_deref()),
                (Some(k.id("plan")), Some("Try approach B"))
            );
            let p = plan(&k, "start", &opts());
            assert_eq!(
                (p.new_leaf, p.editor_text.as_deref()),
                (None, Some("Start task"))
            );
            let p = plan(&k, "b_result", &opts());
            assert_eq!((p.new_leaf, p.editor_text), (Some(k.id("b_result")), None));
        }
    }

    #[test]
    fn apply_uses_branch_reset_and_branch_with_summary() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let mut k = Kit::seed_example(dialect);
            let p = plan(&k, "try_b", &opts());
            assert_eq!(apply(&mut k.session, &p, None).ok(), Some(None));
            assert_eq!(k.session.leaf_id(), Some(k.id("plan").as_str()));

            let p = plan(&k, "start", &opts());
            assert_eq!(apply(&mut k.session, &p, None).ok(), Some(None));
            assert_eq!(k.session.leaf_id(), None, "{dialect}: reset");

            k.branch("continue_a");
            let summarize = NavigateOptions {
                summarize: true,
                label: Some("back".into()),
                ..opts()
            };
            let p = plan(&k, "b_result", &summarize);
            let summary = Summary {
                text: "Tried A.".into(),
                details: None,
                from_extension: false,
            };
            let written = apply(&mut k.session, &p, Some(&summary)).ok().flatten();
            let Some(summary_id) = written else {
                panic!("{dialect}: no summary written")
            };
            let entry = k
                .session
                .entry(&summary_id)
                .map(|e| e.json())
                .unwrap_or_default();
            assert_eq!(entry["type"], "branch_summary");
            assert_eq!(entry["fromId"], json!(k.id("b_result")));
            assert_eq!(entry["parentId"], json!(k.id("b_result")));
            // pi labels the summary entry; omp has no label option.
            let labelled = k.session.label(&summary_id).map(str::to_owned);
            assert_eq!(
                labelled.as_deref(),
                if dialect == Dialect::Pi {
                    Some("back")
                } else {
                    None
                }
            );
        }
    }
}
