//! The `sessionTree/*` requests: params parsed here (malformed params become `invalidParams`
//! errors with `data.kind`), work routed to the session's actor, results returned typed.

use crate::backend::Backend;
use crate::context_reply::{Answer, ContextReply};
use crate::errors::{ApiError, ApiResult};
use crate::raw_reply::Reply;
use crate::{discovery, registry, rows, to_proto};
use serde_json::{json, Value};
use sessiontree_core::session::CustomMessageArgs;
use sessiontree_protocol::{self as proto, ChangeReason, ErrorKind, Request as _};
use tower_lsp_server::jsonrpc;
use tower_lsp_server::LspServiceBuilder;

fn parse<P: serde::de::DeserializeOwned>(method: &str, params: Value) -> ApiResult<P> {
    serde_json::from_value(params)
        .map_err(|e| ApiError::invalid_params(format!("invalid params for {method}: {e}")))
}

macro_rules! handlers {
    ($($handler:ident => $marker:ty, $imp:ident;)*) => {
        impl Backend {
            $(
                async fn $handler(&self, params: Value) -> jsonrpc::Result<<$marker as proto::Request>::Result> {
                    let params = parse(<$marker>::METHOD, params)?;
                    Ok(self.$imp(params).await?)
                }
            )*
        }

        /// Registers every `sessionTree/*` request on the service.
        pub fn register(builder: LspServiceBuilder<Backend>) -> LspServiceBuilder<Backend> {
            builder
                $(.custom_method(<$marker>::METHOD, Backend::$handler))*
                .custom_method(proto::Context::METHOD, Backend::h_context)
                .custom_method(proto::Rows::METHOD, Backend::h_rows)
                .custom_method("window/workDoneProgress/cancel", Backend::h_progress_cancel)
        }
    };
}

handlers! {
    h_list_sessions => proto::ListSessions, list_sessions;
    h_open => proto::Open, open;
    h_close => proto::Close, close;
    h_tree => proto::Tree, tree;
    h_entry => proto::GetEntry, entry;
    h_navigate => proto::Navigate, navigate;
    h_branch => proto::Branch, branch;
    h_set_label => proto::SetLabel, set_label;
    h_append => proto::Append, append;
    h_set_name => proto::SetName, set_name;
    h_name_from_plan_title => proto::NameFromPlanTitle, name_from_plan_title;
    h_transcript => proto::Transcript, transcript;
    h_prompt => proto::Prompt, prompt;
    h_abort => proto::Abort, abort;
    h_agent => proto::GetAgent, agent;
    h_stop_agent => proto::StopAgent, stop_agent;
    h_install_bridge => proto::InstallBridge, install_bridge;
    h_rewind_points => proto::RewindPoints, rewind_points;
    h_rewind_compare => proto::RewindCompare, rewind_compare;
    h_rewind_file => proto::RewindFile, rewind_file;
    h_rewind_restore => proto::RewindRestore, rewind_restore;
    h_rewind_undo => proto::RewindUndo, rewind_undo;
}

impl Backend {
    /// `window/workDoneProgress/cancel` (the LSP library does not route it): the user cancelled
    /// one of the server's progress reports.
    async fn h_progress_cancel(
        &self,
        params: tower_lsp_server::ls_types::WorkDoneProgressCancelParams,
    ) {
        self.shared.cancel_progress(&params.token);
    }
}

/// The longest label a request may set (labels are short tags drawn in every row).
pub(crate) const MAX_LABEL_CHARS: usize = 10_000;
/// The longest text a request may append or name a session with (omp cuts persisted strings
/// at 500 000 characters; we refuse rather than cut).
pub(crate) const MAX_TEXT_CHARS: usize = 500_000;

/// Refuses an oversized value before anything is written.
pub(crate) fn check_size(what: &str, value: Option<&str>, max: usize) -> ApiResult<()> {
    match value {
        // Bytes bound characters from above: count only when the bytes exceed the limit.
        Some(v) if v.len() > max && v.chars().count() > max => {
            Err(ApiError::invalid_params(format!(
                "the {what} has {} characters, more than the {max} allowed; nothing was written",
                v.chars().count()
            )))
        }
        _ => Ok(()),
    }
}

fn outside_roots(path: &std::path::Path) -> ApiError {
    ApiError::invalid_params(format!(
        "{} is outside the workspace folders, the extra roots and the agents' session folders; \
         nothing was read (add its folder to initializationOptions.extraRoots)",
        path.display()
    ))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(0))
        .unwrap_or(0)
}

pub(crate) fn mutation(
    actor: &crate::actor::Actor,
    entry_id: Option<String>,
) -> proto::MutationResult {
    proto::MutationResult {
        revision: actor.revision(),
        leaf: actor.session.leaf_id().map(str::to_owned),
        entry_id,
    }
}

pub(crate) fn name_result(
    actor: &crate::actor::Actor,
    entry_id: Option<String>,
) -> proto::NameResult {
    proto::NameResult {
        revision: actor.revision(),
        leaf: actor.session.leaf_id().map(str::to_owned),
        applied: entry_id.is_some(),
        entry_id,
        name: actor.session.session_name().map(crate::to_proto::drawable),
    }
}

impl Backend {
    pub(crate) async fn list_sessions(
        &self,
        p: proto::ListSessionsParams,
    ) -> ApiResult<proto::ListSessionsResult> {
        let folders = if p.folders.is_empty() {
            self.workspace_folders()
        } else {
            p.folders
                .iter()
                .map(|f| to_proto::path_of(f))
                .collect::<ApiResult<Vec<_>>>()?
        };
        let locations = self.locations();
        let stores = self.registry.stores();
        let (sessions, unavailable) = tokio::task::spawn_blocking(move || {
            let mut sessions = discovery::list(&locations, &folders);
            if stores.all().is_empty() {
                return (sessions, Vec::new());
            }
            // A store's sessions are omp's: those in the folders omp names after the workspace
            // folders, whatever the home they were written under.
            let names: Vec<String> = folders
                .iter()
                .map(|f| discovery::omp_dir_name(f, locations.home.as_deref(), &locations.tmp))
                .collect();
            let (found, unavailable) =
                crate::stores::list_all(&stores, &names, locations.live_writer);
            sessions.extend(found);
            discovery::sort_newest_first(&mut sessions);
            (sessions, unavailable)
        })
        .await
        .map_err(|e| ApiError::new(ErrorKind::Internal, format!("listing failed: {e}")))?;
        Ok(proto::ListSessionsResult {
            sessions,
            unavailable,
        })
    }

    pub(crate) async fn open(&self, p: proto::OpenParams) -> ApiResult<proto::OpenResult> {
        let location = self.registry.locate(&p.uri)?;
        if let registry::Location::File(path) = &location {
            self.check_inside_roots(path)?;
        }
        let handle = self.registry.open_at(&location);
        self.protocol_open.insert(handle.path.clone());
        let result = handle
            .read(|a| Ok(to_proto::open_result(&a.uri, &a.session, a.revision())))
            .await?;
        // The live agent keeps its sessions in files (see docs/redis.md).
        if handle.store.is_none() {
            self.follow_agent(handle).await;
        }
        Ok(result)
    }

    /// The security policy (docs/security.md): once the client named any root (a workspace
    /// folder, `rootUri` or `extraRoots`), `open` reaches only files inside those roots and the
    /// agents' session folders, judged on the real path (symlinks and `..` resolved). A client
    /// that named no root at all (a lone file in a plain LSP editor) is not restricted.
    fn check_inside_roots(&self, path: &std::path::Path) -> ApiResult<()> {
        let locations = self.locations();
        let mut roots = self.workspace_folders();
        roots.extend(locations.extra_roots.iter().cloned());
        if roots.is_empty() {
            return Ok(());
        }
        roots.extend(locations.omp_sessions.iter().cloned());
        roots.extend(locations.pi_sessions.iter().cloned());
        let real = match std::fs::canonicalize(path) {
            Ok(real) => real,
            // Missing: judge the path as written, refusing any `..` in it.
            Err(_)
                if path
                    .components()
                    .any(|c| c == std::path::Component::ParentDir) =>
            {
                return Err(outside_roots(path))
            }
            Err(_) => path.to_path_buf(),
        };
        let inside = roots.iter().any(|root| {
            let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
            real.starts_with(&root)
        });
        if inside {
            Ok(())
        } else {
            Err(outside_roots(path))
        }
    }

    pub(crate) async fn close(&self, p: proto::OpenParams) -> ApiResult<proto::CloseResult> {
        let (path, key) = match self.registry.locate(&p.uri)? {
            registry::Location::File(path) => {
                let key = registry::key_of(&path);
                (path, key)
            }
            registry::Location::Store(located) => (located.key(), located.key()),
        };
        self.protocol_open.remove(&key);
        self.protocol_open.remove(&path);
        self.agents.forget(&key).await;
        Ok(proto::CloseResult {
            closed: self.registry.close(&path),
        })
    }

    pub(crate) async fn rows(&self, p: proto::RowsParams) -> ApiResult<proto::RowsResult> {
        let handle = self.registry.get(&p.uri)?;
        let home = self.locations().home;
        handle
            .read(move |a| {
                let mut p = p;
                if let Some(way) = p.segment {
                    // pi's fold keys on a row they do not fold: the selection moves first.
                    let state = rows::view_state(&a.session, &p);
                    let to =
                        a.segment_start(home.as_deref(), &state, &p.folded, rows::segment(way));
                    p.selection = to.or(p.selection);
                }
                let window =
                    |state: &_, folded: &[String]| a.window(home.as_deref(), state, folded);
                Ok(rows::compute_rows(&a.session, window, &p, a.revision()))
            })
            .await
    }

    pub(crate) async fn tree(&self, p: proto::TreeParams) -> ApiResult<proto::TreeResult> {
        let handle = self.registry.get(&p.uri)?;
        let home = self.locations().home;
        handle
            .read(move |a| {
                let model = a.tree_model(home.as_deref());
                Ok(rows::tree_page(&a.session, &model, &p, a.revision()))
            })
            .await
    }

    pub(crate) async fn entry(&self, p: proto::EntryParams) -> ApiResult<proto::EntryResult> {
        let handle = self.registry.get(&p.uri)?;
        let home = self.locations().home;
        handle
            .read(move |a| {
                let s = &a.session;
                let Some(index) = s.index_of(&p.id) else {
                    return Err(ApiError::new(
                        ErrorKind::EntryNotFound,
                        format!("entry {} not found in {}", p.id, a.uri),
                    )
                    .at(a.revision()));
                };
                let entry = s
                    .entry_at(index)
                    .ok_or_else(|| ApiError::new(ErrorKind::Internal, "index out of range"))?;
                let label = s.label(&p.id);
                let tree = s.tree();
                let children = to_proto::ids_of(s, tree.children(index).iter().copied());
                Ok(proto::EntryResult {
                    revision: a.revision(),
                    entry: entry.json(),
                    markdown: sessiontree_core::describe::markdown(
                        entry,
                        &to_proto::drawable(&a.tree_model(home.as_deref()).entry_text(s, index)),
                        label,
                    ),
                    label: label.map(str::to_owned),
                    line: to_proto::u32_of(entry.line),
                    children,
                })
            })
            .await
    }

    /// `sessionTree/rows`, answered as text when the output can splice it in (see `raw_reply`):
    /// deep pi trees draw long gutter prefixes, which a value would copy once more.
    async fn h_rows(&self, params: Value) -> jsonrpc::Result<Reply<proto::RowsResult>> {
        let params = parse(proto::Rows::METHOD, params)?;
        let result = self.rows(params).await?;
        Ok(Reply::of(result, self.raw_replies.as_deref()))
    }

    /// `sessionTree/context`, answered as text when the output can splice it in (see
    /// `raw_reply`): its messages are mostly JSON text already.
    async fn h_context(&self, params: Value) -> jsonrpc::Result<ContextReply> {
        let params = parse(proto::Context::METHOD, params)?;
        Ok(self.context(params).await?)
    }

    pub(crate) async fn context(&self, p: proto::ContextParams) -> ApiResult<ContextReply> {
        let handle = self.registry.get(&p.uri)?;
        let replies = self.raw_replies.clone();
        handle
            .read(move |a| {
                let s = &a.session;
                let leaf = match &p.leaf {
                    Some(id) if !s.contains(id) => {
                        return Err(ApiError::new(
                            ErrorKind::EntryNotFound,
                            format!("entry {id} not found in {}", a.uri),
                        )
                        .at(a.revision()))
                    }
                    Some(id) => Some(id.clone()),
                    None => s.leaf_id().map(str::to_owned),
                };
                // No leaf means an empty session: the empty context.
                let ctx = sessiontree_core::context::session_context(s, leaf.as_deref());
                let answer = Answer::new(a.revision(), leaf, ctx, p.with_text.unwrap_or(true));
                Ok(match replies {
                    Some(replies) => ContextReply::Placeholder(replies.stash(answer.to_json())),
                    None => ContextReply::Value(answer.into_result()),
                })
            })
            .await
    }

    pub(crate) async fn navigate(
        &self,
        p: proto::NavigateParams,
    ) -> ApiResult<proto::NavigateResult> {
        check_size("label", p.label.as_deref(), MAX_LABEL_CHARS)?;
        check_size(
            "custom instructions",
            p.custom_instructions.as_deref(),
            MAX_TEXT_CHARS,
        )?;
        if let Some(result) = self.navigate_through_agent(&p).await? {
            return Ok(result);
        }
        if p.summarize != proto::SummarizeChoice::None {
            // A summary is a write: not behind an agent without the bridge.
            self.before_write(&p.uri, p.force).await?;
        }
        self.registry.get(&p.uri)?.navigate(p).await
    }

    pub(crate) async fn branch(&self, p: proto::BranchParams) -> ApiResult<proto::BranchResult> {
        let source = self.registry.get(&p.uri)?;
        let (result, fork) = source.branch(p).await?;
        if let (Some(fork), Some(path)) = (fork, result.new_path.as_deref()) {
            let path = std::path::Path::new(path);
            let location = match source.store.as_ref().and_then(|l| l.store.locate(path)) {
                Some(located) => registry::Location::Store(located),
                None => registry::Location::File(path.to_path_buf()),
            };
            let handle = self.registry.adopt(fork, &location);
            self.protocol_open.insert(handle.path.clone());
            if handle.store.is_none() {
                self.follow_agent(handle).await;
            }
        }
        Ok(result)
    }

    pub(crate) async fn set_label(
        &self,
        p: proto::SetLabelParams,
    ) -> ApiResult<proto::MutationResult> {
        check_size("label", p.label.as_deref(), MAX_LABEL_CHARS)?;
        if let Some(result) = self.label_through_agent(&p).await? {
            return Ok(result);
        }
        self.before_write(&p.uri, p.force).await?;
        let handle = self.registry.get(&p.uri)?;
        handle
            .run(move |a| {
                if !a.session.contains(&p.target_id) {
                    a.check_base(p.base_revision)?;
                    return Err(ApiError::new(
                        ErrorKind::EntryNotFound,
                        format!("entry {} not found in {}", p.target_id, a.uri),
                    )
                    .at(a.revision()));
                }
                let id = a.mutate(p.base_revision, ChangeReason::Label, |s| {
                    s.append_label_change(&p.target_id, p.label.as_deref())
                })?;
                Ok(mutation(a, Some(id)))
            })
            .await
    }

    pub(crate) async fn append(&self, p: proto::AppendParams) -> ApiResult<proto::MutationResult> {
        if p.kind == proto::AppendKind::User && p.text.trim().is_empty() {
            return Err(ApiError::invalid_params("a user message needs some text"));
        }
        check_size("text", Some(&p.text), MAX_TEXT_CHARS)?;
        check_size("custom type", p.custom_type.as_deref(), MAX_LABEL_CHARS)?;
        self.before_write(&p.uri, p.force).await?;
        let handle = self.registry.get(&p.uri)?;
        handle
            .run(move |a| {
                let id = a.mutate(p.base_revision, ChangeReason::Append, |s| match p.kind {
                    proto::AppendKind::User => s.append_message(
                        json!({"role": "user", "content": p.text, "timestamp": now_ms()}),
                    ),
                    proto::AppendKind::Custom => s.append_custom_message(CustomMessageArgs {
                        custom_type: Some(Value::from(
                            p.custom_type
                                .clone()
                                .unwrap_or_else(|| "sessiontree".to_owned()),
                        )),
                        content: Some(Value::from(p.text.clone())),
                        display: Some(Value::from(p.display)),
                        ..Default::default()
                    }),
                })?;
                Ok(mutation(a, Some(id)))
            })
            .await
    }

    pub(crate) async fn set_name(&self, p: proto::SetNameParams) -> ApiResult<proto::NameResult> {
        check_size("name", Some(&p.name), MAX_LABEL_CHARS)?;
        if let Some(result) = self.name_through_agent(&p).await? {
            return Ok(result);
        }
        self.before_write(&p.uri, p.force).await?;
        let handle = self.registry.get(&p.uri)?;
        handle
            .run(move |a| {
                let id = a.mutate(p.base_revision, ChangeReason::Name, |s| s.set_name(&p.name))?;
                Ok(name_result(a, id))
            })
            .await
    }

    pub(crate) async fn name_from_plan_title(
        &self,
        p: proto::NameFromPlanTitleParams,
    ) -> ApiResult<proto::NameResult> {
        check_size("plan title", Some(&p.plan_title), MAX_LABEL_CHARS)?;
        self.before_write(&p.uri, p.force).await?;
        let handle = self.registry.get(&p.uri)?;
        handle
            .run(move |a| {
                let id = a.mutate(p.base_revision, ChangeReason::Name, |s| {
                    s.name_from_plan_title(&p.plan_title)
                })?;
                Ok(name_result(a, id))
            })
            .await
    }
}
