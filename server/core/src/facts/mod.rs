//! An entry's facts: what one entry shows in the tree and what search looks at, per dialect,
//! read once from its JSON when its line is scanned. Here: the facts' shape, the bookkeeping
//! types each dialect hides, and the rows of every entry type but messages (custom messages,
//! compactions, branch summaries, model, thinking, label, title and omp's other entries);
//! `messages` makes a message's row and facts, `tool_calls` a tool result's row from its call,
//! `omp_custom` omp's custom-message texts, `flags` the filter flags, `search_words` omp's search
//! normalization, `scanned` what the scan keeps of them, `state_kind` what the context walk
//! reads.

pub(crate) mod flags;
mod messages;
mod omp_custom;
mod scanned;
pub(crate) mod search_words;
mod state_kind;
mod tool_calls;

use messages::message_facts;
pub(crate) use messages::{
    omp_is_user_request, plain_message_facts, PlainBlock, PlainContent, PlainMessage,
};
use omp_custom::{advisor_display, sanitize_field, strip_system_wrapper};
pub(crate) use scanned::{call_hash, Scanned};
pub(crate) use state_kind::StateKind;
pub(crate) use tool_calls::{format_tool_call, ToolCall};

use crate::dialect::Dialect;
use crate::js;
use crate::json::Field;
use serde_json::{Map, Value};

/// The row text, or what is needed to build it once every tool call is known.
#[derive(Debug, Clone)]
pub(crate) enum RowText {
    Ready(String),
    ToolResult {
        call_id: Option<String>,
        tool_name: String,
    },
}

/// Everything the view needs from one entry.
#[derive(Debug, Clone)]
pub(crate) struct EntryFacts {
    /// The entry `type` (`""` when missing or not a string).
    pub kind: std::borrow::Cow<'static, str>,
    pub role: Option<std::borrow::Cow<'static, str>>,
    pub text: RowText,
    /// Searchable parts after the label, while they are collected.
    search_parts: Vec<String>,
    /// The searchable text after the label (the parts joined with spaces).
    pub search: Box<str>,
    /// An assistant message with no text that did not end in error/aborted/length: hidden unless leaf.
    pub blank_assistant: bool,
    /// Shown by `user-only`.
    pub user_request: bool,
    /// `toolCall` blocks of an assistant message, in order.
    pub tool_calls: Vec<(String, ToolCall)>,
}

impl EntryFacts {
    /// The facts of an entry with nothing to show.
    pub fn empty() -> EntryFacts {
        EntryFacts {
            kind: std::borrow::Cow::Borrowed(""),
            role: None,
            text: RowText::Ready(String::new()),
            search_parts: Vec::new(),
            search: Box::default(),
            blank_assistant: false,
            user_request: false,
            tool_calls: Vec::new(),
        }
    }
}

const SETTINGS_PI: &[&str] = &[
    "label",
    "custom",
    "model_change",
    "thinking_level_change",
    "session_info",
];
const SETTINGS_OMP: &[&str] = &[
    "label",
    "custom",
    "model_change",
    "model_usage",
    "thinking_level_change",
    "service_tier_change",
    "title_change",
    "credential_pin",
    "session_init",
    "ttsr_injection",
    "mode_change",
    "reset_boundary",
];

/// Bookkeeping entry types each dialect hides outside the `all` filter.
pub fn settings_types(dialect: Dialect) -> &'static [&'static str] {
    match dialect {
        Dialect::Pi => SETTINGS_PI,
        Dialect::Omp => SETTINGS_OMP,
    }
}

/// All text blocks of a content value, concatenated (a string is returned as is).
pub(crate) fn join_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for b in blocks {
                if b.field("type").and_then(Value::as_str) == Some("text") {
                    if let Some(t) = b.field("text").and_then(Value::as_str) {
                        out.push_str(t);
                    }
                }
            }
            out
        }
        _ => String::new(),
    }
}

/// The selectors' `extractContent`: text content capped at 200 UTF-16 units.
pub(super) fn extract_content(content: Option<&Value>) -> String {
    js::slice_utf16(&join_text(content), 200).to_owned()
}

pub(super) fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.field(key).and_then(Value::as_str)
}

/// A value as `Array.prototype.join` writes it (`null`/`undefined` → empty).
pub(super) fn join_str(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        v => js::to_string(v),
    }
}

/// Reads one entry's JSON into the facts the view needs (kept for the session's life, so held
/// compactly).
pub(crate) fn entry_facts(value: &Value, dialect: Dialect) -> EntryFacts {
    let mut facts = collect_facts(value, dialect);
    facts.search = facts.search_parts.join(" ").into_boxed_str();
    facts.search_parts = Vec::new();
    if let RowText::Ready(text) = &mut facts.text {
        text.shrink_to_fit();
    }
    facts.tool_calls.shrink_to_fit();
    facts
}

fn collect_facts(value: &Value, dialect: Dialect) -> EntryFacts {
    let mut facts = EntryFacts {
        kind: crate::type_names::name(value.field("type").and_then(Value::as_str).unwrap_or("")),
        ..EntryFacts::empty()
    };
    let empty = Map::new();
    let obj = value.as_object().unwrap_or(&empty);
    let kind = str_field(obj, "type").unwrap_or("");
    let field = |k: &str| obj.field(k);
    let tpl = |k: &str| js::to_string(obj.field(k));
    let parts = &mut facts.search_parts;
    let text: String = match kind {
        "message" => {
            if let Some(msg) = obj.field("message").and_then(Value::as_object) {
                message_facts(msg, dialect, &mut facts);
            }
            if dialect == Dialect::Omp {
                facts.user_request = omp_is_user_request(obj);
            }
            return facts;
        }
        "custom_message" => {
            parts.push(join_str(field("customType")));
            let custom_type = tpl("customType");
            match dialect {
                Dialect::Pi => {
                    match field("content") {
                        Some(Value::String(s)) => parts.push(s.clone()),
                        other => parts.push(extract_content(other)),
                    }
                    format!(
                        "[{custom_type}]: {}",
                        js::one_line(&join_text(field("content")))
                    )
                }
                Dialect::Omp => {
                    facts.user_request = omp_is_user_request(obj);
                    if str_field(obj, "customType") == Some("advisor") {
                        let (qualifier, note) = advisor_display(field("details"));
                        if !qualifier.is_empty() {
                            parts.push(qualifier.clone());
                        }
                        if !note.is_empty() {
                            parts.push(note.clone());
                        }
                        let label = if qualifier.is_empty() {
                            "advisor: ".to_owned()
                        } else {
                            format!("advisor ({qualifier}): ")
                        };
                        format!("{label}{}", js::one_line(&note))
                    } else {
                        let stripped = strip_system_wrapper(&join_text(field("content")));
                        let capped = js::slice_utf16(&stripped, 200);
                        if !capped.is_empty() {
                            parts.push(capped.to_owned());
                        }
                        format!("[{custom_type}]: {}", js::one_line(&stripped))
                    }
                }
            }
        }
        "compaction" => {
            parts.push("compaction".into());
            let tokens = field("tokensBefore")
                .and_then(Value::as_f64)
                .map_or(f64::NAN, |t| js::round(t / 1000.0));
            let tokens = if tokens.is_nan() {
                "NaN".to_owned()
            } else {
                js::number_to_string(tokens)
            };
            format!("[compaction: {tokens}k tokens]")
        }
        "branch_summary" => {
            parts.push("branch summary".into());
            parts.push(str_field(obj, "summary").unwrap_or("").to_owned());
            format!(
                "[branch summary]: {}",
                js::one_line(str_field(obj, "summary").unwrap_or(""))
            )
        }
        "model_change" => {
            let key = if dialect == Dialect::Pi {
                "modelId"
            } else {
                "model"
            };
            parts.push("model".into());
            parts.push(join_str(field(key)));
            format!("[model: {}]", tpl(key))
        }
        "thinking_level_change" => {
            parts.push("thinking".into());
            let level = match (dialect, field("thinkingLevel")) {
                (Dialect::Omp, None | Some(Value::Null)) => "off".to_owned(),
                (_, v) => js::to_string(v),
            };
            parts.push(if dialect == Dialect::Pi {
                join_str(field("thinkingLevel"))
            } else {
                level.clone()
            });
            format!("[thinking: {level}]")
        }
        "custom" => {
            parts.push("custom".into());
            parts.push(str_field(obj, "customType").unwrap_or("").to_owned());
            format!("[custom: {}]", tpl("customType"))
        }
        "label" => {
            parts.push("label".into());
            let label = match field("label") {
                None | Some(Value::Null) => None,
                v => Some(js::to_string(v)),
            };
            parts.push(label.clone().unwrap_or_default());
            format!("[label: {}]", label.unwrap_or_else(|| "(cleared)".into()))
        }
        "session_info" if dialect == Dialect::Pi => {
            parts.push("title".into());
            if js::truthy(field("name")) {
                parts.push(tpl("name"));
                format!("[title: {}]", tpl("name"))
            } else {
                "[title: empty]".to_owned()
            }
        }
        _ if dialect == Dialect::Pi => String::new(),
        "model_usage" => {
            let f = |k: &str| sanitize_field(str_field(obj, k).unwrap_or(""));
            parts.extend([
                "model usage".to_owned(),
                f("purpose"),
                f("role"),
                f("provider"),
                f("model"),
            ]);
            let role = f("role");
            let role = if role.is_empty() {
                String::new()
            } else {
                format!("{role} ")
            };
            format!(
                "[model usage: {} {role}{}/{}]",
                f("purpose"),
                f("provider"),
                f("model")
            )
        }
        "service_tier_change" => {
            parts.push("service tier".into());
            let tiers = match field("serviceTier") {
                Some(Value::Object(map)) => {
                    for (family, tier) in map {
                        if js::truthy(Some(tier)) {
                            parts.push(family.clone());
                            parts.push(js::to_string(Some(tier)));
                        }
                    }
                    map.iter()
                        .map(|(f, t)| format!("{f}:{}", js::to_string(Some(t))))
                        .collect::<Vec<_>>()
                        .join(" ")
                }
                _ => "(default)".to_owned(),
            };
            format!("[service tier: {tiers}]")
        }
        "title_change" => {
            parts.push("title".into());
            parts.push(str_field(obj, "title").unwrap_or("").to_owned());
            format!(
                "[title: {}]",
                js::one_line(str_field(obj, "title").unwrap_or(""))
            )
        }
        "mode_change" => {
            parts.push("mode".into());
            parts.push(str_field(obj, "mode").unwrap_or("").to_owned());
            format!("[mode: {}]", tpl("mode"))
        }
        "credential_pin" => {
            parts.push("credential pin".into());
            parts.push(str_field(obj, "provider").unwrap_or("").to_owned());
            format!("[credential pin: {}]", tpl("provider"))
        }
        other => {
            match other {
                "ttsr_injection" => {
                    parts.push("ttsr injection".into());
                    if let Some(rules) = field("injectedRules").and_then(Value::as_array) {
                        parts.extend(rules.iter().map(|r| js::to_string(Some(r))));
                    }
                }
                "reset_boundary" => parts.push("reset boundary".into()),
                "session_init" => parts.push("session init".into()),
                _ => {}
            }
            format!("[{}]", other.replace('_', " "))
        }
    };
    facts.text = RowText::Ready(text);
    facts
}

/// Whether an entry type is bookkeeping for this dialect.
pub fn is_settings(kind: &str, dialect: Dialect) -> bool {
    settings_types(dialect).contains(&kind)
}

/// The text a user or custom message puts back in the editor (`None` for other entries).
pub fn editor_text(value: &Value) -> Option<String> {
    match value.field("type").and_then(Value::as_str) {
        Some("message") => {
            let msg = value.field("message")?;
            match msg.field("role").and_then(Value::as_str) {
                Some("user") | Some("custom") => Some(join_text(msg.field("content"))),
                _ => None,
            }
        }
        Some("custom_message") => Some(join_text(value.field("content"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::tool_calls::shorten_path;
    use super::*;
    use serde_json::json;

    /// The agents' names are written once (`type_names`): every type the view hides outside the
    /// `all` filter is among them, and the facts of every known type and role borrow it from
    /// there (the rows share those as static texts).
    #[test]
    fn the_agents_names_come_from_one_list() {
        use crate::type_names::{ENTRY_TYPES, ROLES};
        use std::borrow::Cow;
        for dialect in [Dialect::Pi, Dialect::Omp] {
            for kind in settings_types(dialect) {
                assert!(ENTRY_TYPES.contains(kind), "{dialect:?}: {kind}");
            }
            for &kind in ENTRY_TYPES {
                let facts = entry_facts(&json!({"type": kind, "id": "a"}), dialect);
                assert!(
                    matches!(facts.kind, Cow::Borrowed(k) if k == kind),
                    "{kind}"
                );
            }
            for &role in ROLES {
                let line = json!({"type": "message", "message": {"role": role, "content": "x"}});
                let facts = entry_facts(&line, dialect);
                assert!(
                    matches!(facts.role, Some(Cow::Borrowed(r)) if r == role),
                    "{role}"
                );
            }
        }
    }

    fn row(v: Value, d: Dialect) -> String {
        match entry_facts(&v, d).text {
            RowText::Ready(t) => t,
            RowText::ToolResult { tool_name, .. } => format!("[{tool_name}]"),
        }
    }

    #[test]
    fn tool_calls_format_with_home() {
        let home = Some("/tmp/refgen-home");
        let args = json!({"path": "/tmp/refgen-home/project/a.txt", "offset": 10, "limit": 5});
        assert_eq!(
            format_tool_call("read", &args, home, Dialect::Pi),
            "[read: ~/project/a.txt:10-14]"
        );
        let args = json!({"command": "x".repeat(60)});
        assert_eq!(
            format_tool_call("bash", &args, home, Dialect::Omp),
            format!("[bash: {}...]", "x".repeat(50))
        );
        assert_eq!(
            format_tool_call(
                "glob",
                &json!({"paths": "[\"a\",\"b\"]"}),
                home,
                Dialect::Omp
            ),
            "[glob: a, b]"
        );
        assert_eq!(
            format_tool_call("grep", &json!({"pattern": "p"}), home, Dialect::Pi),
            "[grep: /p/ in .]"
        );
        assert_eq!(
            shorten_path("/tmp/refgen-homeX/a", home, Dialect::Pi),
            "~X/a"
        );
        assert_eq!(
            shorten_path("/tmp/refgen-homeX/a", home, Dialect::Omp),
            "/tmp/refgen-homeX/a"
        );
    }

    #[test]
    fn rows_for_bookkeeping_entries() {
        assert_eq!(
            row(
                json!({"type":"compaction","tokensBefore":1500}),
                Dialect::Pi
            ),
            "[compaction: 2k tokens]"
        );
        assert_eq!(
            row(json!({"type":"label","targetId":"x"}), Dialect::Pi),
            "[label: (cleared)]"
        );
        assert_eq!(
            row(
                json!({"type":"thinking_level_change","thinkingLevel":null}),
                Dialect::Omp
            ),
            "[thinking: off]"
        );
        assert_eq!(
            row(json!({"type":"reset_boundary"}), Dialect::Omp),
            "[reset boundary]"
        );
        assert_eq!(row(json!({"type":"reset_boundary"}), Dialect::Pi), "");
        assert_eq!(
            row(
                json!({"type":"service_tier_change","serviceTier":null}),
                Dialect::Omp
            ),
            "[service tier: (default)]"
        );
        assert_eq!(
            row(json!({"type":"session_info"}), Dialect::Pi),
            "[title: empty]"
        );
    }

    #[test]
    fn assistant_without_text() {
        let m = |extra: Value| {
            let mut msg = json!({"role":"assistant","content":[]});
            if let (Some(o), Some(e)) = (msg.as_object_mut(), extra.as_object()) {
                o.extend(e.clone());
            }
            json!({"type":"message","message": msg})
        };
        assert_eq!(
            row(m(json!({"stopReason":"aborted"})), Dialect::Pi),
            "assistant: (aborted)"
        );
        assert_eq!(
            row(m(json!({"stopReason":"aborted"})), Dialect::Omp),
            "assistant: Operation aborted"
        );
        assert_eq!(
            row(
                m(json!({"stopReason":"aborted","errorMessage":"Interrupted by user"})),
                Dialect::Omp
            ),
            "assistant: (aborted)"
        );
        assert_eq!(
            row(
                m(json!({"stopReason":"error","errorMessage":"boom"})),
                Dialect::Pi
            ),
            "assistant: boom"
        );
        assert_eq!(
            row(m(json!({"stopReason":"stop"})), Dialect::Pi),
            "assistant: (no content)"
        );
        assert!(entry_facts(&m(json!({"stopReason":"toolUse"})), Dialect::Pi).blank_assistant);
        assert!(!entry_facts(&m(json!({"stopReason":"length"})), Dialect::Pi).blank_assistant);
    }

    #[test]
    fn strips_system_wrappers() {
        assert_eq!(
            strip_system_wrapper("<system-reminder>hi</system-reminder>"),
            "hi"
        );
        assert_eq!(
            strip_system_wrapper("<system-x a=\">\">hi</system-x>"),
            "hi"
        );
        assert_eq!(
            strip_system_wrapper("<systemx>hi</systemx>"),
            "<systemx>hi</systemx>"
        );
    }
}
