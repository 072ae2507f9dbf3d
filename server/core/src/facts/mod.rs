//! An entry's facts: what one entry shows in the tree and what search looks at, per dialect —
//! the row text of every entry type (user and assistant messages with their no-text cases, tool
//! results formatted from the originating tool call with `~` for paths under the home folder,
//! bash executions, custom messages, compactions, branch summaries and the bookkeeping entries),
//! the searchable text, and the facts the filters need. Each entry's JSON is read once, here, when
//! its line is scanned; `columns` keeps them for the session and the tree models built from it.

pub(crate) mod flags;
mod scanned;
pub(crate) mod search_words;
mod state_kind;

pub(crate) use scanned::{call_hash, Scanned};
pub(crate) use state_kind::StateKind;

use crate::cells;
use crate::dialect::Dialect;
use crate::js;
use crate::json::Field;
use serde_json::{Map, Value};

/// A tool call found in an assistant message, reduced to what its tool result's row shows.
#[derive(Debug, Clone)]
pub(crate) struct ToolCall {
    pub name: String,
    /// The arguments the row's format reads (only those keys are kept).
    pub arguments: Value,
    /// For tools shown as `[name: <JSON of the arguments, cut>]`: the start of that JSON.
    pub json_head: Option<String>,
    /// The row text, once made (with the home folder it was made for).
    row: std::sync::OnceLock<(Option<String>, std::sync::Arc<str>)>,
}

/// The argument keys a known tool's row reads.
const ROW_ARGUMENT_KEYS: &[&str] = &[
    "path",
    "file_path",
    "offset",
    "limit",
    "command",
    "pattern",
    "paths",
];

impl ToolCall {
    /// Keeps only what [`format_tool_call`] reads, so a `write` call's file content is not held.
    pub(crate) fn new(name: String, arguments: &Value, dialect: Dialect) -> ToolCall {
        let known = matches!(
            (name.as_str(), dialect),
            ("read" | "write" | "edit" | "bash" | "ls", _)
                | ("grep" | "find", Dialect::Pi)
                | ("grep" | "glob", Dialect::Omp)
        );
        if known {
            let arguments = match arguments {
                Value::Object(map) => Value::Object(
                    map.iter()
                        .filter(|(k, _)| ROW_ARGUMENT_KEYS.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                _ => Value::Null,
            };
            return ToolCall {
                name,
                arguments,
                json_head: None,
                row: Default::default(),
            };
        }
        // A few units past the cut, so both the cut and "is it longer" read the same.
        let json = crate::json::to_line(arguments);
        ToolCall {
            name,
            arguments: Value::Null,
            json_head: Some(js::slice_utf16(&json, 44).to_owned()),
            row: Default::default(),
        }
    }

    /// The row text of this call's tool result (made once per home folder).
    pub(crate) fn row_text(&self, home: Option<&str>, dialect: Dialect) -> std::sync::Arc<str> {
        let make = || match &self.json_head {
            Some(json) => cut_json_row(&self.name, json),
            None => format_tool_call(&self.name, &self.arguments, home, dialect),
        };
        let (made_for, text) = self
            .row
            .get_or_init(|| (home.map(str::to_owned), make().into()));
        if made_for.as_deref() == home {
            text.clone()
        } else {
            make().into()
        }
    }
}

/// `[name: <json cut at 40 units>...]`.
fn cut_json_row(name: &str, json: &str) -> String {
    let cut = js::slice_utf16(json, 40);
    let more = if js::utf16_len(json) > 40 { "..." } else { "" };
    format!("[{name}: {cut}{more}]")
}

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

/// omp's custom types that start a user turn when attributed to the user.
const SKILL_PROMPT: &str = "skill-prompt";
const COLLAB_PROMPT: &str = "collab-prompt";

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
fn extract_content(content: Option<&Value>) -> String {
    js::slice_utf16(&join_text(content), 200).to_owned()
}

/// Whether a text counts as no text for the dialect's "has it any text" test.
fn is_blank(t: &str, dialect: Dialect) -> bool {
    match dialect {
        Dialect::Pi => js::trim(t).is_empty(),
        Dialect::Omp => js::trim(t)
            .chars()
            .all(|c| matches!(c, '.' | '\u{2026}' | ' ' | '\t' | '\n' | '\r')),
    }
}

fn has_text(content: Option<&Value>, dialect: Dialect) -> bool {
    let blank = |t: &str| is_blank(t, dialect);
    match content {
        Some(Value::String(s)) => !blank(s),
        Some(Value::Array(blocks)) => blocks.iter().any(|b| {
            b.field("type").and_then(Value::as_str) == Some("text")
                && b.field("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty() && !blank(t))
        }),
        _ => false,
    }
}

fn str_field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.field(key).and_then(Value::as_str)
}

/// A value as `Array.prototype.join` writes it (`null`/`undefined` → empty).
fn join_str(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        v => js::to_string(v),
    }
}

/// omp's `isUserTurnInitiator` over a custom message's type and attribution.
fn omp_user_initiator(custom_type: Option<&str>, attribution: Option<&str>) -> bool {
    attribution == Some("user") && matches!(custom_type, Some(SKILL_PROMPT | COLLAB_PROMPT))
}

/// omp's `isUserRequestEntry`.
pub(crate) fn omp_is_user_request(obj: &Map<String, Value>) -> bool {
    match str_field(obj, "type") {
        Some("message") => {
            let Some(msg) = obj.field("message").and_then(Value::as_object) else {
                return false;
            };
            match str_field(msg, "role") {
                Some("user") => true,
                Some("custom") => {
                    omp_user_initiator(str_field(msg, "customType"), str_field(msg, "attribution"))
                }
                _ => false,
            }
        }
        Some("custom_message") => {
            let content_ok = matches!(
                obj.field("content"),
                Some(Value::String(_) | Value::Array(_))
            );
            let custom_type = match str_field(obj, "customType") {
                Some(t) if !t.is_empty() => Some(t),
                _ => Some("custom-message"),
            };
            content_ok && omp_user_initiator(custom_type, str_field(obj, "attribution"))
        }
        _ => false,
    }
}

/// omp's `stripSystemWrapperTags`: removes one `<system-*>…</system-*>` envelope.
fn strip_system_wrapper(content: &str) -> String {
    let trimmed = js::trim(content);
    let lower = trimmed.to_ascii_lowercase();
    if !lower.starts_with("<system-") {
        return content.to_owned();
    }
    let name_len = trimmed[1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(trimmed.len() - 1);
    let name = &trimmed[1..1 + name_len];
    if name.len() <= "system-".len() {
        return content.to_owned();
    }
    let attr_start = 1 + name_len;
    match trimmed[attr_start..].chars().next() {
        Some('>') => {}
        Some(c) if js::is_whitespace(c) => {}
        _ => return content.to_owned(),
    }
    let mut quote: Option<char> = None;
    let mut opening_end = None;
    for (i, c) in trimmed[attr_start..].char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else if c == '<' {
            return content.to_owned();
        } else if c == '>' {
            opening_end = Some(attr_start + i);
            break;
        }
    }
    let Some(opening_end) = opening_end.filter(|_| quote.is_none()) else {
        return content.to_owned();
    };
    let closing = format!("</{name}>");
    if trimmed.len() < closing.len() {
        return content.to_owned();
    }
    let closing_start = trimmed.len() - closing.len();
    if closing_start <= opening_end
        || !trimmed.is_char_boundary(closing_start)
        || !trimmed[closing_start..].eq_ignore_ascii_case(&closing)
    {
        return content.to_owned();
    }
    js::trim(&trimmed[opening_end + 1..closing_start]).to_owned()
}

/// omp's `sanitizeTreeField`: control characters removed, `\n`/`\t` folded, trimmed.
fn sanitize_field(value: &str) -> String {
    let kept: String = value
        .chars()
        .filter(|&c| {
            let cp = c as u32;
            !(cp <= 0x08 || (0x0b..=0x1f).contains(&cp) || (0x7f..=0x9f).contains(&cp))
        })
        .collect();
    js::one_line(&kept)
}

/// omp's advisor notes: `(qualifier, text)`.
fn advisor_display(details: Option<&Value>) -> (String, String) {
    let Some(notes) = details
        .and_then(|d| d.field("notes"))
        .and_then(Value::as_array)
    else {
        return (String::new(), String::new());
    };
    let mut texts = Vec::new();
    let mut advisors: Vec<String> = Vec::new();
    let mut severities: Vec<String> = Vec::new();
    for note in notes.iter().filter_map(Value::as_object) {
        if let Some(t) = str_field(note, "note") {
            texts.push(t.to_owned());
        }
        if let Some(a) = str_field(note, "advisor") {
            let name = sanitize_field(a);
            if !name.is_empty() && name != "default" && !advisors.contains(&name) {
                advisors.push(name);
            }
        }
        if let Some(s) = str_field(note, "severity") {
            let sev = sanitize_field(s);
            if !sev.is_empty() && !severities.contains(&sev) {
                severities.push(sev);
            }
        }
    }
    advisors.extend(severities);
    (advisors.join(", "), texts.join(" "))
}

/// Shortens a path under the home folder to `~…` (pi: any prefix match; omp: only at a separator).
pub(crate) fn shorten_path(path: &str, home: Option<&str>, dialect: Dialect) -> String {
    let Some(home) = home.filter(|h| !h.is_empty()) else {
        return path.to_owned();
    };
    let Some(rest) = path.strip_prefix(home) else {
        return path.to_owned();
    };
    match dialect {
        Dialect::Pi => format!("~{rest}"),
        Dialect::Omp => {
            if rest.is_empty() || rest.starts_with('/') || rest.starts_with('\\') {
                format!("~{}", rest.replace('\\', "/"))
            } else {
                path.to_owned()
            }
        }
    }
}

/// omp's `toPathList`.
fn to_path_list(input: Option<&Value>) -> Vec<String> {
    match input {
        Some(Value::String(s)) => {
            let t = js::trim(s);
            if t.starts_with('[') && t.ends_with(']') {
                if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(t) {
                    if items.iter().all(Value::is_string) {
                        return items
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect();
                    }
                }
            }
            vec![s.clone()]
        }
        Some(Value::Array(items)) => items.iter().map(|v| js::to_string(Some(v))).collect(),
        _ => Vec::new(),
    }
}

/// Formats a tool call as its tool result's row text.
pub(crate) fn format_tool_call(
    name: &str,
    args: &Value,
    home: Option<&str>,
    dialect: Dialect,
) -> String {
    let get = |k: &str| args.get(k);
    let path_arg = || {
        js::to_string(js::or(&[
            get("path"),
            get("file_path"),
            Some(&Value::String(String::new())),
        ]))
    };
    let dot = Value::String(".".into());
    // `String(args[key] || "")`, as the agents format an argument.
    let string_arg =
        |key: &str| js::to_string(js::or(&[get(key), Some(&Value::String(String::new()))]));
    match (name, dialect) {
        ("read", _) => {
            let mut display = shorten_path(&path_arg(), home, dialect);
            let offset = get("offset");
            let limit = get("limit");
            if offset.is_some() || limit.is_some() {
                let start = match offset {
                    None | Some(Value::Null) => Value::from(1),
                    Some(v) => v.clone(),
                };
                let end = limit.map(|l| {
                    let s = start.as_f64().unwrap_or(f64::NAN);
                    let l = match l {
                        Value::Null => 0.0,
                        other => other.as_f64().unwrap_or(f64::NAN),
                    };
                    s + l - 1.0
                });
                display.push(':');
                display.push_str(&js::to_string(Some(&start)));
                if let Some(end) = end.filter(|e| *e != 0.0 && !e.is_nan()) {
                    display.push('-');
                    display.push_str(&js::number_to_string(end));
                } else if end.is_some_and(f64::is_nan) {
                    display.push_str("-NaN");
                }
            }
            format!("[read: {display}]")
        }
        ("write", _) => format!("[write: {}]", shorten_path(&path_arg(), home, dialect)),
        ("edit", _) => format!("[edit: {}]", shorten_path(&path_arg(), home, dialect)),
        ("bash", _) => {
            let raw = string_arg("command");
            let cmd = js::one_line(&raw);
            let cmd = js::slice_utf16(&cmd, 50);
            let more = if js::utf16_len(&raw) > 50 { "..." } else { "" };
            format!("[bash: {cmd}{more}]")
        }
        ("grep", Dialect::Pi) => {
            let pattern = string_arg("pattern");
            let path = js::to_string(js::or(&[get("path"), Some(&dot)]));
            format!(
                "[grep: /{pattern}/ in {}]",
                shorten_path(&path, home, dialect)
            )
        }
        ("find", Dialect::Pi) => {
            let pattern = string_arg("pattern");
            let path = js::to_string(js::or(&[get("path"), Some(&dot)]));
            format!(
                "[find: {pattern} in {}]",
                shorten_path(&path, home, dialect)
            )
        }
        ("grep", Dialect::Omp) => {
            let pattern = string_arg("pattern");
            let input = match (get("paths"), get("path")) {
                (Some(p @ (Value::String(_) | Value::Array(_))), _) => Some(p),
                (_, Some(p @ Value::String(_))) => Some(p),
                _ => None,
            };
            let paths = to_path_list(input);
            let scope = if paths.is_empty() {
                ".".to_owned()
            } else {
                paths.join(", ")
            };
            format!(
                "[grep: /{pattern}/ in {}]",
                shorten_path(&scope, home, dialect)
            )
        }
        ("glob", Dialect::Omp) => {
            let input = match (get("path"), get("paths")) {
                (Some(p @ Value::String(_)), _) => Some(p),
                (_, Some(p @ (Value::String(_) | Value::Array(_)))) => Some(p),
                _ => None,
            };
            let paths = to_path_list(input);
            let scope = if paths.is_empty() {
                ".".to_owned()
            } else {
                paths.join(", ")
            };
            format!("[glob: {}]", shorten_path(&scope, home, dialect))
        }
        ("ls", _) => {
            let path = js::to_string(js::or(&[get("path"), Some(&dot)]));
            format!("[ls: {}]", shorten_path(&path, home, dialect))
        }
        _ => cut_json_row(name, &crate::json::to_line(args)),
    }
}

/// omp's assistant error presentation: `Some((compact, text))`, `compact` for recovered retries.
fn omp_error_presentation(msg: &Map<String, Value>) -> Option<(bool, String)> {
    let recovery = msg
        .field("retryRecovery")
        .and_then(|r| r.field("status"))
        .and_then(Value::as_str);
    if recovery == Some("superseded") {
        return None;
    }
    if recovery == Some("recovered") {
        let note = msg
            .field("retryRecovery")
            .and_then(|r| r.field("note"))
            .and_then(Value::as_str)
            .unwrap_or("");
        // `replaceTabs(note).replace(/\s+/g, " ").trim()`.
        let collapsed = js::collapse_whitespace(&note.replace('\t', "   "));
        let text = if collapsed.is_empty() {
            "retried".to_owned()
        } else {
            collapsed
        };
        return Some((true, cells::truncate_to_width(&text, 80, "\u{2026}")));
    }
    omp_stop_presentation(str_field(msg, "stopReason"), str_field(msg, "errorMessage"))
}

/// [`omp_error_presentation`] for a message without a retry recovery.
fn omp_stop_presentation(stop: Option<&str>, error: Option<&str>) -> Option<(bool, String)> {
    let silent = error == Some("__omp.silent_abort__");
    let interrupt = error == Some("Interrupted by user");
    let render_reason = !silent && !interrupt;
    match stop {
        Some("aborted") => {
            if !render_reason {
                return None;
            }
            let generic = error.is_none_or(|e| e.is_empty() || e == "Request was aborted");
            Some((
                false,
                if generic {
                    "Operation aborted".to_owned()
                } else {
                    error.unwrap_or_default().to_owned()
                },
            ))
        }
        Some("error") => Some((
            false,
            error
                .filter(|e| !e.is_empty())
                .unwrap_or("Error")
                .to_owned(),
        )),
        _ => match error {
            Some(e) if !e.is_empty() && render_reason => Some((false, e.to_owned())),
            _ => None,
        },
    }
}

/// An assistant row's text from its normalized content text, stop reason and error message;
/// `omp_presentation` (omp's error presentation) is asked for only in omp's dialect.
fn assistant_row_text(
    dialect: Dialect,
    text: &str,
    stop: Option<&str>,
    error: Option<&str>,
    omp_presentation: impl FnOnce() -> Option<(bool, String)>,
) -> String {
    match dialect {
        Dialect::Pi => {
            if !text.is_empty() {
                format!("assistant: {text}")
            } else if stop == Some("aborted") {
                "assistant: (aborted)".to_owned()
            } else if let Some(e) = error.filter(|e| !e.is_empty()) {
                format!("assistant: {}", js::slice_utf16(&js::one_line(e), 80))
            } else {
                "assistant: (no content)".to_owned()
            }
        }
        Dialect::Omp => match omp_presentation() {
            Some((true, note)) => format!("assistant: {note}"),
            _ if !text.is_empty() => format!("assistant: {text}"),
            Some((false, err)) => {
                format!("assistant: {}", js::slice_utf16(&js::one_line(&err), 80))
            }
            None if stop == Some("aborted") => "assistant: (aborted)".to_owned(),
            None => "assistant: (no content)".to_owned(),
        },
    }
}

fn message_facts(msg: &Map<String, Value>, dialect: Dialect, facts: &mut EntryFacts) {
    let role = str_field(msg, "role").map(crate::names::name);
    let role_str = role.as_deref().unwrap_or("");
    let content = msg.field("content");
    // The capped content, made once for the search text and the row.
    let extracted = std::cell::OnceCell::new();
    let extracted = || extracted.get_or_init(|| extract_content(content)).as_str();
    // Searchable text: role, then the capped content when present, then a bash command.
    facts.search_parts.push(join_str(msg.field("role")));
    if js::truthy(content) {
        facts.search_parts.push(extracted().to_owned());
    }
    if role_str == "bashExecution" {
        if let Some(cmd) = str_field(msg, "command").filter(|c| !c.is_empty()) {
            facts.search_parts.push(cmd.to_owned());
        }
    }
    let text = match role_str {
        "user" => {
            facts.user_request = true;
            format!("user: {}", js::one_line(extracted()))
        }
        "developer" if dialect == Dialect::Omp => {
            format!("developer: {}", js::one_line(extracted()))
        }
        "assistant" => {
            let stop = str_field(msg, "stopReason");
            let error_or_abort = msg.field("stopReason").is_some_and(|s| js::truthy(Some(s)))
                && stop != Some("stop")
                && stop != Some("toolUse");
            facts.blank_assistant = !has_text(content, dialect) && !error_or_abort;
            if let Some(Value::Array(blocks)) = content {
                for b in blocks {
                    if b.field("type").and_then(Value::as_str) == Some("toolCall") {
                        let id = js::to_string(b.field("id"));
                        let name = js::to_string(b.field("name"));
                        let empty = Value::Object(Map::new());
                        let arguments = b.field("arguments").unwrap_or(&empty);
                        let call = ToolCall::new(name, arguments, dialect);
                        facts.tool_calls.push((id, call));
                    }
                }
            }
            assistant_row_text(
                dialect,
                &js::one_line(extracted()),
                stop,
                str_field(msg, "errorMessage"),
                || omp_error_presentation(msg),
            )
        }
        "toolResult" => {
            let call_id = str_field(msg, "toolCallId")
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            let tool_name = match msg.field("toolName") {
                None | Some(Value::Null) => "tool".to_owned(),
                other => js::to_string(other),
            };
            facts.role = role;
            facts.text = RowText::ToolResult { call_id, tool_name };
            return;
        }
        "bashExecution" => {
            let cmd = match msg.field("command") {
                None | Some(Value::Null) => String::new(),
                other => js::to_string(other),
            };
            format!("[bash]: {}", js::one_line(&cmd))
        }
        "custom" if dialect == Dialect::Omp => {
            facts.user_request =
                omp_user_initiator(str_field(msg, "customType"), str_field(msg, "attribution"));
            format!("[{role_str}]")
        }
        _ => format!("[{}]", js::to_string(msg.field("role"))),
    };
    facts.role = role;
    facts.text = RowText::Ready(text);
}

/// A message of the common shapes, read straight from its line (`crate::fast_line`): a `user`,
/// `assistant` or `toolResult` role, string fields as strings, no retry recovery. Anything else
/// goes through [`entry_facts`]; both give the same facts (checked by `fast_line`'s tests).
pub(crate) struct PlainMessage<'a> {
    pub role: &'a str,
    pub content: PlainContent<'a>,
    pub tool_call_id: Option<&'a str>,
    pub tool_name: Option<&'a str>,
    pub stop_reason: Option<&'a str>,
    pub error_message: Option<&'a str>,
}

/// `message.content` of a [`PlainMessage`], texts already cut as the projection cuts them.
pub(crate) enum PlainContent<'a> {
    /// Absent or `null`.
    Absent,
    Text(String),
    Blocks(Vec<PlainBlock<'a>>),
}

/// One content block of a [`PlainMessage`].
pub(crate) enum PlainBlock<'a> {
    /// `type: "text"` with a string `text`.
    Text(String),
    /// `type: "toolCall"` with string `id` and `name`; `arguments` as written (absent: `None`).
    ToolCall {
        id: &'a str,
        name: &'a str,
        arguments: Option<Value>,
    },
    /// Any other block (thinking, images, ...): no text.
    Other,
}

/// The view facts of a [`PlainMessage`] entry: what [`entry_facts`] makes of the same line.
pub(crate) fn plain_message_facts(m: PlainMessage<'_>, dialect: Dialect) -> EntryFacts {
    let joined: std::borrow::Cow<'_, str> = match &m.content {
        PlainContent::Absent => "".into(),
        PlainContent::Text(s) => s.as_str().into(),
        PlainContent::Blocks(blocks) => {
            let mut out = String::new();
            for b in blocks {
                if let PlainBlock::Text(t) = b {
                    out.push_str(t);
                }
            }
            out.into()
        }
    };
    let extracted = js::slice_utf16(&joined, 200);
    let truthy = match &m.content {
        PlainContent::Absent => false,
        PlainContent::Text(s) => !s.is_empty(),
        PlainContent::Blocks(_) => true,
    };
    let mut search = String::with_capacity(m.role.len() + 1 + extracted.len());
    search.push_str(m.role);
    if truthy {
        search.push(' ');
        search.push_str(extracted);
    }
    let mut facts = EntryFacts {
        kind: crate::names::name("message"),
        role: Some(crate::names::name(m.role)),
        text: RowText::Ready(String::new()),
        search_parts: Vec::new(),
        search: search.into_boxed_str(),
        blank_assistant: false,
        user_request: false,
        tool_calls: Vec::new(),
    };
    let text = match m.role {
        "user" => {
            facts.user_request = true;
            format!("user: {}", js::one_line(extracted))
        }
        "assistant" => {
            let stop = m.stop_reason;
            let error_or_abort = stop.is_some_and(|s| !s.is_empty())
                && stop != Some("stop")
                && stop != Some("toolUse");
            let has_text = match &m.content {
                PlainContent::Absent => false,
                PlainContent::Text(s) => !is_blank(s, dialect),
                PlainContent::Blocks(blocks) => blocks.iter().any(
                    |b| matches!(b, PlainBlock::Text(t) if !t.is_empty() && !is_blank(t, dialect)),
                ),
            };
            facts.blank_assistant = !has_text && !error_or_abort;
            let text = js::one_line(extracted);
            if let PlainContent::Blocks(blocks) = m.content {
                for b in blocks {
                    if let PlainBlock::ToolCall {
                        id,
                        name,
                        arguments,
                    } = b
                    {
                        let arguments = arguments.unwrap_or_else(|| Value::Object(Map::new()));
                        let call = ToolCall::new(name.to_owned(), &arguments, dialect);
                        facts.tool_calls.push((id.to_owned(), call));
                    }
                }
            }
            assistant_row_text(dialect, &text, stop, m.error_message, || {
                omp_stop_presentation(stop, m.error_message)
            })
        }
        _ => {
            facts.text = RowText::ToolResult {
                call_id: m.tool_call_id.filter(|s| !s.is_empty()).map(str::to_owned),
                tool_name: m.tool_name.unwrap_or("tool").to_owned(),
            };
            facts.tool_calls.shrink_to_fit();
            return facts;
        }
    };
    facts.text = RowText::Ready(text);
    facts.tool_calls.shrink_to_fit();
    facts
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
        kind: crate::names::name(value.field("type").and_then(Value::as_str).unwrap_or("")),
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
    use super::*;
    use serde_json::json;

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
