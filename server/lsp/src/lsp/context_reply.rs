//! `sessionTree/context`'s result, either as the protocol's value or written as JSON text
//! straight from the context: the messages kept as text are copied, not parsed into values and
//! serialized again (see `raw_reply` for how that text reaches the wire).

use sessiontree_core::context::{Message, SessionContext};
use sessiontree_protocol as proto;

/// What the handler answers: the result as a value, or the placeholder of its stashed text.
pub(crate) type ContextReply = crate::raw_reply::Reply<proto::ContextResult>;

/// The parts of a result.
pub(crate) struct Answer {
    revision: u64,
    leaf: Option<String>,
    context: SessionContext,
    /// Whether the model-facing `text` is part of the answer.
    with_text: bool,
}

impl Answer {
    pub(crate) fn new(
        revision: u64,
        leaf: Option<String>,
        context: SessionContext,
        with_text: bool,
    ) -> Answer {
        Answer {
            revision,
            leaf,
            context,
            with_text,
        }
    }

    /// The result as the protocol's type (every message as a value).
    pub(crate) fn into_result(self) -> proto::ContextResult {
        // The model-facing text: `role: text` per LLM message, blank lines between them.
        let text = self.with_text.then(|| {
            self.context
                .llm_texts()
                .iter()
                .map(|(role, body)| format!("{role}: {body}\n"))
                .collect::<Vec<_>>()
                .join("\n")
        });
        proto::ContextResult {
            revision: self.revision,
            leaf: self.leaf,
            state: self.context.state_json(),
            messages: self
                .context
                .messages
                .into_iter()
                .map(Message::into_value)
                .collect(),
            text,
        }
    }

    /// The result as JSON text: the bytes serde_json writes for [`Answer::into_result`]'s value
    /// (fields in the struct's order; tests compare the two).
    pub(crate) fn to_json(&self) -> Vec<u8> {
        // The model-facing text is about as long as the messages' text.
        let messages_len: usize = self.context.messages.iter().map(Message::len_hint).sum();
        let texts = if self.with_text { 2 } else { 1 };
        let mut out = Vec::with_capacity(texts * messages_len + 4096);
        // Writing into a `Vec` does not fail; nothing here can be a map with non-string keys.
        let field = |out: &mut Vec<u8>, name: &str, first: bool| {
            out.extend_from_slice(if first { b"{\"" } else { b",\"" });
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
        };
        field(&mut out, "revision", true);
        let _ = serde_json::to_writer(&mut out, &self.revision);
        field(&mut out, "leaf", false);
        let _ = serde_json::to_writer(&mut out, &self.leaf);
        field(&mut out, "state", false);
        let _ = serde_json::to_writer(&mut out, &self.context.state_json());
        field(&mut out, "messages", false);
        self.context.write_messages_json(&mut out);
        if !self.with_text {
            out.push(b'}');
            return out;
        }
        field(&mut out, "text", false);
        // `role: text\n` per LLM message with a blank line between them, as `into_result` joins
        // them, written piece by piece (escaping a string is escaping its pieces in turn).
        out.push(b'"');
        let mut first = true;
        self.context.for_each_llm_text_json(|role, pieces| {
            if !first {
                out.extend_from_slice(b"\\n");
            }
            first = false;
            let role = serde_json::to_string(role).unwrap_or_default();
            let role = role.strip_prefix('"').and_then(|r| r.strip_suffix('"'));
            out.extend_from_slice(role.unwrap_or_default().as_bytes());
            out.extend_from_slice(b": ");
            for piece in pieces {
                out.extend_from_slice(piece.as_bytes());
            }
            out.extend_from_slice(b"\\n");
        });
        out.push(b'"');
        out.push(b'}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sessions::generated;
    use sessiontree_core::context::session_context;
    use sessiontree_core::Dialect;

    /// The text equals what serde_json writes for the value the result used to be, key order
    /// included, at leaves of generated sessions of both dialects.
    #[test]
    fn the_text_is_the_serialized_result() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let session = generated(dir.path(), dialect, 600, 3);
            let ids: Vec<&str> = session.entries().iter().filter_map(|e| e.id()).collect();
            let mut leaves: Vec<Option<&str>> = vec![None];
            leaves.extend(ids.iter().step_by(17).map(|id| Some(*id)));
            for (leaf, with_text) in leaves.into_iter().flat_map(|l| [(l, true), (l, false)]) {
                let answer = || {
                    let context = session_context(&session, leaf);
                    Answer::new(7, leaf.map(str::to_owned), context, with_text)
                };
                let value =
                    serde_json::to_value(answer().into_result()).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    value["text"].is_string(),
                    with_text,
                    "{dialect:?} at {leaf:?}"
                );
                let expected = serde_json::to_vec(&value).unwrap_or_default();
                let written = answer().to_json();
                assert!(
                    written == expected,
                    "{dialect:?} at {leaf:?}, text {with_text}:\n{}\n{}",
                    String::from_utf8_lossy(&written),
                    String::from_utf8_lossy(&expected)
                );
            }
        }
    }
}
