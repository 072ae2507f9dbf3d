//! Every append of the agents' SessionManager, building each entry with the dialect's fields in
//! the dialect's key order, then recording and persisting it as one line.

use super::{FileState, Session};
use crate::dialect::Dialect;
use crate::entry::Entry;
use crate::error::{Error, Result};
use serde_json::{Map, Value};

/// Arguments of `appendCompaction` (pi uses the first four and `from_extension` as `fromHook`).
#[derive(Debug, Clone, Default)]
pub struct CompactionArgs {
    /// The summary text.
    pub summary: String,
    /// omp: a one-line summary.
    pub short_summary: Option<String>,
    /// The first entry kept after the summary.
    pub first_kept_entry_id: String,
    /// Tokens before compaction.
    pub tokens_before: Value,
    /// omp: tokens after.
    pub tokens_after: Option<Value>,
    /// omp: compaction method.
    pub method: Option<Value>,
    /// omp: provider replay marker.
    pub provider_replay_through_entry_id: Option<String>,
    /// Extension details.
    pub details: Option<Value>,
    /// pi `fromHook` / omp `fromExtension`.
    pub from_extension: Option<bool>,
    /// omp: preserved data.
    pub preserve_data: Option<Value>,
}

/// Arguments of `appendCustomMessageEntry`.
#[derive(Debug, Clone, Default)]
pub struct CustomMessageArgs {
    /// The extension's type (omp: empty → `custom-message`).
    pub custom_type: Option<Value>,
    /// String or content blocks (omp: anything else → `""`).
    pub content: Option<Value>,
    /// Whether the agent's UI shows it (omp: non-boolean → false).
    pub display: Option<Value>,
    /// Extension metadata.
    pub details: Option<Value>,
    /// omp: `"user"` or `"agent"` (default).
    pub attribution: Option<Value>,
    /// omp: an explicit epoch-millisecond time for the entry.
    pub timestamp_ms: Option<i64>,
}

/// Where the base fields go in an entry's key order.
enum BaseAt {
    /// `type, id, parentId, timestamp, …fields` (most entries).
    Start,
    /// `type, …fields, id, parentId, timestamp` (custom and custom_message).
    End,
}

impl Session {
    /// Builds, records and persists one entry under the current leaf; returns its id.
    fn record(
        &mut self,
        kind: &str,
        fields: Vec<(&str, Option<Value>)>,
        at: BaseAt,
        timestamp: Option<String>,
    ) -> Result<String> {
        self.check_writable()?;
        self.catch_up()?;
        let id = self.fresh_id();
        let parent = self.leaf.as_deref().map_or(Value::Null, Value::from);
        let timestamp = timestamp.unwrap_or_else(|| self.now_iso());
        let mut map = Map::new();
        map.insert("type".into(), kind.into());
        let base = |map: &mut Map<String, Value>| {
            map.insert("id".into(), id.as_str().into());
            map.insert("parentId".into(), parent.clone());
            map.insert("timestamp".into(), timestamp.as_str().into());
        };
        if let BaseAt::Start = at {
            base(&mut map);
        }
        for (key, value) in fields {
            if let Some(value) = value {
                map.insert(key.to_owned(), value);
            }
        }
        if let BaseAt::End = at {
            base(&mut map);
        }
        self.record_value(Value::Object(map))?;
        Ok(id)
    }

    /// Records a fully built entry: appended to the file first (so memory never holds a line the
    /// disk lacks), then indexed.
    pub(crate) fn record_value(&mut self, value: Value) -> Result<()> {
        let mut entry = Entry::from_value(&value);
        if let FileState::Written { .. } = self.file {
            let line = self.append_written(&entry.raw())?;
            entry.line = line;
            self.insert(entry);
        } else {
            let raw = entry.raw().into_owned();
            self.insert(entry);
            self.persist_entry(&raw)?;
        }
        self.settle_parents();
        self.revision += 1;
        Ok(())
    }

    /// `appendMessage(message)`.
    pub fn append_message(&mut self, message: Value) -> Result<String> {
        if !message.is_object() {
            return Err(Error::InvalidInput(
                "a message must be a JSON object".into(),
            ));
        }
        self.record(
            "message",
            vec![("message", Some(message))],
            BaseAt::Start,
            None,
        )
    }

    /// `appendThinkingLevelChange` (omp also records the configured level; both become `null` when absent).
    pub fn append_thinking_level_change(
        &mut self,
        level: Option<&str>,
        configured: Option<&str>,
    ) -> Result<String> {
        let fields = match self.dialect {
            Dialect::Pi => vec![("thinkingLevel", level.map(Value::from))],
            Dialect::Omp => vec![
                (
                    "thinkingLevel",
                    Some(level.map_or(Value::Null, Value::from)),
                ),
                (
                    "configured",
                    Some(configured.map_or(Value::Null, Value::from)),
                ),
            ],
        };
        self.record("thinking_level_change", fields, BaseAt::Start, None)
    }

    /// `appendModelChange`: pi writes `provider`, `modelId`; omp `model: "provider/id"`, `role`,
    /// `resolvedModelIsFallback`.
    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
        role: Option<&str>,
        fallback: bool,
    ) -> Result<String> {
        let fields = match self.dialect {
            Dialect::Pi => vec![
                ("provider", Some(provider.into())),
                ("modelId", Some(model_id.into())),
            ],
            Dialect::Omp => vec![
                ("model", Some(format!("{provider}/{model_id}").into())),
                ("role", role.map(Value::from)),
                ("resolvedModelIsFallback", Some(fallback.into())),
            ],
        };
        self.record("model_change", fields, BaseAt::Start, None)
    }

    /// `appendCompaction`.
    pub fn append_compaction(&mut self, args: CompactionArgs) -> Result<String> {
        let fields = match self.dialect {
            Dialect::Pi => vec![
                ("summary", Some(args.summary.into())),
                ("firstKeptEntryId", Some(args.first_kept_entry_id.into())),
                ("tokensBefore", Some(args.tokens_before)),
                ("details", args.details),
                ("fromHook", args.from_extension.map(Value::from)),
            ],
            Dialect::Omp => vec![
                ("summary", Some(args.summary.into())),
                ("shortSummary", args.short_summary.map(Value::from)),
                ("firstKeptEntryId", Some(args.first_kept_entry_id.into())),
                ("tokensBefore", Some(args.tokens_before)),
                ("tokensAfter", args.tokens_after),
                ("method", args.method),
                (
                    "providerReplayThroughEntryId",
                    args.provider_replay_through_entry_id.map(Value::from),
                ),
                ("details", args.details),
                ("fromExtension", args.from_extension.map(Value::from)),
                ("preserveData", args.preserve_data),
            ],
        };
        self.record("compaction", fields, BaseAt::Start, None)
    }

    /// `appendCustomEntry(customType, data)`.
    pub fn append_custom(&mut self, custom_type: &str, data: Option<Value>) -> Result<String> {
        self.record(
            "custom",
            vec![("customType", Some(custom_type.into())), ("data", data)],
            BaseAt::End,
            None,
        )
    }

    /// `appendCustomMessageEntry` (omp normalizes its input and records `attribution`).
    pub fn append_custom_message(&mut self, args: CustomMessageArgs) -> Result<String> {
        match self.dialect {
            Dialect::Pi => self.record(
                "custom_message",
                vec![
                    ("customType", args.custom_type),
                    ("content", args.content),
                    ("display", args.display),
                    ("details", args.details),
                ],
                BaseAt::End,
                None,
            ),
            Dialect::Omp => {
                let custom_type = match args.custom_type {
                    Some(Value::String(s)) if !s.is_empty() => s,
                    _ => "custom-message".to_owned(),
                };
                let content = match args.content {
                    Some(c @ (Value::String(_) | Value::Array(_))) => c,
                    _ => Value::from(""),
                };
                let display = matches!(args.display, Some(Value::Bool(true)));
                let details = args.details.map(|d| match d {
                    Value::Object(mut m) if m.contains_key("__queueChipText") => {
                        m.shift_remove("__queueChipText");
                        Value::Object(m)
                    }
                    other => other,
                });
                let attribution = if args.attribution == Some(Value::from("user")) {
                    "user"
                } else {
                    "agent"
                };
                let timestamp = args.timestamp_ms.map(crate::time::format_iso);
                self.record(
                    "custom_message",
                    vec![
                        ("customType", Some(custom_type.into())),
                        ("content", Some(content)),
                        ("display", Some(display.into())),
                        ("details", details),
                        ("attribution", Some(attribution.into())),
                    ],
                    BaseAt::End,
                    timestamp,
                )
            }
        }
    }

    /// `appendLabelChange(targetId, label)`: a `label` entry under the leaf (it moves the leaf);
    /// `None` or `""` clears.
    pub fn append_label_change(&mut self, target: &str, label: Option<&str>) -> Result<String> {
        if !self.contains(target) {
            return Err(Error::EntryNotFound(target.to_owned()));
        }
        self.record(
            "label",
            vec![
                ("targetId", Some(target.into())),
                ("label", label.map(Value::from)),
            ],
            BaseAt::Start,
            None,
        )
    }

    /// omp `appendServiceTierChange`.
    pub fn append_service_tier_change(&mut self, tier: Value) -> Result<String> {
        self.omp_only("service tier changes")?;
        self.record(
            "service_tier_change",
            vec![("serviceTier", Some(tier))],
            BaseAt::Start,
            None,
        )
    }

    /// omp `appendModeChange`.
    pub fn append_mode_change(&mut self, mode: &str, data: Option<Value>) -> Result<String> {
        self.omp_only("mode changes")?;
        self.record(
            "mode_change",
            vec![("mode", Some(mode.into())), ("data", data)],
            BaseAt::Start,
            None,
        )
    }

    /// omp `appendTtsrInjection`.
    pub fn append_ttsr_injection(&mut self, rules: Vec<String>) -> Result<String> {
        self.omp_only("TTSR injections")?;
        self.record(
            "ttsr_injection",
            vec![("injectedRules", Some(rules.into()))],
            BaseAt::Start,
            None,
        )
    }

    /// omp `appendResetBoundary`.
    pub fn append_reset_boundary(&mut self) -> Result<String> {
        self.omp_only("reset boundaries")?;
        self.record("reset_boundary", vec![], BaseAt::Start, None)
    }

    /// Appends an entry of any type from caller-given fields (after the base fields, in the
    /// caller's order). `custom`/`custom_message` put the base fields last, as the agents do.
    pub fn append_entry(&mut self, kind: &str, fields: Map<String, Value>) -> Result<String> {
        if kind.is_empty() || kind == "session" || kind == "title" {
            return Err(Error::InvalidInput(format!(
                "cannot append an entry of type `{kind}`"
            )));
        }
        for reserved in ["type", "id", "parentId", "timestamp"] {
            if fields.contains_key(reserved) {
                return Err(Error::InvalidInput(format!(
                    "`{reserved}` is set by the engine, not the caller"
                )));
            }
        }
        let at = if matches!(kind, "custom" | "custom_message") {
            BaseAt::End
        } else {
            BaseAt::Start
        };
        let keys: Vec<(String, Value)> = fields.into_iter().collect();
        let fields: Vec<(&str, Option<Value>)> = keys
            .iter()
            .map(|(k, v)| (k.as_str(), Some(v.clone())))
            .collect();
        self.record(kind, fields, at, None)
    }

    /// `branchWithSummary(id | null, summary, details, fromHook/fromExtension)`: moves the leaf to
    /// `target` and appends a `branch_summary` there (`fromId` is the target or `"root"`).
    pub fn branch_with_summary(
        &mut self,
        target: Option<&str>,
        summary: &str,
        details: Option<Value>,
        from_extension: Option<bool>,
    ) -> Result<String> {
        if let Some(target) = target {
            if !self.contains(target) {
                return Err(Error::EntryNotFound(target.to_owned()));
            }
        }
        self.check_writable()?;
        self.catch_up()?;
        let previous_leaf = self.leaf.clone();
        self.leaf = target.map(Into::into);
        let flag = match self.dialect {
            Dialect::Pi => "fromHook",
            Dialect::Omp => "fromExtension",
        };
        let result = self.record(
            "branch_summary",
            vec![
                ("fromId", Some(target.unwrap_or("root").into())),
                ("summary", Some(summary.into())),
                ("details", details),
                (flag, from_extension.map(Value::from)),
            ],
            BaseAt::Start,
            None,
        );
        if result.is_err() {
            self.leaf = previous_leaf;
        }
        result
    }

    fn omp_only(&self, what: &str) -> Result<()> {
        match self.dialect {
            Dialect::Omp => Ok(()),
            Dialect::Pi => Err(Error::Unsupported(format!(
                "{what} exist only in omp sessions"
            ))),
        }
    }

    /// Appends a line to a written file and returns its line number.
    fn append_written(&mut self, raw: &str) -> Result<usize> {
        self.append_line(raw)?;
        match &self.file {
            FileState::Written { lines, .. } => Ok(*lines),
            _ => Ok(0),
        }
    }
}
