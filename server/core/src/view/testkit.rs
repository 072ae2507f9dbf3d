//! Test helpers: in-memory sessions of either dialect built entry by entry, with readable names
//! for the ids the engine generates.

use crate::dialect::Dialect;
use crate::session::{CompactionArgs, CustomMessageArgs, OpenOptions, Session};
use serde_json::{json, Value};
use std::collections::HashMap;

/// A session under construction plus the ids of its entries by name.
pub(crate) struct Kit {
    pub session: Session,
    pub ids: HashMap<&'static str, String>,
}

fn assistant(text: &str) -> Value {
    json!({
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "test", "provider": "test", "model": "m",
        "stopReason": "stop",
        "timestamp": 1
    })
}

impl Kit {
    pub fn new(dialect: Dialect) -> Kit {
        Kit {
            session: Session::create(
                dialect,
                "/tmp/refgen-home/project",
                None,
                OpenOptions::with_dialect(dialect),
            ),
            ids: HashMap::new(),
        }
    }

    /// The id recorded under `name`.
    pub fn id(&self, name: &str) -> String {
        self.ids
            .get(name)
            .cloned()
            .unwrap_or_else(|| format!("<no {name}>"))
    }

    fn keep(&mut self, name: &'static str, id: crate::error::Result<String>) -> &mut Kit {
        match id {
            Ok(id) => {
                self.ids.insert(name, id);
            }
            Err(e) => panic!("append {name}: {e}"),
        }
        self
    }

    pub fn user(&mut self, name: &'static str, text: &str) -> &mut Kit {
        let r = self
            .session
            .append_message(json!({"role": "user", "content": text, "timestamp": 1}));
        self.keep(name, r)
    }

    pub fn assistant(&mut self, name: &'static str, text: &str) -> &mut Kit {
        let r = self.session.append_message(assistant(text));
        self.keep(name, r)
    }

    /// An assistant turn that only calls a tool, and the tool's result.
    pub fn tool(
        &mut self,
        call: &'static str,
        result: &'static str,
        tool: &str,
        args: Value,
    ) -> &mut Kit {
        let msg = json!({
            "role": "assistant",
            "content": [{"type": "toolCall", "id": format!("call-{call}"), "name": tool, "arguments": args}],
            "api": "test", "provider": "test", "model": "m", "stopReason": "toolUse", "timestamp": 1
        });
        let r = self.session.append_message(msg);
        self.keep(call, r);
        let res = json!({
            "role": "toolResult", "toolCallId": format!("call-{call}"), "toolName": tool,
            "content": [{"type": "text", "text": "ok"}], "isError": false, "timestamp": 1
        });
        let r = self.session.append_message(res);
        self.keep(result, r)
    }

    pub fn message(&mut self, name: &'static str, message: Value) -> &mut Kit {
        let r = self.session.append_message(message);
        self.keep(name, r)
    }

    pub fn custom_message(
        &mut self,
        name: &'static str,
        custom_type: &str,
        text: &str,
        attribution: Option<&str>,
    ) -> &mut Kit {
        let args = CustomMessageArgs {
            custom_type: Some(custom_type.into()),
            content: Some(text.into()),
            display: Some(true.into()),
            attribution: attribution.map(Value::from),
            ..CustomMessageArgs::default()
        };
        let r = self.session.append_custom_message(args);
        self.keep(name, r)
    }

    pub fn compaction(&mut self, name: &'static str, first_kept: &str) -> &mut Kit {
        let args = CompactionArgs {
            summary: "Compacted".into(),
            first_kept_entry_id: self.id(first_kept),
            tokens_before: json!(12_345),
            ..CompactionArgs::default()
        };
        let r = self.session.append_compaction(args);
        self.keep(name, r)
    }

    pub fn model(&mut self, name: &'static str) -> &mut Kit {
        let r = self
            .session
            .append_model_change("openai", "gpt-x", None, false);
        self.keep(name, r)
    }

    pub fn thinking(&mut self, name: &'static str) -> &mut Kit {
        let r = self
            .session
            .append_thinking_level_change(Some("high"), None);
        self.keep(name, r)
    }

    pub fn custom(&mut self, name: &'static str) -> &mut Kit {
        let r = self.session.append_custom("ext-state", None);
        self.keep(name, r)
    }

    pub fn label(&mut self, name: &'static str, target: &str, label: &str) -> &mut Kit {
        let target = self.id(target);
        let r = self.session.append_label_change(&target, Some(label));
        self.keep(name, r)
    }

    pub fn entry(&mut self, name: &'static str, kind: &str, fields: Value) -> &mut Kit {
        let map = fields.as_object().cloned().unwrap_or_default();
        let r = self.session.append_entry(kind, map);
        self.keep(name, r)
    }

    pub fn summary_at(&mut self, name: &'static str, at: &str) -> &mut Kit {
        let at = self.id(at);
        let r = self
            .session
            .branch_with_summary(Some(&at), "Left a branch.", None, None);
        self.keep(name, r)
    }

    pub fn branch(&mut self, to: &str) -> &mut Kit {
        let to = self.id(to);
        if let Err(e) = self.session.branch(&to) {
            panic!("branch: {e}");
        }
        self
    }

    /// The seed notes' example: `Start task` → `Plan` → (A: `Try approach A` → `A result` →
    /// `[milestone] Continue A`, the leaf) and (B: `Try approach B` → `B result`).
    pub fn seed_example(dialect: Dialect) -> Kit {
        let mut k = Kit::new(dialect);
        k.user("start", "Start task").assistant("plan", "Plan");
        k.user("try_a", "Try approach A")
            .assistant("a_result", "A result")
            .user("continue_a", "Continue A");
        k.branch("plan")
            .user("try_b", "Try approach B")
            .assistant("b_result", "B result");
        k.label("milestone", "continue_a", "milestone");
        k.branch("continue_a");
        k
    }
}

/// One text per position of every [`crate::test_sessions::sample_sessions`] file, as `text` reads it from the file's tree
/// model: every position of the fixtures, every `generated_step`-th of the generated sessions.
pub(crate) fn sample_texts(
    dir: &std::path::Path,
    generated_step: usize,
    text: impl Fn(&super::flatten::Model, usize) -> String,
) -> Vec<String> {
    use crate::session::{OpenOptions, Session};
    let mut texts = Vec::new();
    for path in crate::test_sessions::sample_sessions(dir) {
        let Ok(session) = Session::open(&path, OpenOptions::default()) else {
            continue;
        };
        let model = super::flatten::Model::build(&session, None);
        let step = if path.starts_with(dir) {
            generated_step
        } else {
            1
        };
        texts.extend(
            (0..model.nodes.len())
                .step_by(step)
                .map(|pos| text(&model, pos)),
        );
    }
    texts
}
