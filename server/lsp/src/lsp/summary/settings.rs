//! `branchSummary` settings: parsing each layer leniently (a bad value is reported, never fatal),
//! merging the layers and resolving the provider.

use super::{CommandConfig, OpenAiConfig, Provider};
use serde_json::{Map, Value};
use std::path::Path;

/// Default `openai.baseUrl` (a local Ollama).
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434/v1";

/// One layer of settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layer {
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `provider`.
    pub provider: Option<String>,
    /// `openai.*`, key by key.
    pub openai: Map<String, Value>,
    /// `command` (only in user-level layers).
    pub command: Option<Value>,
    /// `reserveTokens`.
    pub reserve_tokens: Option<u64>,
    /// Problems found while reading it.
    pub warnings: Vec<String>,
}

impl Layer {
    /// Reads `branchSummary` (`true`/`false`, or an object). `user_level`: from initialization
    /// options or the agent's own settings file; otherwise a `command` is dropped with a warning.
    pub fn from_value(v: &Value, user_level: bool, source: &str) -> Layer {
        let mut layer = Layer::default();
        match v {
            Value::Null => {}
            Value::Bool(b) => layer.enabled = Some(*b),
            Value::Object(o) => {
                if let Some(e) = o.get("enabled") {
                    match e.as_bool() {
                        Some(b) => layer.enabled = Some(b),
                        None => layer
                            .warnings
                            .push(format!("{source}: branchSummary.enabled is not a boolean")),
                    }
                }
                if let Some(p) = o.get("provider") {
                    match p.as_str() {
                        Some(s) => layer.provider = Some(s.to_owned()),
                        None => layer
                            .warnings
                            .push(format!("{source}: branchSummary.provider is not a string")),
                    }
                }
                if let Some(oa) = o.get("openai") {
                    match oa.as_object() {
                        Some(m) => {
                            layer.openai = m.clone();
                            if !user_level && layer.openai.remove("caFile").is_some() {
                                layer.warnings.push(format!(
                                    "{source}: branchSummary.openai.caFile is ignored: which certificate authorities to trust is taken only from user settings (initializationOptions or the agent's settings file), never from workspace configuration"
                                ));
                            }
                            if m.contains_key("apiKey") {
                                layer.openai.remove("apiKey");
                                layer.warnings.push(format!(
                                    "{source}: branchSummary.openai.apiKey is ignored: put the key in an environment variable and name it in apiKeyEnv"
                                ));
                            }
                        }
                        None => layer
                            .warnings
                            .push(format!("{source}: branchSummary.openai is not an object")),
                    }
                }
                if let Some(c) = o.get("command").filter(|c| !c.is_null()) {
                    if user_level {
                        layer.command = Some(c.clone());
                    } else {
                        layer.warnings.push(format!(
                            "{source}: branchSummary.command is ignored: a command is taken only from user settings (initializationOptions or the agent's settings file), never from workspace configuration"
                        ));
                    }
                }
                if let Some(r) = o.get("reserveTokens").and_then(Value::as_u64) {
                    layer.reserve_tokens = Some(r);
                }
            }
            _ => layer.warnings.push(format!(
                "{source}: branchSummary is neither a boolean nor an object"
            )),
        }
        layer
    }

    /// Lays `other` over `self`.
    pub fn merge(&mut self, other: &Layer) {
        if other.enabled.is_some() {
            self.enabled = other.enabled;
        }
        if other.provider.is_some() {
            self.provider.clone_from(&other.provider);
        }
        for (k, v) in &other.openai {
            self.openai.insert(k.clone(), v.clone());
        }
        if other.command.is_some() {
            self.command.clone_from(&other.command);
        }
        if other.reserve_tokens.is_some() {
            self.reserve_tokens = other.reserve_tokens;
        }
        self.warnings.extend(other.warnings.iter().cloned());
    }
}

/// Every layer, as last read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryConfig {
    /// From the agents' settings files.
    pub agent: Layer,
    /// From `initializationOptions.branchSummary`.
    pub init: Layer,
    /// From `workspace/didChangeConfiguration`.
    pub workspace: Layer,
}

/// The settings in force.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// `branchSummary.enabled` (default false).
    pub enabled: bool,
    /// The provider, when one is configured and usable.
    pub provider: Option<Provider>,
    /// Tokens kept free for prompt and answer.
    pub reserve_tokens: u64,
    /// What is wrong with the settings, for the `noModel` message.
    pub problems: Vec<String>,
}

impl Effective {
    /// The provider the server runs itself (`openai`/`command`), when summaries are enabled.
    pub fn server_provider(&self) -> Option<&Provider> {
        self.provider
            .as_ref()
            .filter(|p| self.enabled && !matches!(p, Provider::Client))
    }

    /// The conversation budget for a provider (context window minus the reserve, at least a
    /// quarter of the window).
    pub fn budget(&self, provider: &Provider) -> usize {
        let window = match provider {
            Provider::OpenAi(c) => c.context_window,
            _ => sessiontree_core::summary::DEFAULT_CONTEXT_WINDOW as u64,
        };
        // A reserve as large as the window still leaves the model a quarter of it.
        let budget = window
            .saturating_sub(self.reserve_tokens)
            .max(window / 4)
            .max(1);
        usize::try_from(budget).unwrap_or(usize::MAX)
    }

    /// Why no server-side summary can be written (for `noModel`).
    pub fn why_no_model(&self) -> String {
        let mut why = if !self.enabled {
            "branch summaries are off (branchSummary.enabled is false)".to_owned()
        } else {
            match &self.provider {
                None => "no summary provider is configured (branchSummary.provider)".to_owned(),
                Some(Provider::Client) => {
                    "the provider is `client` and no client supplied a summary".to_owned()
                }
                Some(_) => String::new(),
            }
        };
        for p in &self.problems {
            why.push_str("; ");
            why.push_str(p);
        }
        why
    }
}

/// A path from settings, `~/` meaning the home folder.
fn expand_home(path: &str) -> std::path::PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => std::path::PathBuf::from(path),
    }
}

fn u64_of(m: &Map<String, Value>, key: &str, default: u64) -> u64 {
    m.get(key).and_then(Value::as_u64).unwrap_or(default)
}

fn command_of(v: &Value) -> Result<CommandConfig, String> {
    let (argv_value, timeout) = match v {
        Value::Object(o) => (
            o.get("argv")
                .or_else(|| o.get("command"))
                .cloned()
                .unwrap_or(Value::Null),
            o.get("timeoutSeconds").and_then(Value::as_u64),
        ),
        other => (other.clone(), None),
    };
    let argv = match argv_value {
        Value::String(s) if !s.trim().is_empty() => vec!["sh".to_owned(), "-c".to_owned(), s],
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| {
                "branchSummary.command must be a non-empty list of strings".to_owned()
            })?,
        _ => return Err(
            "branchSummary.command must be a string, a list of strings or {argv, timeoutSeconds}"
                .to_owned(),
        ),
    };
    Ok(CommandConfig {
        argv,
        timeout_seconds: timeout.unwrap_or(120),
    })
}

impl SummaryConfig {
    /// Merges the layers and resolves the provider.
    pub fn effective(&self) -> Effective {
        let mut all = self.agent.clone();
        all.merge(&self.init);
        all.merge(&self.workspace);
        let mut problems = all.warnings.clone();
        let provider_name = all.provider.clone().or_else(|| {
            if all.command.is_some() {
                Some("command".to_owned())
            } else if all.openai.contains_key("model") {
                Some("openai".to_owned())
            } else {
                None
            }
        });
        let provider = match provider_name.as_deref() {
            None | Some("none" | "") => None,
            Some("client") => Some(Provider::Client),
            Some("openai") => match all.openai.get("model").and_then(Value::as_str) {
                Some(model) if !model.is_empty() => Some(Provider::OpenAi(OpenAiConfig {
                    base_url: all
                        .openai
                        .get("baseUrl")
                        .and_then(Value::as_str)
                        .unwrap_or(DEFAULT_BASE_URL)
                        .to_owned(),
                    model: model.to_owned(),
                    api_key_env: all
                        .openai
                        .get("apiKeyEnv")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned),
                    connect_timeout_seconds: u64_of(&all.openai, "connectTimeoutSeconds", 10),
                    timeout_seconds: u64_of(&all.openai, "timeoutSeconds", 180),
                    max_tokens: u64_of(&all.openai, "maxTokens", 2048),
                    context_window: u64_of(
                        &all.openai,
                        "contextWindow",
                        sessiontree_core::summary::DEFAULT_CONTEXT_WINDOW as u64,
                    ),
                    ca_file: all
                        .openai
                        .get("caFile")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(expand_home),
                })),
                _ => {
                    problems
                        .push("the openai provider needs branchSummary.openai.model".to_owned());
                    None
                }
            },
            Some("command") => match all.command.as_ref().map(command_of) {
                Some(Ok(c)) => Some(Provider::Command(c)),
                Some(Err(e)) => {
                    problems.push(e);
                    None
                }
                None => {
                    problems.push("the command provider needs branchSummary.command in user settings (initializationOptions or the agent's settings file)".to_owned());
                    None
                }
            },
            Some(other) => {
                problems.push(format!(
                    "unknown branchSummary.provider `{other}` (openai, command, client or none)"
                ));
                None
            }
        };
        Effective {
            enabled: all.enabled.unwrap_or(false),
            provider,
            reserve_tokens: all
                .reserve_tokens
                .unwrap_or(sessiontree_core::summary::DEFAULT_RESERVE_TOKENS as u64),
            problems,
        }
    }
}

/// The `branchSummary` block of omp's `config.yml` (`enabled`, `provider`, `reserveTokens`):
/// a small reader of block mappings with scalar values, enough for these keys.
fn omp_yaml_layer(text: &str) -> Layer {
    let mut obj = Map::new();
    let mut inside = false;
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or("").trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if !indented {
            inside = false;
            let Some((key, rest)) = line.split_once(':') else {
                continue;
            };
            if key.trim().trim_matches(['"', '\'']) == "branchSummary" {
                let rest = rest.trim();
                if rest.is_empty() {
                    inside = true;
                } else if let Some(flow) = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}'))
                {
                    for pair in flow.split(',') {
                        if let Some((k, v)) = pair.split_once(':') {
                            obj.insert(k.trim().to_owned(), yaml_scalar(v));
                        }
                    }
                }
            } else if let Some(sub) = key.trim().strip_prefix("branchSummary.") {
                obj.insert(sub.to_owned(), yaml_scalar(rest));
            }
            continue;
        }
        if inside {
            if let Some((k, v)) = line.trim().split_once(':') {
                if !v.trim().is_empty() {
                    obj.insert(
                        k.trim().trim_matches(['"', '\'']).to_owned(),
                        yaml_scalar(v),
                    );
                }
            }
        }
    }
    let keep: Map<String, Value> = obj
        .into_iter()
        .filter(|(k, _)| matches!(k.as_str(), "enabled" | "provider" | "reserveTokens"))
        .collect();
    Layer::from_value(&Value::Object(keep), true, "omp config.yml")
}

fn yaml_scalar(v: &str) -> Value {
    let v = v.trim().trim_matches(['"', '\'']);
    match v {
        "true" | "True" | "TRUE" | "yes" | "on" => Value::Bool(true),
        "false" | "False" | "FALSE" | "no" | "off" => Value::Bool(false),
        _ => v
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(v)),
    }
}

/// pi's `settings.json`: `branchSummary` (pi's own `skipPrompt: true` reads as disabled unless
/// `enabled` says otherwise; our `provider`/`openai`/`command` keys may sit beside pi's).
fn pi_json_layer(text: &str) -> Layer {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return Layer {
            warnings: vec!["pi settings.json is not valid JSON".to_owned()],
            ..Layer::default()
        };
    };
    let Some(bs) = v.get("branchSummary") else {
        return Layer::default();
    };
    let mut layer = Layer::from_value(bs, true, "pi settings.json");
    if layer.enabled.is_none() && bs.get("skipPrompt") == Some(&Value::Bool(true)) {
        layer.enabled = Some(false);
    }
    layer
}

/// The agents' user settings: pi's file first, omp's over it.
pub fn agent_layer(omp_agent_dir: Option<&Path>, pi_agent_dir: Option<&Path>) -> Layer {
    let mut layer = Layer::default();
    if let Some(text) =
        pi_agent_dir.and_then(|d| std::fs::read_to_string(d.join("settings.json")).ok())
    {
        layer.merge(&pi_json_layer(&text));
    }
    if let Some(dir) = omp_agent_dir {
        let text = std::fs::read_to_string(dir.join("config.yml"))
            .or_else(|_| std::fs::read_to_string(dir.join("config.yaml")));
        if let Ok(text) = text {
            layer.merge(&omp_yaml_layer(&text));
        }
    }
    layer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn budgets() {
        let mut e = SummaryConfig::default().effective();
        assert_eq!(e.budget(&Provider::Client), 128_000 - 16_384);
        e.reserve_tokens = 1_000_000;
        assert_eq!(e.budget(&Provider::Client), 32_000);
    }

    #[test]
    fn defaults_are_off() {
        let e = SummaryConfig::default().effective();
        assert!(!e.enabled && e.provider.is_none());
        assert!(e.why_no_model().contains("off"));
    }

    #[test]
    fn commands_only_from_user_settings() {
        let cfg = SummaryConfig {
            workspace: Layer::from_value(
                &json!({"enabled": true, "provider": "command", "command": "rm -rf ~"}),
                false,
                "workspace",
            ),
            ..SummaryConfig::default()
        };
        let e = cfg.effective();
        assert!(e.provider.is_none(), "{e:?}");
        assert!(
            e.why_no_model().contains("never from workspace"),
            "{}",
            e.why_no_model()
        );
        let cfg = SummaryConfig {
            init: Layer::from_value(&json!({"command": ["sh", "-c", "echo hi"]}), true, "init"),
            workspace: Layer::from_value(&json!({"enabled": true}), false, "workspace"),
            ..SummaryConfig::default()
        };
        let e = cfg.effective();
        assert_eq!(e.server_provider().map(Provider::name), Some("command"));
    }

    #[test]
    fn openai_layers_merge_key_by_key_and_keys_stay_out() {
        let cfg = SummaryConfig {
            init: Layer::from_value(
                &json!({"enabled": true, "provider": "openai", "openai": {"baseUrl": "http://127.0.0.1:1/v1", "model": "a", "apiKeyEnv": "K"}}),
                true,
                "init",
            ),
            workspace: Layer::from_value(
                &json!({"openai": {"model": "b", "apiKey": "sk-x"}}),
                false,
                "workspace",
            ),
            ..SummaryConfig::default()
        };
        let e = cfg.effective();
        let Some(Provider::OpenAi(c)) = e.provider.clone() else {
            panic!("{e:?}")
        };
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str()),
            ("http://127.0.0.1:1/v1", "b")
        );
        assert_eq!(c.api_key_env.as_deref(), Some("K"));
        assert!(e.problems.iter().any(|p| p.contains("apiKeyEnv")));
        assert!(!format!("{e:?}").contains("sk-x"));
    }

    #[test]
    fn agent_files() {
        let l = omp_yaml_layer("theme: dark\nbranchSummary:\n  enabled: true # on\n  reserveTokens: 1000\nother:\n  enabled: false\n");
        assert_eq!((l.enabled, l.reserve_tokens), (Some(true), Some(1000)));
        let l = omp_yaml_layer("branchSummary: {enabled: true}\n");
        assert_eq!(l.enabled, Some(true));
        let l = omp_yaml_layer("branchSummary:\n  command: evil\n");
        assert_eq!(l, Layer::from_value(&json!({}), true, "x"));
        let l = pi_json_layer(r#"{"branchSummary": {"skipPrompt": true}}"#);
        assert_eq!(l.enabled, Some(false));
        let l = pi_json_layer(
            r#"{"branchSummary": {"enabled": true, "provider": "command", "command": ["cat"]}}"#,
        );
        assert_eq!(l.command, Some(json!(["cat"])));
    }
}
