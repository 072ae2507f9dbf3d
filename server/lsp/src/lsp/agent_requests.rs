//! The live agent's requests (`transcript`, `prompt`, `abort`, `agent`, `stopAgent`,
//! `installBridge`) and the routing of the other writes through an attached agent: while an
//! agent drives a session it is the session's only writer, so `navigate`, `setLabel` and
//! `setName` go through it, and a write behind an agent without the bridge is refused.

use crate::backend::Backend;
use crate::errors::{ApiError, ApiResult};
use crate::registry;
use crate::to_proto;
use sessiontree_core::transcript;
use sessiontree_protocol::{self as proto, ErrorKind};
use std::path::PathBuf;

/// The default number of messages `transcript` gives.
const TRANSCRIPT_LIMIT: u32 = 500;

/// Why no agent runs on a session kept in a store.
fn no_agent_on_stores(uri: &str) -> String {
    format!(
        "{uri} is kept in a session store: the live agent (omp in RPC mode) keeps its sessions in files, \
         so it cannot drive this session; a program built on omp's SDK with RedisSessionStorage can"
    )
}

/// The agent status of a session kept in a store: none can run.
fn store_agent_status(uri: &str) -> proto::AgentStatus {
    proto::AgentStatus {
        uri: uri.to_owned(),
        agent: proto::AgentKind::Omp,
        state: proto::AgentState::Unavailable,
        source: None,
        pid: None,
        model: None,
        armed: false,
        executable: None,
        message: Some(no_agent_on_stores(uri)),
        stderr_tail: Vec::new(),
    }
}

impl Backend {
    /// The session's key path and its actor.
    fn session_of(&self, uri: &str) -> ApiResult<(PathBuf, crate::actor::SessionHandle)> {
        let handle = self.registry.get(uri)?;
        Ok((registry::key_of(&handle.path), handle))
    }

    pub(crate) async fn transcript(
        &self,
        p: proto::TranscriptParams,
    ) -> ApiResult<proto::TranscriptResult> {
        let handle = self.registry.get(&p.uri)?;
        let home = self.locations().home;
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
                let limit = p.limit.unwrap_or(TRANSCRIPT_LIMIT) as usize;
                let home = home.as_ref().map(|h| h.to_string_lossy().into_owned());
                let found = transcript::along_path(s, leaf.as_deref(), limit, home.as_deref())
                    .map_err(|e| ApiError::from(e).at(a.revision()))?;
                Ok(proto::TranscriptResult {
                    revision: a.revision(),
                    leaf,
                    items: found
                        .items
                        .into_iter()
                        .map(to_proto::transcript_item)
                        .collect(),
                    omitted: u32::try_from(found.omitted).unwrap_or(u32::MAX),
                })
            })
            .await
    }

    pub(crate) async fn prompt(&self, p: proto::PromptParams) -> ApiResult<proto::PromptResult> {
        if p.text.trim().is_empty() {
            return Err(ApiError::invalid_params("a prompt needs some text"));
        }
        crate::custom::check_size("text", Some(&p.text), crate::custom::MAX_TEXT_CHARS)?;
        let (_, handle) = self.session_of(&p.uri)?;
        if handle.store.is_some() {
            return Err(ApiError::new(
                ErrorKind::Unsupported,
                no_agent_on_stores(&handle.uri),
            ));
        }
        self.agents.prompt(p).await
    }

    pub(crate) async fn abort(&self, p: proto::AbortParams) -> ApiResult<proto::AbortResult> {
        let (path, handle) = self.session_of(&p.uri)?;
        if handle.store.is_some() {
            return Ok(proto::AbortResult { aborted: false });
        }
        self.agents.abort(&path).await
    }

    pub(crate) async fn agent(&self, p: proto::AgentParams) -> ApiResult<proto::AgentStatus> {
        let (path, handle) = self.session_of(&p.uri)?;
        if handle.store.is_some() {
            if p.start {
                return Err(ApiError::new(
                    ErrorKind::Unsupported,
                    no_agent_on_stores(&handle.uri),
                ));
            }
            return Ok(store_agent_status(&handle.uri));
        }
        self.agents.status(&path, p.start).await
    }

    pub(crate) async fn stop_agent(&self, p: proto::AgentParams) -> ApiResult<proto::AgentStatus> {
        let (path, handle) = self.session_of(&p.uri)?;
        if handle.store.is_some() {
            return Ok(store_agent_status(&handle.uri));
        }
        self.agents.stop(&path).await
    }

    pub(crate) async fn install_bridge(
        &self,
        p: proto::InstallBridgeParams,
    ) -> ApiResult<proto::InstallBridgeResult> {
        let locations = self.locations();
        let agent_dir = match p.agent {
            proto::AgentKind::Omp => locations.omp_sessions.as_deref(),
            proto::AgentKind::Pi => locations.pi_sessions.as_deref(),
        }
        .and_then(std::path::Path::parent)
        .map(std::path::Path::to_path_buf)
        .ok_or_else(|| {
            ApiError::new(
                ErrorKind::Io,
                "the agent's folder is not known (no home folder; set ompAgentDir / piAgentDir)",
            )
        })?;
        let (path, written) = crate::agent::install::into(&agent_dir.join("extensions"))
            .map_err(|e| ApiError::new(ErrorKind::Io, e))?;
        Ok(proto::InstallBridgeResult {
            path: path.to_string_lossy().into_owned(),
            written,
        })
    }

    /// `navigate` through the session's agent, when one drives it or should write the summary;
    /// `None` when the engine navigates as before.
    pub(crate) async fn navigate_through_agent(
        &self,
        p: &proto::NavigateParams,
    ) -> ApiResult<Option<proto::NavigateResult>> {
        use sessiontree_core::view::navigate::{self as nav, Caller, Decision, NavigateOptions};
        // Nothing here may wait before the decision to go through the agent: otherwise this
        // request could reach the actor after requests sent behind it.
        let (path, handle) = self.session_of(&p.uri)?;
        let wants_summary = p.summarize != proto::SummarizeChoice::None;
        let Some(dialect) = self.agents.dialect_of(&path) else {
            return Ok(None);
        };
        let attached = self.agents.attached(&path).is_some();
        let agent_summarizes = wants_summary && self.agents.agent_summarizes(dialect);
        if !(attached || agent_summarizes) {
            return Ok(None);
        }
        let custom = match p.summarize {
            proto::SummarizeChoice::Custom => p
                .custom_instructions
                .clone()
                .filter(|c| !c.trim().is_empty()),
            _ => None,
        };
        // omp's extension API does not pass custom instructions: its summary then comes from our
        // own providers, unless an agent drives the session (it must stay the only writer).
        if custom.is_some() && dialect == sessiontree_core::Dialect::Omp && !attached {
            return Ok(None);
        }
        // The engine's decision says what the agents' rule does with the target (and gives the
        // editor its text); the agent then makes the move itself.
        let target = p.target_id.clone();
        let base = p.base_revision;
        let label = p.label.clone();
        let (decision, old_leaf) = handle
            .read(move |a| {
                a.check_base(base)?;
                if !a.session.contains(&target) {
                    return Err(ApiError::new(
                        ErrorKind::EntryNotFound,
                        format!("entry {target} not found in {}", a.uri),
                    )
                    .at(a.revision()));
                }
                let options = NavigateOptions {
                    summarize: wants_summary,
                    caller: Caller::Selector,
                    label,
                };
                let decided = nav::decide(&a.session, &target, &options)
                    .map_err(|e| ApiError::from(e).at(a.revision()))?;
                Ok((decided, a.session.leaf_id().map(str::to_owned)))
            })
            .await?;
        let plan = match decision {
            Decision::AlreadyHere => {
                let revision = handle.read(|a| Ok(a.revision())).await?;
                return Ok(Some(proto::NavigateResult {
                    revision,
                    decision: proto::NavigateDecision::Stay,
                    old_leaf: old_leaf.clone(),
                    new_leaf: old_leaf,
                    editor_text: None,
                    already_at_this_point: true,
                    cancelled: false,
                    summary_entry_id: None,
                    summary_skipped: false,
                    tool_call_id: None,
                }));
            }
            Decision::ReopenAsk { tool_call_id } => {
                let revision = handle.read(|a| Ok(a.revision())).await?;
                return Ok(Some(proto::NavigateResult {
                    revision,
                    decision: proto::NavigateDecision::ReopenAsk,
                    old_leaf: old_leaf.clone(),
                    new_leaf: old_leaf,
                    editor_text: None,
                    already_at_this_point: false,
                    cancelled: false,
                    summary_entry_id: None,
                    summary_skipped: false,
                    tool_call_id: Some(tool_call_id),
                }));
            }
            Decision::Move(plan) => plan,
        };
        let (navigated, _) = self
            .agents
            .navigate(
                &path,
                &p.target_id,
                wants_summary && plan.summarize,
                custom.as_deref(),
                p.label.as_deref(),
            )
            .await?;
        let (revision, new_leaf) = handle
            .read(|a| Ok((a.revision(), a.session.leaf_id().map(str::to_owned))))
            .await?;
        let decision = match (&plan.new_leaf, navigated.cancelled) {
            (_, true) => proto::NavigateDecision::Stay,
            (None, _) => proto::NavigateDecision::Root,
            (Some(leaf), _) if *leaf == plan.target_id => proto::NavigateDecision::Target,
            _ => proto::NavigateDecision::Parent,
        };
        Ok(Some(proto::NavigateResult {
            revision,
            decision,
            old_leaf,
            new_leaf,
            editor_text: if navigated.cancelled {
                None
            } else {
                plan.editor_text
            },
            already_at_this_point: false,
            cancelled: navigated.cancelled,
            summary_entry_id: navigated.summary_entry_id,
            summary_skipped: plan.summary_skipped,
            tool_call_id: None,
        }))
    }

    /// `setLabel` through the attached agent; `None` when no agent drives the session.
    pub(crate) async fn label_through_agent(
        &self,
        p: &proto::SetLabelParams,
    ) -> ApiResult<Option<proto::MutationResult>> {
        let (path, handle) = self.session_of(&p.uri)?;
        let Some(driver) = self.agents.attached(&path) else {
            return Ok(None);
        };
        let base = p.base_revision;
        handle.read(move |a| a.check_base(base)).await?;
        let label = p.label.as_deref().filter(|l| !l.trim().is_empty());
        let id = driver.label(&p.target_id, label).await?;
        if let Some(id) = &id {
            self.agents.await_entry(&handle, id).await;
        }
        handle
            .read(move |a| Ok(crate::custom::mutation(a, id)))
            .await
            .map(Some)
    }

    /// `setName` through the attached agent; `None` when no agent drives the session.
    pub(crate) async fn name_through_agent(
        &self,
        p: &proto::SetNameParams,
    ) -> ApiResult<Option<proto::NameResult>> {
        let (path, handle) = self.session_of(&p.uri)?;
        let Some(driver) = self.agents.attached(&path) else {
            return Ok(None);
        };
        let base = p.base_revision;
        handle.read(move |a| a.check_base(base)).await?;
        let before = handle.read(|a| Ok(a.session.entries().len())).await?;
        driver.name(&p.name).await?;
        // The agent writes its name entry (pi) or title slot (omp): wait until the file shows it.
        let wanted = p.name.clone();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        loop {
            let wanted = wanted.clone();
            let (done, result) = handle
                .run(move |a| {
                    a.follow_now();
                    let done = a.session.session_name() == Some(wanted.as_str())
                        || a.session.entries().len() > before;
                    let id = (a.session.entries().len() > before)
                        .then(|| a.session.leaf_id().map(str::to_owned))
                        .flatten();
                    Ok((done, crate::custom::name_result(a, id)))
                })
                .await?;
            if done || std::time::Instant::now() >= deadline {
                return Ok(Some(result));
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }

    /// Refuses a write behind an agent without the bridge (see `agent::live_writer`), and stops
    /// an idle agent we started before a bare write (it reloads on the next prompt).
    /// Waits only when an agent we started must be stopped, so ordinary writes reach the actor
    /// in the order they were sent.
    pub(crate) async fn before_write(&self, uri: &str, force: bool) -> ApiResult<()> {
        let (path, _) = self.session_of(uri)?;
        self.agents.before_bare_write(&path, force).await?;
        self.agents.check_no_live_writer(&path, force)
    }

    /// Starts following a session's agent (on open and for a new `/branch` file).
    pub(crate) async fn follow_agent(&self, handle: crate::actor::SessionHandle) {
        if let Ok((dialect, cwd)) = handle
            .read(|a| Ok((a.session.dialect(), PathBuf::from(a.session.cwd()))))
            .await
        {
            let agents = std::sync::Arc::clone(&self.agents);
            // The first look at the process table runs off the async threads.
            let _ = tokio::task::spawn_blocking(move || agents.watch(handle, dialect, cwd)).await;
        }
    }
}
