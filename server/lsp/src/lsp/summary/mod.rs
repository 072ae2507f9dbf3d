//! Branch summaries written by a model: the settings (`branchSummary.*`), and the providers that
//! turn the engine's [`SummaryRequest`](sessiontree_core::summary::SummaryRequest) into text.
//!
//! Settings come in layers, later ones winning field by field: the agents' own user settings
//! (pi `~/.pi/agent/settings.json`, omp `<agent dir>/config.yml`), then `initializationOptions
//! .branchSummary`, then `workspace/didChangeConfiguration` (`sessiontree.branchSummary`). Only the
//! first two are user-level: a `command` provider is taken from them alone, never from workspace
//! configuration (a cloned repository must not run commands). API keys are never settings: the
//! settings name the environment variable that holds one.

pub(crate) mod command;
pub(crate) mod openai;
pub(crate) mod settings;

use crate::errors::ApiError;
use sessiontree_protocol::ErrorKind;
use tokio::sync::mpsc;

pub(crate) use settings::{Effective, SummaryConfig};

/// The `openai` provider's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// `http[s]://host:port/v1` (the part before `/chat/completions`).
    pub base_url: String,
    /// The model name sent in the request.
    pub model: String,
    /// The environment variable holding the API key (none: no `Authorization` header).
    pub api_key_env: Option<String>,
    /// Seconds to wait for the TCP connection.
    pub connect_timeout_seconds: u64,
    /// Seconds for the whole request, streaming included.
    pub timeout_seconds: u64,
    /// `max_tokens` of the answer.
    pub max_tokens: u64,
    /// The model's context window (tokens), for the conversation budget.
    pub context_window: u64,
    /// A PEM file of CA certificates trusted for `https://` besides the built-in roots (user
    /// settings only).
    pub ca_file: Option<std::path::PathBuf>,
}

/// The `command` provider's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandConfig {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Seconds before the command is killed.
    pub timeout_seconds: u64,
}

/// Who writes a summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    /// An OpenAI-compatible endpoint.
    OpenAi(OpenAiConfig),
    /// A local command.
    Command(CommandConfig),
    /// Only a client's `beforeTree` answer.
    Client,
}

impl Provider {
    /// The wire name.
    pub fn name(&self) -> &'static str {
        match self {
            Provider::OpenAi(_) => "openai",
            Provider::Command(_) => "command",
            Provider::Client => "client",
        }
    }
}

/// Why a provider produced no summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The settings are unusable (bad URL, unset key variable).
    Config(String),
    /// The server could not be reached.
    Connect(String),
    /// The server answered an error status.
    Status(u16, String),
    /// The stream was malformed or broke off.
    Stream(String),
    /// Too slow.
    Timeout(String),
    /// The command failed.
    Command(String),
}

impl Failure {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Failure::Config(m)
            | Failure::Connect(m)
            | Failure::Status(_, m)
            | Failure::Stream(m)
            | Failure::Timeout(m)
            | Failure::Command(m) => m,
        }
    }

    /// As a request error (nothing moved): `noModel` when the settings cannot work, `provider`
    /// when the provider failed.
    pub fn into_api(self, provider: &str, revision: u64) -> ApiError {
        let kind = match self {
            Failure::Config(_) => ErrorKind::NoModel,
            _ => ErrorKind::Provider,
        };
        ApiError::new(
            kind,
            format!(
                "the branch summary failed ({provider} provider): {}; nothing moved",
                self.message()
            ),
        )
        .at(revision)
    }
}

/// Streamed-token reports from a provider to the progress shown to the user.
#[derive(Debug, Clone)]
pub struct Tokens(pub mpsc::UnboundedSender<usize>);

impl Tokens {
    /// Reports the (estimated) tokens received so far.
    pub fn report(&self, n: usize) {
        let _ = self.0.send(n);
    }
}

/// The engine's token estimate for a text.
pub(crate) fn estimate(text: &str) -> usize {
    sessiontree_core::summary::estimate_tokens(text)
}

/// Runs a server-side provider (not [`Provider::Client`]).
pub async fn generate(
    provider: &Provider,
    request: &sessiontree_core::summary::SummaryRequest,
    tokens: &Tokens,
) -> Result<String, Failure> {
    let text = match provider {
        Provider::OpenAi(config) => {
            openai::generate(config, &request.system, &request.prompt, tokens).await?
        }
        Provider::Command(config) => {
            let input = format!("{}\n\n{}\n", request.system, request.prompt);
            command::generate(config, &input, tokens).await?
        }
        Provider::Client => {
            return Err(Failure::Config(
                "the client provider only takes summaries from the beforeTree hook".to_owned(),
            ))
        }
    };
    if text.trim().is_empty() {
        return Err(Failure::Stream(
            "the model returned an empty summary".to_owned(),
        ));
    }
    Ok(text)
}
