//! The `LanguageServer` implementation: `initialize` (capabilities, hooks, locations), text
//! document routing for session files, the standard features of `plain`, `workspace/symbol`, and
//! `workspace/executeCommand` for the code lenses and actions.

use crate::discovery::Locations;
use crate::errors::{ApiError, ApiResult};
use crate::registry::{Location, Registry};
use crate::symbols::SymbolIndex;
use crate::{plain, Shared};
use serde_json::Value;
use sessiontree_protocol::{self as proto, commands, ErrorKind};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use tower_lsp_server::jsonrpc;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

#[derive(Debug, Default)]
struct Config {
    locations: Locations,
    folders: Vec<PathBuf>,
    /// The client answers `workspace/configuration`.
    pull_configuration: bool,
}

/// The server.
#[derive(Debug)]
pub struct Backend {
    pub(crate) shared: Arc<Shared>,
    pub(crate) registry: Registry,
    config: RwLock<Config>,
    symbols: Arc<SymbolIndex>,
    /// Sessions a client opened through the protocol (`open`, `branch`); closing a text document
    /// stops following only the sessions that are not among them.
    pub(crate) protocol_open: dashmap::DashSet<PathBuf>,
    /// Set by `shutdown`; `exit` without it means an unclean stop (exit code 1).
    pub(crate) shut_down: Arc<std::sync::atomic::AtomicBool>,
    /// Where large results written as text wait for the output stream (see `raw_reply`); `None`
    /// when the service is used without that stream (results are then values).
    pub(crate) raw_replies: Option<Arc<crate::raw_reply::RawReplies>>,
    /// The live agents of the open sessions.
    pub(crate) agents: Arc<crate::agent::manager::Manager>,
}

impl Backend {
    /// A server talking to `client`.
    pub fn new(client: Client) -> Self {
        let shared = Arc::new(Shared::new(client));
        Backend {
            registry: Registry::new(Arc::clone(&shared)),
            agents: crate::agent::manager::Manager::new(Arc::clone(&shared)),
            shared,
            config: RwLock::new(Config::default()),
            symbols: Arc::new(SymbolIndex::default()),
            shut_down: Arc::default(),
            protocol_open: dashmap::DashSet::new(),
            raw_replies: None,
        }
    }

    /// A server whose output goes through a [`Splice`](crate::raw_reply::Splice) over `replies`.
    pub(crate) fn with_raw_replies(
        client: Client,
        replies: Arc<crate::raw_reply::RawReplies>,
    ) -> Self {
        Backend {
            raw_replies: Some(replies),
            ..Backend::new(client)
        }
    }

    pub(crate) fn locations(&self) -> Locations {
        self.config
            .read()
            .map(|c| c.locations.clone())
            .unwrap_or_default()
    }

    /// The agents' own settings files, read afresh.
    fn agent_summary_layer(locations: &Locations) -> crate::summary::settings::Layer {
        crate::summary::settings::agent_layer(
            locations
                .omp_sessions
                .as_deref()
                .and_then(std::path::Path::parent),
            locations
                .pi_sessions
                .as_deref()
                .and_then(std::path::Path::parent),
        )
    }

    pub(crate) fn workspace_folders(&self) -> Vec<PathBuf> {
        self.config
            .read()
            .map(|c| c.folders.clone())
            .unwrap_or_default()
    }

    /// Where a text document's session is: a `*.jsonl` file, or a session of a configured store;
    /// `None` for anything else.
    fn document_location(&self, uri: &Uri) -> Option<Location> {
        let location = if crate::stores::is_store_uri(uri.as_str()) {
            match self.registry.locate(uri.as_str()) {
                Ok(location) => location,
                Err(err) => {
                    tracing::debug!("{}: {}", uri.as_str(), err.message);
                    return None;
                }
            }
        } else {
            Location::File(uri.to_file_path()?.into_owned())
        };
        let path = match &location {
            Location::File(path) => path.as_path(),
            Location::Store(located) => located.path.as_path(),
        };
        (path.extension().and_then(|e| e.to_str()) == Some("jsonl")).then_some(location)
    }

    /// Reads a session document (opening it when needed); `None` for files that are not
    /// sessions, so plain LSP requests on them answer nothing rather than fail.
    async fn with_document<R: Send + 'static>(
        &self,
        uri: &Uri,
        f: impl FnOnce(&crate::actor::Actor) -> R + Send + 'static,
    ) -> Option<R> {
        let location = self.document_location(uri)?;
        match self
            .registry
            .open_at(&location)
            .read(move |a| Ok(f(a)))
            .await
        {
            Ok(r) => Some(r),
            Err(err) => {
                tracing::debug!("{}: {}", uri.as_str(), err.message);
                None
            }
        }
    }

    async fn publish_for(&self, uri: &Uri, location: &Location) {
        let got = self
            .registry
            .open_at(location)
            .read(|a| Ok((plain::diagnostics(&a.session), a.revision())))
            .await;
        match got {
            Ok((diagnostics, revision)) => {
                let version = i32::try_from(revision).ok();
                self.shared
                    .client()
                    .publish_diagnostics(uri.clone(), diagnostics, version)
                    .await;
            }
            Err(err) => {
                // Not a session file (or unreadable): say so on line 1 rather than stay silent.
                let diagnostic = Diagnostic {
                    range: Range::new(Position::new(0, 0), Position::new(0, 1000)),
                    severity: Some(DiagnosticSeverity::ERROR),
                    code: Some(NumberOrString::String(err.kind.as_str().to_owned())),
                    source: Some("sessiontree".to_owned()),
                    message: err.message,
                    ..Default::default()
                };
                self.shared
                    .client()
                    .publish_diagnostics(uri.clone(), vec![diagnostic], None)
                    .await;
            }
        }
    }

    async fn run_command(&self, params: ExecuteCommandParams) -> ApiResult<Value> {
        let args = params.arguments;
        let arg = |i: usize| -> ApiResult<String> {
            args.get(i)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    ApiError::invalid_params(format!(
                        "{} needs argument {i} (a string: uri, entry id)",
                        params.command
                    ))
                })
        };
        let to_value = |v: Result<Value, serde_json::Error>| {
            v.map_err(|e| ApiError::new(ErrorKind::Internal, e.to_string()))
        };
        match params.command.as_str() {
            commands::NAVIGATE => {
                let p = proto::NavigateParams {
                    uri: arg(0)?,
                    target_id: arg(1)?,
                    summarize: proto::SummarizeChoice::None,
                    custom_instructions: None,
                    label: None,
                    base_revision: None,
                    force: false,
                };
                to_value(serde_json::to_value(self.navigate(p).await?))
            }
            commands::BRANCH => {
                let p = proto::BranchParams {
                    uri: arg(0)?,
                    entry_id: arg(1)?,
                    base_revision: None,
                };
                let result = self.branch(p).await?;
                if let Some(uri) = result
                    .new_uri
                    .as_deref()
                    .and_then(|u| u.parse::<Uri>().ok())
                {
                    if result.written {
                        let show = ShowDocumentParams {
                            uri,
                            external: None,
                            take_focus: Some(true),
                            selection: None,
                        };
                        let client = self.shared.client().clone();
                        tokio::spawn(async move {
                            let _ = client.show_document(show).await;
                        });
                    }
                }
                to_value(serde_json::to_value(result))
            }
            commands::LABEL => {
                let label = args.get(2).and_then(Value::as_str).map(str::to_owned);
                let p = proto::SetLabelParams {
                    uri: arg(0)?,
                    target_id: arg(1)?,
                    label,
                    base_revision: None,
                    force: false,
                };
                to_value(serde_json::to_value(self.set_label(p).await?))
            }
            other => Err(ApiError::invalid_params(format!(
                "unknown command `{other}`"
            ))),
        }
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> jsonrpc::Result<InitializeResult> {
        let hooks = params
            .capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get(proto::EXPERIMENTAL_KEY))
            .and_then(|v| serde_json::from_value::<proto::ClientExperimental>(v.clone()).ok())
            .is_some_and(|c| c.hooks);
        self.shared.set_hooks(hooks);
        let agent_dialogs = params
            .capabilities
            .experimental
            .as_ref()
            .and_then(|e| e.get(proto::EXPERIMENTAL_KEY))
            .and_then(|v| serde_json::from_value::<proto::ClientExperimental>(v.clone()).ok())
            .is_some_and(|c| c.agent_dialogs);
        self.shared.set_agent_dialogs(agent_dialogs);
        self.shared.set_progress(
            params
                .capabilities
                .window
                .as_ref()
                .and_then(|w| w.work_done_progress)
                .unwrap_or(false),
        );
        let options: proto::InitializationOptions = match params.initialization_options {
            Some(Value::Null) | None => proto::InitializationOptions::default(),
            Some(v) => serde_json::from_value(v).map_err(|e| {
                jsonrpc::Error::from(ApiError::invalid_params(format!(
                    "invalid initializationOptions: {e}"
                )))
            })?,
        };
        let mut folders: Vec<PathBuf> = params
            .workspace_folders
            .unwrap_or_default()
            .iter()
            .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .collect();
        #[allow(deprecated)] // Older clients still send only `rootUri`.
        if folders.is_empty() {
            if let Some(root) = params.root_uri.as_ref().and_then(|u| u.to_file_path()) {
                folders.push(root.into_owned());
            }
        }
        let locations = Locations::resolve(&options);
        // Stores come from here only (the user's settings), never from workspace configuration.
        let (stores, problems) = crate::stores::Stores::configure(&options.stores);
        for problem in &problems {
            tracing::warn!("stores: {problem}");
        }
        for store in stores.all() {
            tracing::info!(store = %store.address(), "session store");
        }
        self.registry.set_stores(stores);
        self.agents.configure(
            options.agent.clone().unwrap_or_default(),
            locations
                .home
                .as_ref()
                .map(|h| h.to_string_lossy().into_owned()),
        );
        let agent = Self::agent_summary_layer(&locations);
        let init = options
            .branch_summary
            .as_ref()
            .map_or_else(Default::default, |v| {
                crate::summary::settings::Layer::from_value(v, true, "initializationOptions")
            });
        self.shared.update_summary(|c| {
            c.agent = agent;
            c.init = init;
        });
        let summaries = self.shared.summary_settings();
        for problem in &summaries.problems {
            tracing::warn!("branch summaries: {problem}");
        }
        if let Ok(mut config) = self.config.write() {
            config.locations = locations;
            config.folders = folders;
            config.pull_configuration = params
                .capabilities
                .workspace
                .as_ref()
                .and_then(|w| w.configuration)
                .unwrap_or(false);
        }
        let mut features: Vec<String> = proto::FEATURES.iter().map(|f| (*f).to_owned()).collect();
        if summaries.enabled {
            features.push(proto::SUMMARIES_FEATURE.to_owned());
        }
        let experimental = serde_json::json!({
            proto::EXPERIMENTAL_KEY: proto::ServerExperimental {
                version: proto::PROTOCOL_VERSION,
                features,
                branch_summary: Some(proto::BranchSummaryStatus {
                    enabled: summaries.enabled,
                    provider: summaries.provider.as_ref().map(|p| p.name().to_owned()),
                }),
            }
        });
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "sessiontree".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::NONE),
                        save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                        ..Default::default()
                    },
                )),
                document_symbol_provider: Some(OneOf::Left(true)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_lens_provider: Some(CodeLensOptions {
                    resolve_provider: Some(false),
                }),
                code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: commands::ALL.iter().map(|c| (*c).to_owned()).collect(),
                    ..Default::default()
                }),
                definition_provider: Some(OneOf::Left(true)),
                workspace_symbol_provider: Some(OneOf::Left(true)),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    ..Default::default()
                }),
                experimental: Some(experimental),
                ..Default::default()
            },
            ..Default::default()
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tracing::info!(hooks = self.shared.hooks_enabled(), "initialized");
    }

    async fn shutdown(&self) -> jsonrpc::Result<()> {
        self.shut_down
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for handle in self.registry.all() {
            handle.close();
        }
        self.agents.stop_all().await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let uri = params.text_document.uri;
        let Some(location) = self.document_location(&uri) else {
            return;
        };
        self.shared.set_document_open(&location.key(), true);
        self.publish_for(&uri, &location).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        // `{"sessiontree": {"branchSummary": …}}` (VS Code's synchronized section) or
        // `{"branchSummary": …}`. A client that only signals the change (`settings: null` or
        // `{}`) is asked for the `sessiontree` section when it answers `workspace/configuration`.
        // Workspace configuration may come from a repository's own settings, so a `command` (or
        // a `caFile`) here is ignored. The agents' own settings files are read again too.
        let settings = &params.settings;
        let signal_only = settings.is_null() || settings.as_object().is_some_and(|o| o.is_empty());
        let (locations, pull) = self
            .config
            .read()
            .map(|c| (c.locations.clone(), c.pull_configuration))
            .unwrap_or_default();
        let mut branch = settings
            .get("sessiontree")
            .unwrap_or(settings)
            .get("branchSummary")
            .cloned();
        if signal_only && pull {
            let item = ConfigurationItem {
                scope_uri: None,
                section: Some("sessiontree".to_owned()),
            };
            match self.shared.client().configuration(vec![item]).await {
                Ok(values) => {
                    branch = values.first().and_then(|v| v.get("branchSummary")).cloned();
                }
                Err(e) => tracing::warn!("workspace/configuration failed: {e}"),
            }
        }
        let layer = branch.as_ref().map_or_else(Default::default, |v| {
            crate::summary::settings::Layer::from_value(v, false, "workspace configuration")
        });
        for warning in &layer.warnings {
            tracing::warn!("branch summaries: {warning}");
        }
        let agent = Self::agent_summary_layer(&locations);
        self.shared.update_summary(|c| {
            c.agent = agent;
            c.workspace = layer;
        });
        let now = self.shared.summary_settings();
        tracing::info!(
            enabled = now.enabled,
            provider = now.provider.as_ref().map_or("none", |p| p.name()),
            "branch summary settings changed"
        );
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let path = |f: &WorkspaceFolder| f.uri.to_file_path().map(|p| p.into_owned());
        if let Ok(mut config) = self.config.write() {
            let removed: Vec<PathBuf> = params.event.removed.iter().filter_map(path).collect();
            config.folders.retain(|f| !removed.contains(f));
            for added in params.event.added.iter().filter_map(path) {
                if !config.folders.contains(&added) {
                    config.folders.push(added);
                }
            }
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        if let Some(location) = self.document_location(&params.text_document.uri) {
            if let Some(handle) = self.registry.get_path(&location.key()) {
                handle.follow();
            }
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        if let Some(location) = self.document_location(&uri) {
            let key = location.key();
            self.shared.set_document_open(&key, false);
            if !self.protocol_open.contains(&key) {
                self.registry.close(&key);
            }
            self.shared
                .client()
                .publish_diagnostics(uri, Vec::new(), None)
                .await;
        }
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> jsonrpc::Result<Option<DocumentSymbolResponse>> {
        let home = self.locations().home;
        let symbols = self
            .with_document(&params.text_document.uri, move |a| {
                plain::document_symbols(&a.session, &a.tree_model(home.as_deref()))
            })
            .await;
        Ok(symbols.map(DocumentSymbolResponse::Nested))
    }

    async fn hover(&self, params: HoverParams) -> jsonrpc::Result<Option<Hover>> {
        let pos = params.text_document_position_params;
        let line = pos.position.line;
        let home = self.locations().home;
        Ok(self
            .with_document(&pos.text_document.uri, move |a| {
                plain::hover(&a.session, &a.tree_model(home.as_deref()), line)
            })
            .await
            .flatten())
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> jsonrpc::Result<Option<GotoDefinitionResponse>> {
        let pos = params.text_document_position_params;
        let uri = pos.text_document.uri.clone();
        let line = pos.position.line;
        let location = self
            .with_document(&pos.text_document.uri, move |a| {
                plain::parent_location(&a.session, &uri, line)
            })
            .await
            .flatten();
        Ok(location.map(GotoDefinitionResponse::Scalar))
    }

    async fn code_lens(&self, params: CodeLensParams) -> jsonrpc::Result<Option<Vec<CodeLens>>> {
        Ok(self
            .with_document(&params.text_document.uri, |a| {
                plain::code_lenses(&a.session, &a.uri)
            })
            .await)
    }

    async fn code_action(
        &self,
        params: CodeActionParams,
    ) -> jsonrpc::Result<Option<CodeActionResponse>> {
        let line = params.range.start.line;
        Ok(self
            .with_document(&params.text_document.uri, move |a| {
                plain::code_actions(&a.session, &a.uri, line)
            })
            .await)
    }

    async fn execute_command(
        &self,
        params: ExecuteCommandParams,
    ) -> jsonrpc::Result<Option<LSPAny>> {
        Ok(Some(self.run_command(params).await?))
    }

    async fn symbol(
        &self,
        params: WorkspaceSymbolParams,
    ) -> jsonrpc::Result<Option<WorkspaceSymbolResponse>> {
        let locations = self.locations();
        let folders = self.workspace_folders();
        let open = self.registry.all();
        let open_keys: Vec<PathBuf> = open.iter().map(|h| h.path.clone()).collect();
        let stores = self.registry.stores();
        let index = Arc::clone(&self.symbols);
        let query = params.query;
        let runtime = tokio::runtime::Handle::current();
        let found = tokio::task::spawn_blocking(move || {
            // Open sessions first, named from what their actors hold; then the files found.
            let mut targets: Vec<crate::symbols::Searched> = open
                .into_iter()
                .map(|handle| crate::symbols::Searched::Open(handle.searched(&runtime)))
                .collect();
            for (path, _) in crate::discovery::files(&locations, &folders) {
                if !open_keys.contains(&path) {
                    targets.push(crate::symbols::Searched::File(path));
                }
            }
            // A store's sessions are those its listing shows for the workspace folders (as
            // `listSessions` lists them), but for those open; a store that cannot be listed is
            // skipped.
            let names: Vec<String> = folders
                .iter()
                .map(|f| {
                    crate::discovery::omp_dir_name(f, locations.home.as_deref(), &locations.tmp)
                })
                .collect();
            for store in stores.all() {
                match store.searched(&names, &open_keys) {
                    Ok(found) => targets.extend(found),
                    Err(err) => tracing::warn!("workspace symbols: {err}"),
                }
            }
            index.search_in(&targets, locations.home.as_deref(), &query, 200)
        })
        .await
        .map_err(|e| jsonrpc::Error::from(ApiError::new(ErrorKind::Internal, e.to_string())))?;
        Ok(Some(WorkspaceSymbolResponse::Flat(found)))
    }
}
