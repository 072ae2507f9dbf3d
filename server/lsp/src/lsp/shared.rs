//! State every part of the server shares: the editor connection, what the client declared, which
//! session files are open as text documents. Sending to the editor goes through here so that the
//! protocol marker types are bridged to `tower-lsp-server` in one place.

use dashmap::{DashMap, DashSet};
use sessiontree_protocol as proto;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::Client;

/// Bridges a protocol marker type to `tower-lsp-server`'s request and notification traits.
pub struct Lsp<M>(PhantomData<M>);

impl<M: proto::Request> lsp::request::Request for Lsp<M> {
    type Params = M::Params;
    type Result = M::Result;
    const METHOD: &'static str = M::METHOD;
}

impl<M: proto::Notification> lsp::notification::Notification for Lsp<M> {
    type Params = M::Params;
    const METHOD: &'static str = M::METHOD;
}

/// How long a hook may take before the server goes on as if the client had not answered.
const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

/// Shared server state.
#[derive(Debug)]
pub struct Shared {
    client: Client,
    hooks: AtomicBool,
    agent_dialogs: AtomicBool,
    progress: AtomicBool,
    progress_tokens: std::sync::atomic::AtomicU64,
    /// The cancellable progress reports under way, by token.
    progress_cancels: Arc<DashMap<String, Arc<Notify>>>,
    open_documents: DashSet<PathBuf>,
    /// Sessions whose attached agent's bridge records the rewind points itself.
    rewind_by_bridge: DashSet<PathBuf>,
    summary: std::sync::RwLock<crate::summary::SummaryConfig>,
}

impl Shared {
    /// State for a new connection.
    pub fn new(client: Client) -> Self {
        Shared {
            client,
            hooks: AtomicBool::new(false),
            agent_dialogs: AtomicBool::new(false),
            progress: AtomicBool::new(false),
            progress_tokens: std::sync::atomic::AtomicU64::new(0),
            progress_cancels: Arc::default(),
            open_documents: DashSet::new(),
            rewind_by_bridge: DashSet::new(),
            summary: std::sync::RwLock::default(),
        }
    }

    /// The editor connection.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Records whether the agent attached to the session at `path` records its rewind points
    /// itself (its bridge does, at the agent's own boundaries): the server then records none.
    pub fn set_rewind_by_bridge(&self, path: &Path, on: bool) {
        if on {
            self.rewind_by_bridge.insert(path.to_path_buf());
        } else {
            self.rewind_by_bridge.remove(path);
        }
    }

    /// Whether the session's rewind points are recorded by its agent's bridge.
    pub fn rewind_by_bridge(&self, path: &Path) -> bool {
        self.rewind_by_bridge.contains(path)
    }

    /// Records whether the client answers hooks (from `initialize`).
    pub fn set_hooks(&self, on: bool) {
        self.hooks.store(on, Ordering::Relaxed);
    }

    /// Whether the client declared `experimental.sessionTree.hooks`.
    pub fn hooks_enabled(&self) -> bool {
        self.hooks.load(Ordering::Relaxed)
    }

    /// Records whether the client shows the agent's dialogs (from `initialize`).
    pub fn set_agent_dialogs(&self, on: bool) {
        self.agent_dialogs.store(on, Ordering::Relaxed);
    }

    /// Whether the client declared `experimental.sessionTree.agentDialogs`.
    pub fn agent_dialogs_enabled(&self) -> bool {
        self.agent_dialogs.load(Ordering::Relaxed)
    }

    /// Records whether the client shows work-done progress (`window.workDoneProgress`).
    pub fn set_progress(&self, on: bool) {
        self.progress.store(on, Ordering::Relaxed);
    }

    /// Starts a `$/progress` report, when the client shows them and accepts the token.
    pub async fn begin_progress(
        &self,
        title: &str,
        message: String,
    ) -> Option<
        tower_lsp_server::OngoingProgress<
            tower_lsp_server::Unbounded,
            tower_lsp_server::NotCancellable,
        >,
    > {
        let token = self.create_progress_token().await?;
        Some(
            self.client
                .progress(token, title.to_owned())
                .with_message(message)
                .begin()
                .await,
        )
    }

    /// Starts a `$/progress` report with a cancel button (`cancellable: true`), when the client
    /// shows them and accepts the token: the client's `window/workDoneProgress/cancel` for it
    /// wakes [`CancellableProgress::cancelled`].
    pub async fn begin_cancellable_progress(
        &self,
        title: &str,
        message: String,
    ) -> Option<CancellableProgress> {
        let token = self.create_progress_token().await?;
        let lsp::NumberOrString::String(key) = &token else {
            return None;
        };
        let cancel = Arc::new(Notify::new());
        self.progress_cancels.insert(key.clone(), cancel.clone());
        let progress = self
            .client
            .progress(token.clone(), title.to_owned())
            .with_message(message)
            .with_cancel_button()
            .begin()
            .await;
        Some(CancellableProgress {
            progress,
            key: key.clone(),
            cancels: self.progress_cancels.clone(),
            cancel,
        })
    }

    /// The client's `window/workDoneProgress/cancel`: wakes the report's waiter (an unknown or
    /// finished token is ignored).
    pub fn cancel_progress(&self, token: &lsp::NumberOrString) {
        if let lsp::NumberOrString::String(key) = token {
            if let Some(cancel) = self.progress_cancels.get(key) {
                cancel.notify_one();
            }
        }
    }

    /// A new progress token the client accepted (`window/workDoneProgress/create`).
    async fn create_progress_token(&self) -> Option<lsp::NumberOrString> {
        if !self.progress.load(Ordering::Relaxed) {
            return None;
        }
        let n = self.progress_tokens.fetch_add(1, Ordering::Relaxed);
        let token = lsp::NumberOrString::String(format!("sessiontree/{n}"));
        // A client that never answers must not hold up the work.
        let created = self.client.create_work_done_progress(token.clone());
        tokio::time::timeout(Duration::from_secs(2), created)
            .await
            .ok()?
            .ok()?;
        Some(token)
    }

    /// Changes the branch summary settings.
    pub fn update_summary(&self, f: impl FnOnce(&mut crate::summary::SummaryConfig)) {
        if let Ok(mut config) = self.summary.write() {
            f(&mut config);
        }
    }

    /// The branch summary settings in force.
    pub fn summary_settings(&self) -> crate::summary::Effective {
        self.summary
            .read()
            .map(|c| c.effective())
            .unwrap_or_else(|_| crate::summary::SummaryConfig::default().effective())
    }

    /// Marks a session file as open (or closed) as a text document.
    pub fn set_document_open(&self, path: &Path, open: bool) {
        if open {
            self.open_documents.insert(path.to_path_buf());
        } else {
            self.open_documents.remove(path);
        }
    }

    /// Whether the file is open as a text document.
    pub fn is_document_open(&self, path: &Path) -> bool {
        self.open_documents.contains(path)
    }

    /// Sends a protocol notification.
    pub async fn notify<N: proto::Notification>(&self, params: N::Params) {
        self.client.send_notification::<Lsp<N>>(params).await;
    }

    /// Sends a protocol request to the client and waits at most `timeout` (`None`: as long as
    /// the client takes); `None` when it failed or took too long.
    pub async fn ask_for<R: proto::Request>(
        &self,
        params: R::Params,
        timeout: Option<Duration>,
    ) -> Option<R::Result> {
        let request = self.client.send_request::<Lsp<R>>(params);
        let answer = match timeout {
            Some(limit) => tokio::time::timeout(limit, request).await.ok()?,
            None => request.await,
        };
        match answer {
            Ok(answer) => Some(answer),
            Err(err) => {
                tracing::warn!("{} failed: {err}", R::METHOD);
                None
            }
        }
    }

    /// Sends a protocol request to the client; `None` when it failed or took too long.
    pub async fn ask<R: proto::Request>(&self, params: R::Params) -> Option<R::Result> {
        match tokio::time::timeout(HOOK_TIMEOUT, self.client.send_request::<Lsp<R>>(params)).await {
            Ok(Ok(answer)) => Some(answer),
            Ok(Err(err)) => {
                tracing::warn!("{} failed: {err}", R::METHOD);
                None
            }
            Err(_) => {
                tracing::warn!("{} got no answer in {HOOK_TIMEOUT:?}", R::METHOD);
                None
            }
        }
    }

    /// Publishes diagnostics for a session (by its URI).
    pub async fn publish_diagnostics(
        &self,
        uri: &str,
        diagnostics: Vec<lsp::Diagnostic>,
        revision: u64,
    ) {
        if let Ok(uri) = uri.parse::<lsp::Uri>() {
            let version = i32::try_from(revision).ok();
            self.client
                .publish_diagnostics(uri, diagnostics, version)
                .await;
        }
    }
}

/// A `$/progress` report the user may cancel.
pub struct CancellableProgress {
    progress: tower_lsp_server::OngoingProgress<
        tower_lsp_server::Unbounded,
        tower_lsp_server::Cancellable,
    >,
    key: String,
    cancels: Arc<DashMap<String, Arc<Notify>>>,
    cancel: Arc<Notify>,
}

impl CancellableProgress {
    /// Updates the report's message.
    pub async fn report(&self, message: String) {
        self.progress.report_with_message(message, None).await;
    }

    /// Resolves once the client cancelled the report (a cancel that came earlier counts).
    pub async fn cancelled(&self) {
        self.cancel.notified().await;
    }

    /// Ends the report.
    pub async fn finish(self) {
        self.cancels.remove(&self.key);
        self.progress.finish().await;
    }
}
