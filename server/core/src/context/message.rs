//! [`Message`]: one context message, either a value (messages the rules make or change, and all of
//! [`build_context`](super::build_context)'s) or a message entry's message passed through as its
//! JSON text with the facts the rules read ([`message_facts`](super::message_facts)). Consumers that need a value
//! parse it on demand, which gives exactly the value parsing the entry would have given, so
//! answers built from either form are the same.

use super::message_facts::{Facts, Probed, Role};
use crate::js;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// One message of a [`SessionContext`](super::SessionContext), as the agent returns it.
#[derive(Debug, Clone)]
pub struct Message(Repr);

#[derive(Debug, Clone)]
enum Repr {
    Value(Value),
    Raw(Arc<Probed>),
}

impl Message {
    pub(crate) fn raw(probed: Arc<Probed>) -> Message {
        Message(Repr::Raw(probed))
    }

    /// The message as a value (parsed now for a message kept as text).
    pub fn value(&self) -> Cow<'_, Value> {
        match &self.0 {
            Repr::Value(v) => Cow::Borrowed(v),
            Repr::Raw(p) => Cow::Owned(parse(p.json.as_str())),
        }
    }

    /// The message as a value.
    pub fn into_value(self) -> Value {
        match self.0 {
            Repr::Value(v) => v,
            Repr::Raw(p) => parse(p.json.as_str()),
        }
    }

    /// Writes the message as `serde_json::to_writer` writes [`Message::value`]: the text of a
    /// message kept as text is copied when it already is those bytes (see `canonical`), and only
    /// other messages are parsed and serialized.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::Raw(p) if p.plain => out.extend_from_slice(p.json.as_str().as_bytes()),
            // Writing a value into a `Vec` does not fail.
            _ => drop(serde_json::to_writer(out, &*self.value())),
        }
    }

    /// About how many bytes [`Message::write_json`] writes (to size buffers).
    pub fn len_hint(&self) -> usize {
        match &self.0 {
            Repr::Raw(p) => p.json.as_str().len(),
            Repr::Value(_) => 256,
        }
    }

    pub(crate) fn view(&self) -> MessageRef<'_> {
        match &self.0 {
            Repr::Value(v) => MessageRef::Value(v),
            Repr::Raw(p) => MessageRef::Raw(&p.facts),
        }
    }

    /// For a probed message that convertToLlm passes on with its role and content unchanged: its
    /// role and the text of its content (the reduced LLM shape's `role` and `text`).
    pub(crate) fn plain_llm_text(&self, dialect: crate::Dialect) -> Option<(&'static str, String)> {
        let (role, p) = self.plain_llm_role(dialect)?;
        Some((role, super::message_facts::content_text(p)?))
    }

    /// The role of a probed message that convertToLlm passes on unchanged, and the message.
    fn plain_llm_role(&self, dialect: crate::Dialect) -> Option<(&'static str, &Probed)> {
        let Repr::Raw(p) = &self.0 else {
            return None;
        };
        let f = &p.facts;
        let plain = dialect == crate::Dialect::Pi
            || match f.role {
                Role::User => true,
                Role::ToolResult => !f.has_pruned_at,
                // Interrupted turns may lose thinking blocks or the whole turn.
                Role::Assistant => !user_interrupted(f),
            };
        plain.then_some((f.role.as_str(), &**p))
    }
}

impl Message {
    /// [`Message::plain_llm_text`] with the text as JSON writes it inside a string's quotes, in
    /// pieces taken from the message's text, when that text is what serde_json writes.
    pub(crate) fn plain_llm_text_json(
        &self,
        dialect: crate::Dialect,
    ) -> Option<(&'static str, Vec<&str>)> {
        match &self.0 {
            Repr::Raw(p) if p.plain => {
                let (role, _) = self.plain_llm_role(dialect)?;
                Some((role, super::message_facts::content_text_json(p)?))
            }
            _ => None,
        }
    }
}

impl From<Value> for Message {
    fn from(value: Value) -> Message {
        Message(Repr::Value(value))
    }
}

/// Messages are equal when their values are.
impl PartialEq for Message {
    fn eq(&self, other: &Message) -> bool {
        self.value() == other.value()
    }
}

/// Serializes as the message's value.
impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

/// The probe validated the text as the value parser reads it, so this does not fail.
/// The value of a message kept as text. The probe accepted the text only where serde_json's value
/// parser accepts it (its tests check that), so the fallback is never taken.
fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// `stopReason === "aborted" && errorMessage === "Interrupted by user"` (omp).
fn user_interrupted(f: &Facts) -> bool {
    js::str_of(f.stop_reason.as_ref()) == Some("aborted")
        && js::str_of(f.error_message.as_ref()) == Some(super::omp_llm::USER_INTERRUPT_LABEL)
}

/// What the rules read of a message, whichever form it is in.
#[derive(Clone, Copy)]
pub(crate) enum MessageRef<'a> {
    Value(&'a Value),
    Raw(&'a Facts),
}

impl<'a> MessageRef<'a> {
    pub(crate) fn role(self) -> Option<&'a str> {
        match self {
            MessageRef::Value(v) => js::str_of(js::get(v, "role")),
            MessageRef::Raw(f) => Some(f.role.as_str()),
        }
    }

    pub(crate) fn is_role(self, role: &str) -> bool {
        self.role() == Some(role)
    }

    pub(crate) fn provider(self) -> Option<&'a Value> {
        match self {
            MessageRef::Value(v) => js::get(v, "provider"),
            MessageRef::Raw(f) => f.provider.as_ref(),
        }
    }

    pub(crate) fn model(self) -> Option<&'a Value> {
        match self {
            MessageRef::Value(v) => js::get(v, "model"),
            MessageRef::Raw(f) => f.model.as_ref(),
        }
    }

    pub(crate) fn stop_reason(self) -> Option<&'a str> {
        match self {
            MessageRef::Value(v) => js::str_of(js::get(v, "stopReason")),
            MessageRef::Raw(f) => js::str_of(f.stop_reason.as_ref()),
        }
    }

    pub(crate) fn retry_recovery(self) -> bool {
        match self {
            MessageRef::Value(v) => js::truthy(js::get(v, "retryRecovery")),
            MessageRef::Raw(f) => js::truthy(f.retry_recovery.as_ref()),
        }
    }

    pub(crate) fn tool_call_id(self) -> Option<&'a Value> {
        match self {
            MessageRef::Value(v) => js::get(v, "toolCallId"),
            MessageRef::Raw(f) => f.tool_call_id.as_ref(),
        }
    }

    /// `customType` (probed messages are never custom messages).
    pub(crate) fn custom_type(self) -> Option<&'a str> {
        match self {
            MessageRef::Value(v) => js::str_of(js::get(v, "customType")),
            MessageRef::Raw(_) => None,
        }
    }

    /// The `id` of every `toolCall` block of an array `content`.
    pub(crate) fn tool_call_ids(self) -> Vec<Option<&'a Value>> {
        match self {
            MessageRef::Value(v) => match js::get(v, "content") {
                Some(Value::Array(blocks)) => blocks
                    .iter()
                    .filter(|b| js::is_type(b, "toolCall"))
                    .map(|b| js::get(b, "id"))
                    .collect(),
                _ => Vec::new(),
            },
            MessageRef::Raw(f) => f.tool_call_ids.iter().map(Option::as_ref).collect(),
        }
    }

    /// omp `isEmptyErrorTurn`.
    pub(crate) fn is_empty_error_turn(self) -> bool {
        match self {
            MessageRef::Value(v) => super::omp::is_empty_error_turn(v),
            MessageRef::Raw(f) => {
                js::str_of(f.stop_reason.as_ref()) == Some("error") && !f.has_meaningful_block
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::context::session_context;
    use crate::session::{OpenOptions, Session};
    use crate::Dialect;
    use serde_json::Value;

    /// The leaves to check in a session: the default one and every entry of a small session,
    /// about thirty spread over a large one plus its last ten.
    fn leaves(session: &Session) -> Vec<Option<&str>> {
        let ids: Vec<&str> = session.entries().iter().filter_map(|e| e.id()).collect();
        let mut leaves: Vec<Option<&str>> = vec![None];
        if ids.len() <= 400 {
            leaves.extend(ids.iter().map(|id| Some(*id)));
        } else {
            leaves.extend(ids.iter().step_by(ids.len() / 30).map(|id| Some(*id)));
            leaves.extend(ids.iter().rev().take(10).map(|id| Some(*id)));
        }
        leaves
    }

    /// The messages written without their values are the bytes serde_json writes for the array
    /// of their values, and the LLM texts read as JSON are the escaped texts, at the leaves of
    /// every fixture session and of generated sessions, under both dialects' rules; and most
    /// probed messages are written without a value.
    #[test]
    fn written_messages_and_texts_equal_the_serialized_values_at_every_leaf() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (mut contexts, mut copied, mut messages) = (0, 0, 0);
        for path in crate::test_sessions::sample_sessions(dir.path()) {
            for dialect in [Dialect::Pi, Dialect::Omp] {
                let Ok(session) = Session::open(&path, OpenOptions::with_dialect(dialect)) else {
                    continue;
                };
                for leaf in leaves(&session) {
                    let context = session_context(&session, leaf);
                    let mut written = Vec::new();
                    context.write_messages_json(&mut written);
                    let values: Vec<Value> = context
                        .messages
                        .iter()
                        .map(|m| m.value().into_owned())
                        .collect();
                    let expected = serde_json::to_vec(&values).unwrap_or_default();
                    assert!(
                        written == expected,
                        "{} {dialect:?} at {leaf:?}:\n  {}\n  {}",
                        path.display(),
                        String::from_utf8_lossy(&written),
                        String::from_utf8_lossy(&expected),
                    );
                    let texts: Vec<(String, String)> = context
                        .llm_texts()
                        .into_iter()
                        .map(|(role, text)| (role, super::super::escape_json(&text)))
                        .collect();
                    assert_eq!(context.llm_texts_json(), texts, "{}", path.display());
                    contexts += 1;
                    messages += context.messages.len();
                    copied += context
                        .messages
                        .iter()
                        .filter(|m| matches!(&m.0, super::Repr::Raw(p) if p.plain))
                        .count();
                }
            }
        }
        assert!(contexts > 1000, "{contexts} contexts");
        assert!(
            copied * 10 > messages * 7,
            "{copied} of {messages} messages copied"
        );
    }
}
