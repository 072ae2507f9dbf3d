//! What both agents' `convertToLlm` build the same way: a text block, a message in the agents'
//! key order, and the text of a bash run.

use crate::dialect::Dialect;
use crate::js;
use serde_json::Value;

/// `{type: "text", text}`.
pub(super) fn text_block(text: String) -> Value {
    js::object([
        ("type", Some(Value::from("text"))),
        ("text", Some(Value::from(text))),
    ])
}

/// `{role, content, ..., timestamp}` in the agents' key order.
pub(super) fn message(
    role: &str,
    content: Value,
    attribution: Option<Value>,
    timestamp: Option<&Value>,
) -> Value {
    js::object([
        ("role", Some(Value::from(role))),
        ("content", Some(content)),
        ("attribution", attribution),
        ("timestamp", timestamp.cloned()),
    ])
}

/// `bashExecutionToText` (pi; omp is the same up to the output notice, which it appends from `meta`).
pub(super) fn bash_text(m: &Value, dialect: Dialect) -> String {
    let mut text = format!("Ran `{}`\n", js::to_string(js::get(m, "command")));
    let output = js::get(m, "output");
    if js::truthy(output) {
        text += &format!("```\n{}\n```", js::to_string(output));
    } else {
        text += "(no output)";
    }
    let exit_code = js::get(m, "exitCode");
    if js::truthy(js::get(m, "cancelled")) {
        text += "\n\n(command cancelled)";
    } else if nonzero_exit(exit_code) {
        text += &format!("\n\nCommand exited with code {}", js::to_string(exit_code));
    }
    if dialect == Dialect::Pi
        && js::truthy(js::get(m, "truncated"))
        && js::truthy(js::get(m, "fullOutputPath"))
    {
        text += &format!(
            "\n\n[Output truncated. Full output: {}]",
            js::to_string(js::get(m, "fullOutputPath"))
        );
    }
    text
}

/// `exitCode !== null && exitCode !== undefined && exitCode !== 0`.
pub(super) fn nonzero_exit(code: Option<&Value>) -> bool {
    !js::nullish(code) && code.and_then(Value::as_f64) != Some(0.0)
}
