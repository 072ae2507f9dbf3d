//! What the model sees: each agent's `buildSessionContext()` (settings and messages along a path)
//! and `convertToLlm()` (the provider-facing messages), per dialect, exact to the agents' output
//! key for key. Input is the already-resolved path, root first, as JSON values; resolving the leaf
//! and walking parents is the caller's job, and nothing here reads files or panics on odd entries
//! (missing fields, wrong types and non-object values are skipped or defaulted as the agents do,
//! or skipped where the agents would crash).
//!
//! `state` holds the settings, `pi`/`omp` the message emission rules, `emit` the synthesized
//! messages, `llm`/`omp_llm` the LLM conversion, `template` omp's prompt rendering, `reduce` the fixture
//! shapes; the JavaScript value semantics they share are [`crate::js`]. `message_facts` reads kept
//! message entries for the facts the rules need without building values (their texts shared with
//! the blocks they were read in, `text`), and `canonical` tells whether such a text is what
//! serde_json writes for it.

mod canonical;
mod emit;
mod llm;
mod llm_shapes;
mod message;
mod message_facts;
mod omp;
mod omp_llm;
mod pi;
mod reduce;
mod session;
mod state;
pub(crate) mod template;
mod text;

pub use message::Message;
pub use session::session_context;
pub use state::{ContextState, OmpState, PiModel, PiState};

use crate::dialect::Dialect;
use crate::js;
use message::MessageRef;
use message_facts::Probed;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// The context an agent builds for one path: settings plus messages.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    /// Which agent's rules produced this context.
    pub dialect: Dialect,
    /// Everything `buildSessionContext()` returns except `messages`.
    pub state: ContextState,
    /// The context messages exactly as the agent returns them (key order preserved).
    pub messages: Vec<Message>,
}

/// Builds the context for `path` (the entries from root to leaf, root first) under `dialect`'s
/// rules. An empty path gives the agents' empty context.
pub fn build_context(dialect: Dialect, path: &[Value]) -> SessionContext {
    build(dialect, Values::Shared(path), Vec::new())
}

/// [`build_context`] on a path the caller no longer needs, where `probed` holds, for message
/// entries read by the probe, their message (such an entry's value then holds only its `type` and
/// `id`): the messages are moved out of their entries instead of copied.
pub(crate) fn build_context_owned(
    dialect: Dialect,
    mut path: Vec<Value>,
    probed: Vec<Option<Arc<Probed>>>,
) -> SessionContext {
    build(dialect, Values::Owned(&mut path), probed)
}

fn build(dialect: Dialect, values: Values<'_>, probed: Vec<Option<Arc<Probed>>>) -> SessionContext {
    let mut path = Path { values, probed };
    match dialect {
        Dialect::Pi => {
            let state = ContextState::Pi(state::pi_state(path.view()));
            let emitted = pi::walk(path.view());
            SessionContext {
                dialect,
                state,
                messages: path.materialize(emitted),
            }
        }
        Dialect::Omp => {
            let state = ContextState::Omp(state::omp_state(path.view()));
            let emitted = omp::walk(path.view());
            let messages = path.materialize(emitted);
            SessionContext {
                dialect,
                state,
                messages: omp::finish(messages, path.view()),
            }
        }
    }
}

/// The entries' values: borrowed (messages are copied) or owned (moved).
enum Values<'a> {
    Shared(&'a [Value]),
    Owned(&'a mut [Value]),
}

/// A path as the message walks see it.
struct Path<'a> {
    values: Values<'a>,
    /// Empty, or per entry the probed message of a message entry.
    probed: Vec<Option<Arc<Probed>>>,
}

/// The path as the rules read it: the entries' values, and each message entry's message in
/// whichever form it is.
#[derive(Clone, Copy)]
pub(crate) struct PathRef<'a> {
    pub(crate) values: &'a [Value],
    probed: &'a [Option<Arc<Probed>>],
}

impl<'a> PathRef<'a> {
    /// A path of values only.
    #[cfg(test)]
    pub(crate) fn of(values: &'a [Value]) -> PathRef<'a> {
        PathRef {
            values,
            probed: &[],
        }
    }

    /// The `message` of the `message` entry at `i`, when it is an object.
    pub(crate) fn message(self, i: usize) -> Option<MessageRef<'a>> {
        if let Some(Some(p)) = self.probed.get(i) {
            return Some(MessageRef::Raw(&p.facts));
        }
        let entry = &self.values[i];
        match js::get(entry, "message") {
            Some(m @ Value::Object(_)) if js::is_type(entry, "message") => {
                Some(MessageRef::Value(m))
            }
            _ => None,
        }
    }
}

/// One message the walk emits: the `message` of the path entry at an index (omp may emit one twice:
/// a rollover's request inside a remote replay range), or a message made for the context.
pub(crate) enum Emitted {
    Entry(usize),
    Made(Value),
}

impl Path<'_> {
    fn view(&self) -> PathRef<'_> {
        PathRef {
            values: match &self.values {
                Values::Shared(path) => path,
                Values::Owned(path) => path,
            },
            probed: &self.probed,
        }
    }

    fn materialize(&mut self, emitted: Vec<Emitted>) -> Vec<Message> {
        // An entry emitted twice (a replay range overlapping the re-emitted request) is copied
        // for all but its last use.
        let mut uses = vec![0u32; self.view().values.len()];
        for e in &emitted {
            if let Emitted::Entry(i) = e {
                uses[*i] += 1;
            }
        }
        emitted
            .into_iter()
            .map(|e| match e {
                Emitted::Made(value) => Message::from(value),
                Emitted::Entry(i) => {
                    uses[i] -= 1;
                    let last = uses[i] == 0;
                    if let Some(slot) = self.probed.get_mut(i).filter(|p| p.is_some()) {
                        let probed = if last { slot.take() } else { slot.clone() };
                        return probed.map_or(Message::from(Value::Null), Message::raw);
                    }
                    match &mut self.values {
                        Values::Owned(path) if last => match &mut path[i] {
                            Value::Object(entry) => entry
                                .get_mut("message")
                                .map(std::mem::take)
                                .unwrap_or(Value::Null),
                            _ => Value::Null,
                        },
                        values => {
                            let values: &[Value] = match values {
                                Values::Shared(path) => path,
                                Values::Owned(path) => path,
                            };
                            js::get(&values[i], "message")
                                .cloned()
                                .unwrap_or(Value::Null)
                        }
                    }
                    .into()
                }
            })
            .collect()
    }
}

impl SessionContext {
    /// The messages after the dialect's `convertToLlm()`, in full (roles `user`, `assistant`,
    /// `toolResult`, and for omp `developer`), wrapper texts included.
    pub fn llm_messages(&self) -> Vec<Value> {
        llm::convert(self.dialect, &self.messages)
    }

    /// The `role` and `text` of every LLM message (the fixtures' reduced `context.llm` shape;
    /// `""` for a role that is not a string), without building the LLM messages of the messages
    /// that `convertToLlm` passes on unchanged.
    pub fn llm_texts(&self) -> Vec<(String, String)> {
        self.collect_llm_texts(false)
    }

    /// [`SessionContext::llm_texts`] with each text as JSON writes it inside a string's quotes
    /// (the roles as they are): the bytes `serde_json` writes for the text, read from a message's
    /// text without decoding and escaping it again where that text is what serde_json writes.
    pub fn llm_texts_json(&self) -> Vec<(String, String)> {
        self.collect_llm_texts(true)
    }

    /// [`SessionContext::llm_texts_json`] without copying: `each(role, pieces)` per LLM text, the
    /// text being its pieces end to end (borrowed from the messages where they hold it).
    pub fn for_each_llm_text_json(&self, each: impl FnMut(&str, &[&str])) {
        self.for_each_llm_text(true, each);
    }

    fn collect_llm_texts(&self, json: bool) -> Vec<(String, String)> {
        let mut out = Vec::with_capacity(self.messages.len());
        self.for_each_llm_text(json, |role, pieces| {
            out.push((role.to_owned(), pieces.concat()))
        });
        out
    }

    /// The LLM texts, each as pieces: as JSON writes them inside a string's quotes when `json`.
    fn for_each_llm_text(&self, json: bool, mut each: impl FnMut(&str, &[&str])) {
        for i in 0..self.messages.len() {
            let written = json
                .then(|| llm::plain_text_json(self.dialect, &self.messages, i))
                .flatten();
            if let Some((role, pieces)) = written {
                each(role, &pieces);
                continue;
            }
            if let Some((role, text)) = llm::plain_text(self.dialect, &self.messages, i) {
                each(role, &[&escaped(json, &text)]);
                continue;
            }
            for m in llm::convert_at(self.dialect, &self.messages, i) {
                let reduced = reduce::llm(&m);
                let role = js::str_of(js::get(&reduced, "role")).unwrap_or_default();
                let text = js::str_of(js::get(&reduced, "text")).unwrap_or_default();
                each(role, &[&escaped(json, text)]);
            }
        }
    }

    /// The messages as one JSON array, the bytes `serde_json::to_writer` writes for the array of
    /// their values, without building the values of messages whose text is already those bytes.
    pub fn write_messages_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, message) in self.messages.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            message.write_json(out);
        }
        out.push(b']');
    }

    /// The state as the agent's object (`undefined` fields left out).
    pub fn state_json(&self) -> Value {
        serde_json::to_value(&self.state).unwrap_or(Value::Null)
    }

    /// The messages in the fixtures' reduced `context.messages` shape.
    pub fn reduced_messages(&self) -> Vec<Value> {
        self.messages
            .iter()
            .map(|m| reduce::message(&m.value()))
            .collect()
    }

    /// The LLM messages in the fixtures' reduced `context.llm` shape (`{role, text, toolCalls?, toolCallId?}`).
    pub fn reduced_llm(&self) -> Vec<Value> {
        self.llm_messages().iter().map(reduce::llm).collect()
    }

    /// `{state, messages, rawMessages, llm}` exactly as a fixture's `context` records it.
    pub fn to_fixture_json(&self) -> Value {
        let mut map = serde_json::Map::new();
        map.insert("state".to_owned(), self.state_json());
        map.insert("messages".to_owned(), Value::Array(self.reduced_messages()));
        map.insert(
            "rawMessages".to_owned(),
            Value::Array(
                self.messages
                    .iter()
                    .map(|m| m.value().into_owned())
                    .collect(),
            ),
        );
        map.insert("llm".to_owned(), Value::Array(self.reduced_llm()));
        Value::Object(map)
    }
}

/// `text` as serde_json writes it inside a string's quotes.
fn escape_json(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default()
        .to_owned()
}

/// `text` as JSON writes it inside a string's quotes when `json`, else as it is.
fn escaped(json: bool, text: &str) -> Cow<'_, str> {
    if json {
        Cow::Owned(escape_json(text))
    } else {
        Cow::Borrowed(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_paths_give_the_agents_empty_contexts() {
        assert_eq!(
            build_context(Dialect::Pi, &[]).to_fixture_json(),
            json!({"state":{"thinkingLevel":"off","model":null},"messages":[],"rawMessages":[],"llm":[]})
        );
        assert_eq!(
            build_context(Dialect::Omp, &[]).state_json(),
            json!({"thinkingLevel":"off","models":{},"injectedTtsrRules":[],"mode":"none"})
        );
    }

    #[test]
    fn moving_messages_out_gives_the_same_context_even_for_a_message_emitted_twice() {
        let msg = |id: &str, parent: Option<&str>, role: &str, text: &str| {
            json!({"type":"message","id":id,"parentId":parent,"timestamp":"2026-01-01T00:00:00.000Z",
                "message":{"role":role,"content":[{"type":"text","text":text}],"timestamp":1}})
        };
        let path = vec![
            msg("a", None, "user", "first"),
            msg("b", Some("a"), "assistant", "one"),
            msg("c", Some("b"), "user", "the request"),
            msg("d", Some("c"), "assistant", "two"),
            json!({"type":"compaction","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:01.000Z",
                "summary":"s","firstKeptEntryId":"d","tokensBefore":10,
                "details":{"kind":"experimental-context-rollover"},
                "providerReplayThroughEntryId":"a",
                "preserveData":{"openaiRemoteCompaction":{"provider":"openai","replacementHistory":[{"type":"message"}]}}}),
            msg("f", Some("e"), "user", "after"),
        ];
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let shared = build_context(dialect, &path);
            let owned = build_context_owned(dialect, path.clone(), Vec::new());
            assert_eq!(owned, shared, "{dialect:?}");
        }
        let omp = build_context(Dialect::Omp, &path);
        let requests = omp
            .messages
            .iter()
            .filter(|m| m.value().to_string().contains("the request"))
            .count();
        assert_eq!(
            requests, 2,
            "the request is emitted twice: {:?}",
            omp.messages
        );
    }

    #[test]
    fn odd_entries_do_not_panic() {
        let path = vec![
            json!(null),
            json!([1, 2, 3]),
            json!({"type":"message","message":"text"}),
            json!({"type":"message","message":{"role":"assistant","content":"not blocks","stopReason":"error"}}),
            json!({"type":"custom_message","content":7}),
            json!({"type":"branch_summary","summary":{"x":1},"timestamp":12}),
            json!({"type":"compaction","firstKeptEntryId":null}),
            json!({"type":"ttsr_injection","injectedRules":5}),
            json!({"type":"model_change","model":"a/b","role":{"weird":true}}),
        ];
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let ctx = build_context(dialect, &path);
            let _ = ctx.to_fixture_json();
        }
    }
}
