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
                            if !user_level && layer.openai.remove("apiKeyEnv").is_some() {
                                layer.warnings.push(format!(
                                    "{source}: branchSummary.openai.apiKeyEnv is ignored: which environment variable holds the API key is taken only from user settings (initializationOptions or the agent's settings file), never from workspace configuration"
                                ));
                            }
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
        let mut user = self.agent.clone();
        user.merge(&self.init);
        let mut all = user.clone();
        all.merge(&self.workspace);
        let mut problems = all.warnings.clone();
        // The key goes only where the user's own settings send it: a workspace that moves the
        // base URL elsewhere would receive it.
        let base_of = |l: &Layer| {
            l.openai
                .get("baseUrl")
                .and_then(Value::as_str)
                .unwrap_or(DEFAULT_BASE_URL)
                .to_owned()
        };
        let key_redirected =
            user.openai.contains_key("apiKeyEnv") && base_of(&user) != base_of(&all);
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
            Some("openai") if key_redirected => {
                problems.push(format!(
                    "workspace configuration sets branchSummary.openai.baseUrl to `{}`, but the API key named in user settings (apiKeyEnv) is only sent to the user's own baseUrl `{}`; set the baseUrl in user settings",
                    base_of(&all),
                    base_of(&user)
                ));
                None
            }
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

/// A YAML node as JSON (mappings keep their string keys; aliases and bad values are null).
fn yaml_to_json(y: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match y {
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Array(a) => Value::Array(a.iter().map(yaml_to_json).collect()),
        Yaml::Hash(h) => Value::Object(
            h.iter()
                .filter_map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) | Yaml::Real(s) => s.clone(),
                        Yaml::Integer(i) => i.to_string(),
                        Yaml::Boolean(b) => b.to_string(),
                        _ => return None,
                    };
                    Some((key, yaml_to_json(v)))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

/// Parses a YAML (or JSON) document.
fn parse_yaml(text: &str) -> Result<Value, String> {
    let docs = yaml_rust2::YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    Ok(docs.first().map_or(Value::Null, yaml_to_json))
}

/// The first of these files of `dir` that exists, parsed: `Some(Err)` when it is not valid.
fn read_agent_file(dir: &Path, names: &[&str]) -> Option<(String, Result<Value, String>)> {
    names.iter().find_map(|name| {
        let text = std::fs::read_to_string(dir.join(name)).ok()?;
        Some(((*name).to_owned(), parse_yaml(&text)))
    })
}

/// omp's built-in providers that speak the OpenAI chat-completions API: base URL and the
/// environment variable omp reads the key from.
const OMP_OPENAI_BUILTINS: [(&str, &str, &str); 2] = [
    ("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    (
        "openrouter",
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
    ),
];

/// omp's thinking-level suffixes of a model selector (`provider/model:high`).
const OMP_THINKING: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Whether a `models.yml` `apiKey` names an environment variable (omp reads it from the
/// environment when such a variable exists; otherwise it is a literal key or a `!command`).
fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The `openai.*` settings for omp's default model (`modelRoles.default` in `config.yml`, a
/// provider from `models.yml` or a built-in OpenAI-compatible one). `Err`: why it cannot be
/// used (never quoting a key).
fn omp_model(selector: &str, models: &Value) -> Result<Map<String, Value>, String> {
    let selector = selector.trim();
    let what = format!("omp's default model `{selector}` (modelRoles.default)");
    if selector.starts_with('@') || selector.starts_with("pi/") {
        return Err(format!(
            "{what} is a role alias, which sessiontree does not follow; set branchSummary.openai.model"
        ));
    }
    let Some((provider, model)) = selector.split_once('/') else {
        return Err(format!(
            "{what} names no provider; set branchSummary.openai"
        ));
    };
    let model = match model.rsplit_once(':') {
        Some((m, level)) if OMP_THINKING.contains(&level) => m,
        _ => model,
    };
    let custom = models.pointer(&format!(
        "/providers/{}",
        provider.replace('~', "~0").replace('/', "~1")
    ));
    let builtin = OMP_OPENAI_BUILTINS
        .iter()
        .find(|(name, _, _)| *name == provider);
    let entry = custom
        .and_then(|c| c.get("models"))
        .and_then(Value::as_array)
        .and_then(|ms| {
            ms.iter()
                .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        });
    let api = entry
        .and_then(|e| e.get("api"))
        .or_else(|| custom.and_then(|c| c.get("api")))
        .and_then(Value::as_str);
    let base_url = custom
        .and_then(|c| c.get("baseUrl"))
        .and_then(Value::as_str)
        .or(builtin.map(|b| b.1));
    let Some(base_url) = base_url else {
        return Err(format!(
            "{what}: provider `{provider}` is not one sessiontree can call (OpenAI-compatible: openai, openrouter, or a models.yml provider with `api: openai-completions`); set branchSummary.openai"
        ));
    };
    match api {
        Some("openai-completions") | None if builtin.is_some() || api.is_some() => {}
        Some(other) => {
            return Err(format!(
                "{what}: provider `{provider}` speaks `{other}`, not the OpenAI chat-completions API; set branchSummary.openai"
            ))
        }
        None => {
            return Err(format!(
                "{what}: models.yml gives provider `{provider}` no `api: openai-completions`; set branchSummary.openai"
            ))
        }
    }
    let mut out = Map::new();
    out.insert("baseUrl".into(), Value::from(base_url));
    out.insert("model".into(), Value::from(model));
    let auth_none = custom.and_then(|c| c.get("auth")).and_then(Value::as_str) == Some("none");
    match custom.and_then(|c| c.get("apiKey")) {
        _ if auth_none => {}
        Some(Value::String(k)) if is_env_name(k) => {
            out.insert("apiKeyEnv".into(), Value::from(k.as_str()));
        }
        Some(_) => {
            return Err(format!(
                "{what}: models.yml gives provider `{provider}` its apiKey as a literal or a command, which sessiontree never reads; name an environment variable in branchSummary.openai.apiKeyEnv"
            ))
        }
        None => {
            if let Some(b) = builtin {
                out.insert("apiKeyEnv".into(), Value::from(b.2));
            }
        }
    }
    if let Some(w) = entry
        .and_then(|e| e.get("contextWindow"))
        .and_then(Value::as_u64)
    {
        out.insert("contextWindow".into(), Value::from(w));
    }
    Ok(out)
}

/// omp's user settings: `branchSummary` of `config.yml` (omp's `enabled` and `reserveTokens`;
/// sessiontree's `provider`, `openai`, `command` may sit beside them; nested or dotted keys),
/// and, for the model, `modelRoles.default` resolved through `models.yml`. Explicit
/// `branchSummary.openai.*` keys win over the ones derived from omp's model.
fn omp_layer(config: &Value, models: &Value) -> Layer {
    let mut bs = match config.get("branchSummary") {
        Some(Value::Object(o)) => o.clone(),
        Some(Value::Bool(b)) => Map::from_iter([("enabled".to_owned(), Value::Bool(*b))]),
        _ => Map::new(),
    };
    if let Some(top) = config.as_object() {
        for (k, v) in top {
            if let Some(sub) = k.strip_prefix("branchSummary.") {
                bs.insert(sub.to_owned(), v.clone());
            }
        }
    }
    let mut layer = Layer::from_value(&Value::Object(bs), true, "omp config.yml");
    if let Some(selector) = config
        .pointer("/modelRoles/default")
        .and_then(Value::as_str)
    {
        match omp_model(selector, models) {
            Ok(derived) => {
                for (k, v) in derived {
                    layer.openai.entry(k).or_insert(v);
                }
            }
            // Only worth saying when omp's own setting turns summaries on.
            Err(why) if layer.enabled == Some(true) && !layer.openai.contains_key("model") => {
                layer.warnings.push(why);
            }
            Err(_) => {}
        }
    }
    layer
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
        let mut warnings = Vec::new();
        let mut read = |names: &[&str]| match read_agent_file(dir, names) {
            Some((_, Ok(v))) => v,
            Some((name, Err(e))) => {
                warnings.push(format!("omp {name} is not valid YAML ({e})"));
                Value::Null
            }
            None => Value::Null,
        };
        let config = read(&["config.yml", "config.yaml"]);
        let models = read(&["models.yml", "models.yaml", "models.json"]);
        let mut omp = omp_layer(&config, &models);
        omp.warnings.extend(warnings);
        layer.merge(&omp);
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
        // The workspace may neither name the key's variable nor send the user's key elsewhere.
        let cfg = SummaryConfig {
            init: cfg.init.clone(),
            workspace: Layer::from_value(
                &json!({"openai": {"apiKeyEnv": "AWS_SECRET_ACCESS_KEY"}}),
                false,
                "workspace",
            ),
            ..SummaryConfig::default()
        };
        let Some(Provider::OpenAi(c)) = cfg.effective().provider else {
            panic!("{:?}", cfg.effective())
        };
        assert_eq!(c.api_key_env.as_deref(), Some("K"));
        let cfg = SummaryConfig {
            workspace: Layer::from_value(
                &json!({"openai": {"baseUrl": "https://collector.example/v1"}}),
                false,
                "workspace",
            ),
            ..cfg
        };
        let e = cfg.effective();
        assert!(e.provider.is_none(), "{e:?}");
        assert!(
            e.why_no_model()
                .contains("only sent to the user's own baseUrl"),
            "{}",
            e.why_no_model()
        );
    }

    fn omp_yaml_layer(config: &str) -> Layer {
        omp_layer(&parse_yaml(config).unwrap_or_default(), &Value::Null)
    }

    #[test]
    fn agent_files() {
        let l = omp_yaml_layer("theme: dark\nbranchSummary:\n  enabled: true # on\n  reserveTokens: 1000\nother:\n  enabled: false\n");
        assert_eq!((l.enabled, l.reserve_tokens), (Some(true), Some(1000)));
        let l = omp_yaml_layer("branchSummary: {enabled: true}\n");
        assert_eq!(l.enabled, Some(true));
        let l = omp_yaml_layer("branchSummary.enabled: true\nbranchSummary.reserveTokens: 2000\n");
        assert_eq!((l.enabled, l.reserve_tokens), (Some(true), Some(2000)));
        // config.yml is the user's own file (the project's .omp/config.yml is never read).
        let l = omp_yaml_layer("branchSummary:\n  command: [llm, -m, mini]\n");
        assert_eq!(l.command, Some(json!(["llm", "-m", "mini"])));
        assert!(parse_yaml("a: [b\n").is_err());
        let l = pi_json_layer(r#"{"branchSummary": {"skipPrompt": true}}"#);
        assert_eq!(l.enabled, Some(false));
        let l = pi_json_layer(
            r#"{"branchSummary": {"enabled": true, "provider": "command", "command": ["cat"]}}"#,
        );
        assert_eq!(l.command, Some(json!(["cat"])));
    }

    #[test]
    fn omp_default_model_through_models_yml() {
        let models = parse_yaml(
            "providers:\n  local:\n    baseUrl: http://127.0.0.1:8080/v1\n    api: openai-completions\n    apiKey: LOCAL_LLM_KEY\n    models:\n      - id: qwen2.5-7b\n        contextWindow: 32768\n  secret:\n    baseUrl: https://x/v1\n    api: openai-completions\n    apiKey: sk-literal-123\n    models: [{id: m}]\n  anth:\n    baseUrl: https://y/v1\n    api: anthropic-messages\n    models: [{id: m}]\n  free:\n    baseUrl: http://127.0.0.1:9/v1\n    api: openai-completions\n    auth: none\n    apiKey: IGNORED\n",
        )
        .unwrap_or_default();
        let layer = |config: &str| omp_layer(&parse_yaml(config).unwrap_or_default(), &models);
        let l = layer("branchSummary:\n  enabled: true\nmodelRoles:\n  default: local/qwen2.5-7b:high\n  smol: openai/gpt-4o-mini\n");
        assert_eq!(
            Value::Object(l.openai.clone()),
            json!({"baseUrl": "http://127.0.0.1:8080/v1", "model": "qwen2.5-7b", "apiKeyEnv": "LOCAL_LLM_KEY", "contextWindow": 32768})
        );
        let cfg = SummaryConfig {
            agent: l,
            ..SummaryConfig::default()
        };
        assert_eq!(
            cfg.effective().server_provider().map(Provider::name),
            Some("openai")
        );
        // Built-in OpenAI-compatible providers.
        let l = layer("modelRoles: {default: openrouter/anthropic/claude-sonnet-4}\n");
        assert_eq!(
            Value::Object(l.openai),
            json!({"baseUrl": "https://openrouter.ai/api/v1", "model": "anthropic/claude-sonnet-4", "apiKeyEnv": "OPENROUTER_API_KEY"})
        );
        let l = layer("modelRoles: {default: free/m}\n");
        assert_eq!(l.openai.get("apiKeyEnv"), None);
        // Explicit sessiontree keys win over the derived ones.
        let l = layer("modelRoles: {default: openai/gpt-4o}\nbranchSummary:\n  openai: {model: gpt-4o-mini, baseUrl: 'http://127.0.0.1:4000/v1'}\n");
        assert_eq!(
            Value::Object(l.openai),
            json!({"model": "gpt-4o-mini", "baseUrl": "http://127.0.0.1:4000/v1", "apiKeyEnv": "OPENAI_API_KEY"})
        );
        // Not mapped: said when omp's summaries are on, never quoting a key.
        for (default, why) in [
            ("secret/m", "literal or a command"),
            ("anth/m", "speaks `anthropic-messages`"),
            ("anthropic/claude-opus", "not one sessiontree can call"),
            ("@smol", "role alias"),
        ] {
            let l = layer(&format!(
                "branchSummary: {{enabled: true}}\nmodelRoles: {{default: '{default}'}}\n"
            ));
            assert!(l.openai.is_empty(), "{default}: {:?}", l.openai);
            assert!(
                l.warnings.iter().any(|w| w.contains(why)),
                "{default}: {:?}",
                l.warnings
            );
            assert!(!format!("{l:?}").contains("sk-literal"));
            let l = layer(&format!("modelRoles: {{default: '{default}'}}\n"));
            assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        }
    }
}
