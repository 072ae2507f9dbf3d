//! The two flows that may wait for a client: `/tree` (navigate) and `/branch`. Each takes the
//! engine's decision (`view::navigate`, `view::branch_pick`), asks the client's hook when it
//! declared hooks (answering reads meanwhile), then applies the decision through the engine.

use super::{Actor, Command, Inbox, Outgoing};
use crate::errors::{ApiError, ApiResult};
use crate::summary::{Failure, Provider, Tokens};
use crate::to_proto;
use sessiontree_core::summary::SummaryRequest;
use sessiontree_core::{Error as CoreError, Session};
use sessiontree_protocol::{self as proto, ChangeReason, ErrorKind};
use std::sync::Arc;
use tokio::sync::oneshot;

/// The error of a request the client cancelled while its hook was pending (the client never
/// sees it: the cancelled request is answered `RequestCancelled` by the LSP layer).
fn cancelled() -> ApiError {
    ApiError::new(
        ErrorKind::Internal,
        "cancelled by the client; nothing was changed",
    )
}

/// How running a summary provider ended.
enum SummaryOutcome {
    /// The provider finished: its text or how it failed.
    Written(Result<String, Failure>),
    /// The client cancelled the request (`$/cancelRequest`).
    RequestCancelled,
    /// The client cancelled the progress report (`window/workDoneProgress/cancel`).
    ProgressCancelled,
}

impl Actor {
    /// Waits for a client's hook answer. Reads are answered meanwhile (a client may look at the
    /// session before it answers); everything else waits its turn. `None` when the request was
    /// cancelled meanwhile.
    pub(super) async fn wait_for<T>(
        &mut self,
        answer: impl std::future::Future<Output = T>,
        cancelled: impl std::future::Future<Output = ()>,
        inbox: &mut Inbox,
    ) -> Option<T> {
        tokio::pin!(answer);
        tokio::pin!(cancelled);
        loop {
            tokio::select! {
                biased;
                out = &mut answer => return Some(out),
                // The client cancelled the request (`$/cancelRequest` drops its answer channel):
                // stop here, before anything is written.
                () = &mut cancelled => return None,
                command = inbox.rx.recv(), if !inbox.closed => match command {
                    Some(Command::Read(job)) => job(self)(),
                    Some(other) => inbox.deferred.push_back(other),
                    None => inbox.closed = true,
                },
            }
        }
    }

    /// Runs a summary provider while reporting `$/progress` (begin, streamed tokens, end; the
    /// report is cancellable). Reads are answered meanwhile. When the client cancels the request
    /// or the report, the provider is dropped at once (its connection closed, its child process
    /// killed).
    async fn write_summary(
        &mut self,
        provider: &Provider,
        request: &SummaryRequest,
        entries: usize,
        inbox: &mut Inbox,
        reply: &mut oneshot::Sender<ApiResult<proto::NavigateResult>>,
    ) -> SummaryOutcome {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let tokens = Tokens(tx);
        let progress = self
            .shared
            .begin_cancellable_progress(
                "Summarizing branch",
                format!("{entries} abandoned entries ({} provider)", provider.name()),
            )
            .await;
        let outcome = {
            let run = crate::summary::generate(provider, request, &tokens);
            tokio::pin!(run);
            let closed = reply.closed();
            tokio::pin!(closed);
            let progress_cancelled = async {
                match &progress {
                    Some(progress) => progress.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::pin!(progress_cancelled);
            loop {
                tokio::select! {
                    biased;
                    out = &mut run => break SummaryOutcome::Written(out),
                    () = &mut closed => break SummaryOutcome::RequestCancelled,
                    () = &mut progress_cancelled => break SummaryOutcome::ProgressCancelled,
                    Some(mut n) = rx.recv() => {
                        while let Ok(more) = rx.try_recv() {
                            n = more;
                        }
                        if let Some(progress) = &progress {
                            progress.report(format!("{n} tokens")).await;
                        }
                    }
                    command = inbox.rx.recv(), if !inbox.closed => match command {
                        Some(Command::Read(job)) => job(self)(),
                        Some(other) => inbox.deferred.push_back(other),
                        None => inbox.closed = true,
                    },
                }
            }
        };
        if let Some(progress) = progress {
            progress.finish().await;
        }
        outcome
    }

    pub(super) async fn navigate(
        &mut self,
        p: proto::NavigateParams,
        inbox: &mut Inbox,
        reply: &mut oneshot::Sender<ApiResult<proto::NavigateResult>>,
    ) -> ApiResult<proto::NavigateResult> {
        use sessiontree_core::view::navigate::{self as nav, Caller, Decision, NavigateOptions};
        self.check_base(p.base_revision)?;
        let rev = self.revision();
        if !self.session.contains(&p.target_id) {
            return Err(ApiError::new(
                ErrorKind::EntryNotFound,
                format!("entry {} not found in {}", p.target_id, self.uri),
            )
            .at(rev));
        }
        let old_leaf = self.session.leaf_id().map(str::to_owned);
        let wants_summary = p.summarize != proto::SummarizeChoice::None;
        let options = NavigateOptions {
            summarize: wants_summary,
            caller: Caller::Selector,
            label: p.label.clone(),
        };
        let stay = |decision: proto::NavigateDecision,
                    already: bool,
                    cancelled: bool,
                    tool_call_id: Option<String>| {
            proto::NavigateResult {
                revision: rev,
                decision,
                old_leaf: old_leaf.clone(),
                new_leaf: old_leaf.clone(),
                editor_text: None,
                already_at_this_point: already,
                cancelled,
                summary_entry_id: None,
                summary_skipped: false,
                tool_call_id,
            }
        };
        let mut plan = match nav::decide(&self.session, &p.target_id, &options)
            .map_err(|e| ApiError::from(e).at(rev))?
        {
            Decision::AlreadyHere => {
                return Ok(stay(proto::NavigateDecision::Stay, true, false, None))
            }
            Decision::ReopenAsk { tool_call_id } => {
                return Ok(stay(
                    proto::NavigateDecision::ReopenAsk,
                    false,
                    false,
                    Some(tool_call_id),
                ))
            }
            Decision::Move(plan) => plan,
        };
        let settings = self.shared.summary_settings();
        let server_provider = settings.server_provider().cloned();
        let no_model = |why: String| {
            ApiError::new(
                ErrorKind::NoModel,
                format!(
                    "a summary was asked for but no summary model is available and no client supplied one ({why}); nothing moved — navigate without a summary or configure a model"
                ),
            )
            .at(rev)
        };
        // Fail fast: nothing could write the summary.
        if plan.summarize && server_provider.is_none() && !self.shared.hooks_enabled() {
            return Err(no_model(settings.why_no_model()));
        }
        let mut supplied = None;
        if self.shared.hooks_enabled() {
            let params = proto::BeforeTreeParams {
                uri: self.uri.clone(),
                target_id: p.target_id.clone(),
                old_leaf: old_leaf.clone(),
                common_ancestor: plan.common_ancestor.clone(),
                entries_to_summarize: plan.abandoned.clone(),
                entries: plan
                    .abandoned
                    .iter()
                    .filter_map(|id| self.session.entry(id))
                    .map(|e| e.json())
                    .collect(),
                user_wants_summary: wants_summary,
                custom_instructions: p.custom_instructions.clone(),
            };
            let shared = Arc::clone(&self.shared);
            if let Some(answer) = self
                .wait_for(
                    shared.ask::<proto::BeforeTree>(params),
                    reply.closed(),
                    inbox,
                )
                .await
                .ok_or_else(cancelled)?
            {
                if answer.cancel {
                    return Ok(stay(proto::NavigateDecision::Stay, false, true, None));
                }
                supplied = answer.summary.filter(|s| !s.summary.is_empty());
            }
        }
        let mut summary = supplied.as_ref().map(|s| nav::Summary {
            text: s.summary.clone(),
            details: s.details.clone(),
            from_extension: true,
        });
        if summary.is_some() {
            // A client's summary is used whether or not the user asked for one, as the agents
            // use an extension's.
            plan.summarize = true;
        } else if plan.summarize {
            let Some(provider) = server_provider else {
                return Err(no_model(settings.why_no_model()));
            };
            let entries: Vec<serde_json::Value> = plan
                .abandoned
                .iter()
                .filter_map(|id| self.session.entry(id))
                .map(|e| e.json())
                .collect();
            let custom = match p.summarize {
                proto::SummarizeChoice::Custom => p.custom_instructions.as_deref(),
                _ => None,
            };
            match sessiontree_core::summary::build_request(
                &entries,
                self.session.dialect(),
                custom,
                settings.budget(&provider),
            ) {
                // Only bookkeeping was abandoned: move without a summary.
                None => {
                    plan.summarize = false;
                    plan.summary_skipped = true;
                }
                Some(request) => {
                    let written = self
                        .write_summary(&provider, &request, entries.len(), inbox, reply)
                        .await;
                    let text = match written {
                        SummaryOutcome::Written(text) => {
                            text.map_err(|f| f.into_api(provider.name(), rev))?
                        }
                        SummaryOutcome::RequestCancelled => return Err(cancelled()),
                        // The user pressed the report's cancel button: the navigation is
                        // answered as cancelled, as a hook's cancel is.
                        SummaryOutcome::ProgressCancelled => {
                            return Ok(stay(proto::NavigateDecision::Stay, false, true, None))
                        }
                    };
                    let done = sessiontree_core::summary::finish(&request, &text);
                    summary = Some(nav::Summary {
                        text: done.text,
                        details: Some(done.details),
                        from_extension: false,
                    });
                }
            }
        }
        let before_len = self.session.entries().len();
        let store = self.store.is_some();
        let written = super::off_async(store, || {
            nav::apply(&mut self.session, &plan, summary.as_ref())
        });
        if self.session.entries().len() != before_len || self.revision() != rev {
            self.announce(ChangeReason::Navigate, before_len);
        }
        let summary_entry_id = written.map_err(|e| ApiError::from(e).at(self.revision()))?;
        self.mark_navigation(&p.target_id);
        let leaf_now = self.session.leaf_id().map(str::to_owned);
        self.outbox
            .push(Outgoing::Navigate(proto::DidNavigateParams {
                uri: self.uri.clone(),
                revision: self.revision(),
                new_leaf: leaf_now.clone(),
                old_leaf: old_leaf.clone(),
                summary_entry_id: summary_entry_id.clone(),
                from_client: summary_entry_id.is_some() && supplied.is_some(),
            }));
        let decision = match (&plan.new_leaf, plan.editor_text.is_some()) {
            (None, _) => proto::NavigateDecision::Root,
            (Some(leaf), _) if *leaf == plan.target_id => proto::NavigateDecision::Target,
            _ => proto::NavigateDecision::Parent,
        };
        Ok(proto::NavigateResult {
            revision: self.revision(),
            decision,
            old_leaf,
            new_leaf: leaf_now,
            editor_text: plan.editor_text,
            already_at_this_point: false,
            cancelled: false,
            summary_entry_id,
            summary_skipped: plan.summary_skipped,
            tool_call_id: None,
        })
    }

    /// The `/branch` flow: the engine's decision (user messages only), the hook, the new session.
    pub(super) async fn branch(
        &mut self,
        p: proto::BranchParams,
        inbox: &mut Inbox,
        reply: &mut oneshot::Sender<ApiResult<(proto::BranchResult, Option<Session>)>>,
    ) -> ApiResult<(proto::BranchResult, Option<Session>)> {
        use sessiontree_core::view::branch_pick;
        self.check_base(p.base_revision)?;
        let rev = self.revision();
        if !self.session.contains(&p.entry_id) {
            return Err(ApiError::new(
                ErrorKind::EntryNotFound,
                format!("entry {} not found in {}", p.entry_id, self.uri),
            )
            .at(rev));
        }
        let decision =
            branch_pick::decide_branch(&self.session, &p.entry_id).map_err(|e| match e {
                CoreError::Unsupported(_) => ApiError::new(
                    ErrorKind::NotUserMessage,
                    format!(
                        "entry {} is not a user message; /branch starts from a user message",
                        p.entry_id
                    ),
                )
                .at(rev),
                other => ApiError::from(other).at(rev),
            })?;
        let text = decision.selected_text().to_owned();
        if self.shared.hooks_enabled() {
            let params = proto::BeforeBranchParams {
                uri: self.uri.clone(),
                entry_id: p.entry_id.clone(),
            };
            let shared = Arc::clone(&self.shared);
            if let Some(answer) = self
                .wait_for(
                    shared.ask::<proto::BeforeBranch>(params),
                    reply.closed(),
                    inbox,
                )
                .await
                .ok_or_else(cancelled)?
            {
                if answer.cancel {
                    let result = proto::BranchResult {
                        new_uri: None,
                        new_path: None,
                        session_id: None,
                        written: false,
                        editor_text: text,
                        cancelled: true,
                        revision: rev,
                    };
                    return Ok((result, None));
                }
            }
        }
        let ids = Box::new(sessiontree_core::ids::RandomIds);
        let store = self.store.is_some();
        let fork = super::off_async(store, || {
            branch_pick::apply_branch(&mut self.session, &decision, ids)
        })
        .map_err(|e| ApiError::from(e).at(rev))?;
        let new_path = fork.path().map(std::path::Path::to_path_buf);
        let written = matches!(
            fork.file_state(),
            sessiontree_core::session::FileState::Written { .. }
        );
        // A store's fork is a new key of the same store.
        let new_uri = new_path.as_deref().and_then(|path| match &self.store {
            Some(located) => located.store.locate(path).map(|l| l.uri),
            None => Some(to_proto::uri_of(path)),
        });
        if let Some(new_uri) = &new_uri {
            self.outbox.push(Outgoing::Branch(proto::DidBranchParams {
                uri: self.uri.clone(),
                entry_id: p.entry_id.clone(),
                new_uri: new_uri.clone(),
                written,
            }));
        }
        let result = proto::BranchResult {
            new_uri,
            new_path: new_path.map(|p| p.to_string_lossy().into_owned()),
            session_id: Some(fork.session_id().to_owned()),
            written,
            editor_text: text,
            cancelled: false,
            revision: self.revision(),
        };
        Ok((result, Some(fork)))
    }
}
