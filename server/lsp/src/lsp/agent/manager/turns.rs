//! A prompt and the agent's own leaf moves: the agent's leaf synced to the session's before a
//! prompt, `/tree` navigation through the agent, and waiting until the file shows what it wrote.

use super::{Manager, Slot, SETTLE, WRITE_VISIBLE};
use crate::actor::SessionHandle;
use crate::agent::driver::{Driver, Navigated, Snapshot};
use crate::errors::{ApiError, ApiResult};
use sessiontree_protocol::{self as proto, ErrorKind};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

impl Manager {
    /// Sends the chat text to the session's agent (starting it, moving its leaf to ours first).
    pub async fn prompt(
        self: &Arc<Self>,
        p: proto::PromptParams,
    ) -> ApiResult<proto::PromptResult> {
        let path = crate::to_proto::path_of(&p.uri)?;
        let path = crate::registry::key_of(&path);
        let slot = self.slot(&path)?;
        let base = p.base_revision;
        slot.handle.read(move |a| a.check_base(base)).await?;
        let driver = self.ensure(&slot).await?;
        let snapshot = settled(&driver).await?;
        if snapshot.busy && p.deliver_as.is_none() {
            return Err(ApiError::new(
                ErrorKind::AgentBusy,
                "the agent is answering; wait for it to finish, abort it, or queue the prompt (deliverAs)",
            ));
        }
        if !snapshot.busy {
            self.sync_leaf(&slot, &driver, snapshot.leaf.as_deref())
                .await?;
        }
        let turn = slot.turns.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(mut t) = slot.translator.lock() {
            t.expect_turn(turn);
        }
        slot.touch();
        driver.prompt(&p.text, p.deliver_as).await?;
        let revision = slot.handle.read(|a| Ok(a.revision())).await?;
        Ok(proto::PromptResult {
            revision,
            turn,
            agent: self.status_of(&slot),
        })
    }

    /// Moves the agent's leaf to the session's leaf, by the agent's own `/tree` rule.
    pub(super) async fn sync_leaf(
        &self,
        slot: &Slot,
        driver: &Driver,
        agent_leaf: Option<&str>,
    ) -> ApiResult<()> {
        let (leaf, target) = slot
            .handle
            .read(|a| {
                // What the agent has not read yet cannot be its leaf: read it first.
                Ok(a.agent_target())
            })
            .await?;
        if leaf.as_deref() == agent_leaf {
            return Ok(());
        }
        // pi's own startup entries after a handed-over session's leaf: nothing to move.
        let continued = slot.continued.lock().ok().and_then(|mut c| c.take());
        if continued.is_some_and(|(ours, theirs)| ours == leaf && theirs.as_deref() == agent_leaf) {
            return Ok(());
        }
        let Some(target) = target else {
            return Ok(());
        };
        let navigated = driver.navigate(&target, false, None, None).await?;
        let now = navigated.leaf.clone();
        slot.handle
            .run(move |a| {
                a.adopt_agent_leaf(now.as_deref());
                Ok(())
            })
            .await
    }

    /// The agent's own `/tree` move for `sessionTree/navigate` (with its summarizer).
    pub async fn navigate(
        self: &Arc<Self>,
        path: &Path,
        target: &str,
        summarize: bool,
        custom_instructions: Option<&str>,
        label: Option<&str>,
    ) -> ApiResult<(Navigated, Arc<Driver>)> {
        let slot = self.slot(path)?;
        let driver = self.ensure(&slot).await?;
        settled(&driver).await?;
        let navigated = driver
            .navigate(target, summarize, custom_instructions, label)
            .await?;
        slot.touch();
        let leaf = navigated.leaf.clone();
        let summary = navigated.summary_entry_id.clone();
        // The summary entry is written by the agent: wait until the file shows it.
        if let Some(id) = summary {
            self.await_entry(&slot.handle, &id).await;
        }
        slot.handle
            .run(move |a| {
                a.adopt_agent_leaf(leaf.as_deref());
                Ok(())
            })
            .await?;
        Ok((navigated, driver))
    }

    /// Waits (a little) until the session's file shows an entry the agent wrote.
    pub async fn await_entry(&self, handle: &SessionHandle, id: &str) {
        let deadline = Instant::now() + WRITE_VISIBLE;
        loop {
            let wanted = id.to_owned();
            let seen = handle
                .run(move |a| {
                    a.follow_now();
                    Ok(a.session.contains(&wanted))
                })
                .await
                .unwrap_or(true);
            if seen || Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Stops the current answer, and answers once the agent has wound the turn down: the agent
    /// only starts its abort when asked, and both agents finish the aborted turn (its message
    /// written, its hooks run) after that, so a move or a prompt sent right after the abort's
    /// answer would otherwise be refused as busy, or meet the turn's last steps.
    pub async fn abort(&self, path: &Path) -> ApiResult<proto::AbortResult> {
        let slot = self.slot(path)?;
        let Some(driver) = slot.driver() else {
            return Ok(proto::AbortResult { aborted: false });
        };
        let aborted = driver.abort().await?;
        if aborted {
            wound_down(&driver).await?;
        }
        Ok(proto::AbortResult { aborted })
    }
}

/// Waits (at most `SETTLE`) until the agent says it is idle after an abort.
async fn wound_down(driver: &Driver) -> ApiResult<()> {
    let deadline = Instant::now() + SETTLE;
    while driver.refresh().await?.busy && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok(())
}

/// The agent's state once it has settled: when its turn has ended but it still finishes up after
/// it (omp completes its prompt's work after `agent_end`), a request sent right after waits a
/// moment rather than being refused as busy. A turn under way is not waited for.
async fn settled(driver: &Driver) -> ApiResult<Snapshot> {
    let mut snapshot = driver.refresh().await?;
    let deadline = Instant::now() + SETTLE;
    while snapshot.busy && !driver.answering() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(25)).await;
        snapshot = driver.refresh().await?;
    }
    Ok(snapshot)
}
