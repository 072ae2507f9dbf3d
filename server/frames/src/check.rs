//! Whether a message body is one the LSP library decodes, and if not, the error that answers it.
//!
//! The verdict is the library's own: the body is decoded as `tower-lsp-server` decodes it (UTF-8,
//! then `serde_json::from_str` into its message type, a response or a request, with the same
//! types), so a body that passes here never makes the library fail. Only the explanation of a
//! refusal is ours ([`explain`]), read from the JSON value, because the library's "data did not
//! match any variant" names nothing.

use serde::Deserialize;
use serde_json::Value;
use sessiontree_protocol::ErrorKind;
use std::collections::BTreeMap;
use tower_lsp_server::jsonrpc::{Request, Response};

/// The JSON-RPC error code of a refused message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// -32700: the bytes are not a JSON text (or not a frame).
    ParseError,
    /// -32600: JSON, but not a JSON-RPC request, notification or response.
    InvalidRequest,
}

impl Code {
    /// The protocol's error kind (`data.kind`), whose code this is.
    pub fn kind(self) -> ErrorKind {
        match self {
            Code::ParseError => ErrorKind::ParseError,
            Code::InvalidRequest => ErrorKind::InvalidRequest,
        }
    }
}

/// A message (or part of the stream) that is answered with an error instead of being passed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    pub code: Code,
    /// What is wrong, for people (the answer's `message`, and the log).
    pub message: String,
}

impl Rejection {
    pub(crate) fn parse_error(message: impl Into<String>) -> Rejection {
        Rejection {
            code: Code::ParseError,
            message: message.into(),
        }
    }

    fn invalid_request(message: impl Into<String>) -> Rejection {
        Rejection {
            code: Code::InvalidRequest,
            message: message.into(),
        }
    }

    /// The error response that answers it, framed: `id` is `null` (JSON-RPC 2.0: the id of a
    /// message that could not be read), `data.kind` names the code.
    pub fn answer(&self) -> Vec<u8> {
        let kind = self.code.kind();
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "error": {
                "code": kind.code(),
                "message": self.message,
                "data": { "kind": kind.as_str() },
            },
            "id": null,
        });
        crate::frame(&serde_json::to_vec(&body).unwrap_or_default())
    }
}

/// A message as the library reads it (its own type is crate-private, spelled here the same way
/// with its public parts): a response, else a request, from the text read whole first.
#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code)] // Only whether it decodes matters.
pub enum LibraryMessage {
    Response(Response),
    Request(Request),
}

/// `Ok` when the library decodes `body` as a message; otherwise why not.
///
/// The library's message type reads the whole text into serde's buffer before its fields: for a
/// 100 MB `didOpen` that costs as much again as the library's own decoding. So a request or
/// notification is first checked in one pass that keeps nothing ([`crate::fast`]), which accepts
/// only what the library accepts; anything it does not accept is decided by the library's type
/// itself. (Decoding the library's request type directly is no shortcut: it skips unknown fields
/// without the nesting limit the library's buffer applies.)
pub fn check(body: &[u8]) -> Result<(), Rejection> {
    if body.is_empty() {
        return Err(Rejection::parse_error("the message is empty"));
    }
    let text = std::str::from_utf8(body).map_err(|e| {
        Rejection::parse_error(format!(
            "the message is not UTF-8 (an invalid byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    if crate::fast::plain_request(text) {
        return Ok(());
    }
    match serde_json::from_str::<LibraryMessage>(text) {
        Ok(_) => Ok(()),
        Err(e) if e.is_data() => Err(Rejection::invalid_request(explain(text))),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            Err(Rejection::parse_error(format!(
                "the message nests arrays and objects more than {MAX_DEPTH} levels deep ({e})"
            )))
        }
        Err(e) => Err(Rejection::parse_error(format!(
            "the message is not JSON: {e}"
        ))),
    }
}

/// The deepest nesting of arrays and objects serde_json reads (its recursion limit is 128 and
/// counts down to the level it refuses).
pub const MAX_DEPTH: usize = 127;

/// Why a JSON text the library does not take is not a message.
fn explain(text: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return NOT_A_MESSAGE.to_owned();
    };
    match &value {
        Value::Object(_) => explain_object(text),
        Value::Array(items) if items.is_empty() => "an empty array is not a message".to_owned(),
        Value::Array(items) => format!(
            "a batch of {} messages: LSP does not use JSON-RPC batches (send each message in a frame of its own)",
            items.len()
        ),
        other => format!(
            "{} is not a message (a message is a JSON object)",
            describe(other)
        ),
    }
}

const NOT_A_MESSAGE: &str = "the message is not a JSON-RPC request, notification or response";

/// Why a JSON object is not a message: its fields as written, checked one by one.
fn explain_object(text: &str) -> String {
    use serde_json::value::RawValue;
    let Ok(fields) = serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(text) else {
        return NOT_A_MESSAGE.to_owned();
    };
    let field = |name: &str| fields.get(name).map(|raw| raw.get());
    match field("jsonrpc") {
        None => return "the message has no \"jsonrpc\": \"2.0\"".to_owned(),
        Some(v) if serde_json::from_str::<String>(v).is_ok_and(|v| v == "2.0") => {}
        Some(v) => return format!("\"jsonrpc\" is {}, not \"2.0\"", shown(v)),
    }
    if let Some(id) = field("id") {
        let fine = id == "null"
            || serde_json::from_str::<i64>(id).is_ok()
            || serde_json::from_str::<String>(id).is_ok();
        if !fine {
            let digits = id.strip_prefix('-').unwrap_or(id);
            return if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                format!(
                    "the id {} is beyond the range of a signed 64-bit integer",
                    shown(id)
                )
            } else if serde_json::from_str::<f64>(id).is_ok() {
                format!("the id {} is not an integer", shown(id))
            } else {
                format!("the id is {}; an id is an integer or a string", kind_of(id))
            };
        }
    }
    if let Some(method) = field("method") {
        if serde_json::from_str::<String>(method).is_err() {
            return format!("the method is {}, not a string", kind_of(method));
        }
    }
    // Something else (a repeated field, say): serde's own words, read as a request.
    match serde_json::from_str::<Request>(text) {
        Err(e) => format!("{NOT_A_MESSAGE} ({e})"),
        Ok(_) => NOT_A_MESSAGE.to_owned(),
    }
}

/// A value as written, cut at 40 characters.
fn shown(text: &str) -> String {
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The type of a value written as `text`, with the value ("a boolean (true)").
fn kind_of(text: &str) -> String {
    serde_json::from_str::<Value>(text).map_or_else(|_| shown(text), |v| describe(&v))
}

/// A JSON value's type, with an article ("a number 42").
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(_) | Value::String(_) => {
            let kind = if value.is_number() {
                "number"
            } else {
                "string"
            };
            format!("a {kind} ({})", shown(&value.to_string()))
        }
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> Rejection {
        match check(body.as_bytes()) {
            Ok(()) => panic!("passed: {body}"),
            Err(r) => r,
        }
    }

    #[test]
    fn messages_the_library_decodes_pass() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#,
            // The library takes these too (an empty method, answered MethodNotFound).
            r#"{"jsonrpc":"2.0","id":3}"#,
            " {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n",
        ] {
            assert_eq!(check(body.as_bytes()), Ok(()), "{body}");
        }
    }

    #[test]
    fn each_kind_of_bad_message_is_refused_with_its_code_and_reason() {
        let cases: &[(&[u8], Code, &str)] = &[
            (b"", Code::ParseError, "the message is empty"),
            (b"{\"jsonrpc\":", Code::ParseError, "the message is not JSON: EOF while parsing a value at line 1 column 11"),
            (b"{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\"}", Code::ParseError, "the message is not UTF-8 (an invalid byte at offset 28)"),
            (b"[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]", Code::InvalidRequest, "a batch of 1 messages: LSP does not use JSON-RPC batches (send each message in a frame of its own)"),
            (b"[]", Code::InvalidRequest, "an empty array is not a message"),
            (b"42", Code::InvalidRequest, "a number (42) is not a message (a message is a JSON object)"),
            (b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}", Code::InvalidRequest, "the id 1.5 is not an integer"),
            (b"{\"jsonrpc\":\"2.0\",\"id\":18446744073709551616,\"method\":\"x\"}", Code::InvalidRequest, "the id 18446744073709551616 is beyond the range of a signed 64-bit integer"),
            (b"{\"jsonrpc\":\"2.0\",\"id\":9223372036854775808,\"method\":\"x\"}", Code::InvalidRequest, "the id 9223372036854775808 is beyond the range of a signed 64-bit integer"),
            (b"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"x\"}", Code::InvalidRequest, "the id is a boolean (true); an id is an integer or a string"),
            (b"{\"id\":7,\"method\":\"shutdown\"}", Code::InvalidRequest, "the message has no \"jsonrpc\": \"2.0\""),
            (b"{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"shutdown\"}", Code::InvalidRequest, "\"jsonrpc\" is \"1.0\", not \"2.0\""),
            (b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":5}", Code::InvalidRequest, "the method is a number (5), not a string"),
            (b"{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"x\"}", Code::InvalidRequest, "the id 1e3 is not an integer"),
            (b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"method\":\"y\"}", Code::InvalidRequest, "the message is not a JSON-RPC request, notification or response (duplicate field `method` at line 1 column 38)"),
        ];
        for (body, code, message) in cases {
            let r = match check(body) {
                Ok(()) => panic!("passed: {}", String::from_utf8_lossy(body)),
                Err(r) => r,
            };
            assert_eq!((r.code, r.message.as_str()), (*code, *message));
        }
    }

    #[test]
    fn nesting_is_refused_past_the_librarys_limit() {
        let nested = |depth: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"x","params":{}{}}}"#,
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            )
        };
        // The message object itself is the first level.
        assert_eq!(check(nested(MAX_DEPTH).as_bytes()), Ok(()));
        let r = refused(&nested(MAX_DEPTH + 1));
        assert_eq!(r.code, Code::ParseError);
        assert!(
            r.message
                .starts_with("the message nests arrays and objects more than 127 levels deep"),
            "{}",
            r.message
        );
    }

    #[test]
    fn the_answer_is_an_error_response_with_a_null_id() {
        let answer = refused("42").answer();
        let text = String::from_utf8(answer).unwrap_or_default();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_default();
        assert_eq!(head, format!("Content-Length: {}", body.len()));
        assert_eq!(
            serde_json::from_str::<Value>(body).ok(),
            Some(serde_json::json!({
                "jsonrpc": "2.0",
                "error": {
                    "code": -32600,
                    "message": "a number (42) is not a message (a message is a JSON object)",
                    "data": {"kind": "invalidRequest"},
                },
                "id": null,
            }))
        );
    }
}
