//! A tool call as its tool result's row shows it: each known tool's format (`[read: ~/a.rs:10-14]`,
//! `[bash: …]`, omp's `grep` and `glob` scopes), paths under the home folder shortened as each
//! agent shortens them, other tools as the start of their arguments' JSON.

use crate::dialect::Dialect;
use crate::js;
use serde_json::Value;

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
pub(super) fn cut_json_row(name: &str, json: &str) -> String {
    let cut = js::slice_utf16(json, 40);
    let more = if js::utf16_len(json) > 40 { "..." } else { "" };
    format!("[{name}: {cut}{more}]")
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
pub(super) fn to_path_list(input: Option<&Value>) -> Vec<String> {
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
