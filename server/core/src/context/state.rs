//! The settings `buildSessionContext` reads off the path besides the messages: thinking level and
//! model for pi; thinking levels, model roles, service tier, TTSR rules and mode for omp. Walks the
//! path root to leaf, later entries winning, exactly as each agent does, and serializes to the
//! agents' own object shape (JavaScript `undefined` fields left out). Does not touch messages.

use super::PathRef;
use crate::js;
use serde::Serialize;
use serde_json::{Map, Value};

/// What `buildSessionContext` returns besides `messages`, per dialect.
// One state is built per context and never stored in bulk, so the size gap between the variants
// costs nothing worth an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContextState {
    /// Upstream pi's `{thinkingLevel, model}`.
    Pi(PiState),
    /// oh-my-pi's `{thinkingLevel, configuredThinkingLevel?, serviceTier?, models, injectedTtsrRules, mode, modeData?}`.
    Omp(OmpState),
}

/// pi's context settings. Values are kept as the entries hold them; `None` is JavaScript's
/// `undefined` (the key is left out), which only happens when an entry lacks the field.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PiState {
    /// From the last `thinking_level_change` (default `"off"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<Value>,
    /// From the last `model_change` or assistant message, whichever is later; `null` when neither.
    pub model: Option<PiModel>,
}

/// pi's `{provider, modelId}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PiModel {
    /// `provider` of the `model_change`, or of the assistant message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<Value>,
    /// `modelId` of the `model_change`, or `model` of the assistant message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_id: Option<Value>,
}

/// oh-my-pi's context settings (`None` = `undefined`, key left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OmpState {
    /// `thinkingLevel ?? "off"` of the last `thinking_level_change`.
    pub thinking_level: Value,
    /// `configured ?? thinkingLevel` of the last `thinking_level_change`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured_thinking_level: Option<Value>,
    /// The last `service_tier_change`, normalized to `{family: tier}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<Value>,
    /// Role → `"provider/modelId"`, in JavaScript property order.
    pub models: Map<String, Value>,
    /// Every `ttsr_injection` rule name, first-seen order, no repeats.
    pub injected_ttsr_rules: Vec<Value>,
    /// `mode` of the last `mode_change` (default `"none"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Value>,
    /// `data` of the last `mode_change`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode_data: Option<Value>,
}

impl PiState {
    /// The thinking level when it is a string.
    pub fn thinking_level(&self) -> Option<&str> {
        js::str_of(self.thinking_level.as_ref())
    }
}

impl OmpState {
    /// The thinking level when it is a string.
    pub fn thinking_level(&self) -> Option<&str> {
        self.thinking_level.as_str()
    }
    /// The active mode when it is a string (`"none"` when no special mode is active).
    pub fn mode(&self) -> Option<&str> {
        js::str_of(self.mode.as_ref())
    }
}

/// The assistant message of a `message` entry, when the entry holds one.
pub(crate) fn assistant_of(entry: &Value) -> Option<&Value> {
    let message = js::get(entry, "message")?;
    (js::is_type(entry, "message") && js::str_of(js::get(message, "role")) == Some("assistant"))
        .then_some(message)
}

/// The assistant message of the `message` entry at `i`, when it holds one.
fn assistant_at(path: PathRef<'_>, i: usize) -> Option<super::MessageRef<'_>> {
    path.message(i).filter(|m| m.is_role("assistant"))
}

/// pi `session-manager.js` `buildSessionContext`, settings half.
pub(crate) fn pi_state(path: PathRef<'_>) -> PiState {
    let mut state = PiState {
        thinking_level: Some(Value::from("off")),
        model: None,
    };
    for (i, entry) in path.values.iter().enumerate() {
        if js::is_type(entry, "thinking_level_change") {
            state.thinking_level = js::get(entry, "thinkingLevel").cloned();
        } else if js::is_type(entry, "model_change") {
            state.model = Some(PiModel {
                provider: js::get(entry, "provider").cloned(),
                model_id: js::get(entry, "modelId").cloned(),
            });
        } else if let Some(message) = assistant_at(path, i) {
            state.model = Some(PiModel {
                provider: message.provider().cloned(),
                model_id: message.model().cloned(),
            });
        }
    }
    state
}

/// Whether an omp `model_change` sets the default role explicitly (a truthy `model` with no role or
/// role `"default"`), after which assistant messages no longer set the default model.
pub(crate) fn omp_sets_explicit_default(entry: &Value) -> bool {
    let role = js::get(entry, "role");
    js::is_type(entry, "model_change")
        && js::truthy(js::get(entry, "model"))
        && (js::nullish(role) || js::str_of(role) == Some("default"))
}

/// omp `session-context.ts` `buildSessionContext`, settings half.
pub(crate) fn omp_state(path: PathRef<'_>) -> OmpState {
    let mut state = OmpState {
        thinking_level: Value::from("off"),
        configured_thinking_level: None,
        service_tier: None,
        models: Map::new(),
        injected_ttsr_rules: Vec::new(),
        mode: Some(Value::from("none")),
        mode_data: None,
    };
    let mut seen_rules = std::collections::HashSet::new();
    // Once an explicit default-role model_change is seen, assistant messages stop setting it.
    let mut explicit_default = false;
    for (i, entry) in path.values.iter().enumerate() {
        if js::is_type(entry, "thinking_level_change") {
            let level = js::get(entry, "thinkingLevel");
            state.thinking_level = if js::nullish(level) {
                Value::from("off")
            } else {
                level.cloned().unwrap_or_default()
            };
            let configured = js::get(entry, "configured");
            state.configured_thinking_level = [configured, level]
                .into_iter()
                .find(|v| !js::nullish(*v))
                .flatten()
                .cloned();
        } else if js::is_type(entry, "model_change") {
            let model = js::get(entry, "model");
            if js::truthy(model) {
                let role = js::get(entry, "role");
                let key = if js::nullish(role) {
                    "default".to_owned()
                } else {
                    js::to_string(role)
                };
                js::object_set(&mut state.models, key, model.cloned().unwrap_or_default());
                explicit_default |= omp_sets_explicit_default(entry);
            }
        } else if js::is_type(entry, "service_tier_change") {
            state.service_tier = coerce_service_tier(js::get(entry, "serviceTier"));
        } else if let Some(message) = assistant_at(path, i) {
            if !explicit_default {
                let model = format!(
                    "{}/{}",
                    js::to_string(message.provider()),
                    js::to_string(message.model())
                );
                js::object_set(&mut state.models, "default".to_owned(), Value::from(model));
            }
        } else if js::is_type(entry, "ttsr_injection") {
            // `for (const ruleName of entry.injectedRules)`: arrays by element, strings by character;
            // anything else would throw in the agent, so it is ignored here.
            let rules: Vec<Value> = match js::get(entry, "injectedRules") {
                Some(Value::Array(items)) => items.clone(),
                Some(Value::String(s)) => s.chars().map(|c| Value::from(c.to_string())).collect(),
                _ => Vec::new(),
            };
            for rule in rules {
                let key = match &rule {
                    Value::Array(_) | Value::Object(_) => None,
                    other => Some(js::set_key(Some(other))),
                };
                if key.is_none_or(|k| seen_rules.insert(k)) {
                    state.injected_ttsr_rules.push(rule);
                }
            }
        } else if js::is_type(entry, "mode_change") {
            state.mode = js::get(entry, "mode").cloned();
            state.mode_data = js::get(entry, "data").cloned();
        }
    }
    state
}

const TIER_VALUES: [&str; 5] = ["auto", "default", "flex", "scale", "priority"];

/// pi-ai `coerceServiceTierByFamily`: a `{family: tier}` object keeps only known families and
/// tiers; the legacy single-string forms expand to their families; anything else is `undefined`.
fn coerce_service_tier(value: Option<&Value>) -> Option<Value> {
    let pairs: Vec<(&str, &str)> = match value? {
        Value::Object(obj) => ["openai", "anthropic", "google"]
            .into_iter()
            .filter_map(|family| {
                let tier = obj.get(family)?.as_str()?;
                TIER_VALUES.contains(&tier).then_some((family, tier))
            })
            .collect(),
        Value::String(s) => match s.as_str() {
            "priority" => vec![
                ("openai", "priority"),
                ("anthropic", "priority"),
                ("google", "priority"),
            ],
            "openai-only" => vec![("openai", "priority")],
            "claude-only" => vec![("anthropic", "priority")],
            "auto" | "default" | "flex" | "scale" => vec![("openai", s.as_str())],
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if pairs.is_empty() {
        return None;
    }
    Some(Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::from(v)))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn omp_explicit_default_model_sticks() {
        let path = vec![
            json!({"type":"model_change","model":"a/one"}),
            json!({"type":"model_change","model":"b/small","role":"smol"}),
            json!({"type":"message","message":{"role":"assistant","provider":"c","model":"other"}}),
        ];
        let state = omp_state(PathRef::of(&path));
        assert_eq!(
            serde_json::to_value(&state.models).ok(),
            Some(json!({"default":"a/one","smol":"b/small"}))
        );
    }

    #[test]
    fn omp_service_tier_and_rules() {
        let path = vec![
            json!({"type":"service_tier_change","serviceTier":"priority"}),
            json!({"type":"ttsr_injection","injectedRules":["a","b"]}),
            json!({"type":"ttsr_injection","injectedRules":["b","c"]}),
            json!({"type":"thinking_level_change","thinkingLevel":null,"configured":"auto"}),
        ];
        let state = serde_json::to_value(omp_state(PathRef::of(&path))).ok();
        assert_eq!(
            state,
            Some(json!({
                "thinkingLevel":"off","configuredThinkingLevel":"auto",
                "serviceTier":{"openai":"priority","anthropic":"priority","google":"priority"},
                "models":{},"injectedTtsrRules":["a","b","c"],"mode":"none"
            }))
        );
    }

    #[test]
    fn pi_model_follows_last_assistant() {
        let path = vec![
            json!({"type":"model_change","provider":"a","modelId":"x"}),
            json!({"type":"message","message":{"role":"assistant","provider":"b","model":"y"}}),
            json!("not an object"),
            json!({"type":"message"}),
        ];
        let state = serde_json::to_value(pi_state(PathRef::of(&path))).ok();
        assert_eq!(
            state,
            Some(json!({"thinkingLevel":"off","model":{"provider":"b","modelId":"y"}}))
        );
    }
}
