//! One actor per open session: a tokio task that owns the [`Session`] and is its only writer.
//! Client requests, watcher wake-ups and the periodic poll arrive through one queue and run in
//! arrival order; every answer and notification carries the revision the session reached.
//! The actor never talks to the editor except through the notifications it queues.

use crate::errors::{ApiError, ApiResult};
use crate::stores::Located;
use crate::to_proto;
use crate::Shared;
use sessiontree_core::view;
use sessiontree_core::{Error as CoreError, OpenOptions, Session};
use sessiontree_protocol::{self as proto, ChangeReason, ErrorKind};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

mod agent_sync;
mod flows;

pub use agent_sync::NavigationMark;

/// A job that runs on the actor with exclusive access to the session. It returns the delivery of
/// its answer, which the actor runs after sending the notifications the job caused.
type Job = Box<dyn FnOnce(&mut Actor) -> Deliver + Send>;

/// Sends an answer to the waiting request.
type Deliver = Box<dyn FnOnce() + Send>;

/// A job that only reads the session (it may run while a hook is pending).
type ReadJob = Box<dyn FnOnce(&Actor) -> Deliver + Send>;

/// What the queue carries.
pub enum Command {
    /// A synchronous job that may change the session.
    Run(Job),
    /// A synchronous job that only reads.
    Read(ReadJob),
    /// The `/tree` flow (may wait for a client hook).
    Navigate(
        proto::NavigateParams,
        oneshot::Sender<ApiResult<proto::NavigateResult>>,
    ),
    /// The `/branch` flow (may wait for a client hook); also hands back the new session.
    Branch(
        proto::BranchParams,
        oneshot::Sender<ApiResult<(proto::BranchResult, Option<Session>)>>,
    ),
    /// The file changed on disk (watcher).
    Follow,
    /// Stop.
    Close,
}

/// The sending side of an actor's queue.
#[derive(Clone)]
pub struct SessionHandle {
    /// The session's URI.
    pub uri: String,
    /// The session's file (a store's session: its URI, the key it is registered under).
    pub path: PathBuf,
    /// The store the session is kept in, when it is not a file.
    pub store: Option<Located>,
    tx: mpsc::UnboundedSender<Command>,
    /// Why the session could not be loaded (then every queued request gets this error).
    failed: Arc<OnceLock<ApiError>>,
}

impl std::fmt::Debug for SessionHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionHandle")
            .field("uri", &self.uri)
            .finish_non_exhaustive()
    }
}

impl SessionHandle {
    /// The error for a request that found the actor gone: the load error, or "closed".
    fn gone(&self) -> ApiError {
        self.failed
            .get()
            .cloned()
            .unwrap_or_else(|| ApiError::closed(&self.uri))
    }

    /// Runs `f` on the actor, after everything queued before it.
    pub async fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Actor) -> ApiResult<R> + Send + 'static,
    ) -> ApiResult<R> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |actor| {
            let result = f(actor);
            Box::new(move || {
                let _ = tx.send(result);
            })
        });
        self.tx.send(Command::Run(job)).map_err(|_| self.gone())?;
        rx.await.map_err(|_| self.gone())?
    }

    /// Runs a read-only `f` on the actor. Reads keep arrival order with everything else, except
    /// that they are also answered while the session waits for a client's hook answer (a client
    /// may look at the session before it answers).
    pub async fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Actor) -> ApiResult<R> + Send + 'static,
    ) -> ApiResult<R> {
        let (tx, rx) = oneshot::channel();
        let job: ReadJob = Box::new(move |actor| {
            let result = f(actor);
            Box::new(move || {
                let _ = tx.send(result);
            })
        });
        self.tx.send(Command::Read(job)).map_err(|_| self.gone())?;
        rx.await.map_err(|_| self.gone())?
    }

    /// The `/tree` flow.
    pub async fn navigate(
        &self,
        params: proto::NavigateParams,
    ) -> ApiResult<proto::NavigateResult> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Command::Navigate(params, tx))
            .map_err(|_| self.gone())?;
        rx.await.map_err(|_| self.gone())?
    }

    /// The `/branch` flow.
    pub async fn branch(
        &self,
        params: proto::BranchParams,
    ) -> ApiResult<(proto::BranchResult, Option<Session>)> {
        let (tx, rx) = oneshot::channel();
        self.tx
            .send(Command::Branch(params, tx))
            .map_err(|_| self.gone())?;
        rx.await.map_err(|_| self.gone())?
    }

    /// This session as `workspace/symbol` searches it: named on the actor, from the session
    /// and `/tree` model it holds. The visit blocks on `runtime` (call it off the runtime).
    pub fn searched(&self, runtime: &tokio::runtime::Handle) -> crate::symbols::OpenSession {
        let (handle, runtime) = (self.clone(), runtime.clone());
        crate::symbols::OpenSession {
            key: self.path.clone(),
            uri: self.uri.clone(),
            visit: Box::new(move |visit| {
                let read = handle.read(move |actor| {
                    let model = |home: Option<&Path>| actor.tree_model(home);
                    Ok(visit(&actor.session, actor.symbol_stamp(), &model))
                });
                runtime.block_on(read).ok()
            }),
        }
    }

    /// Asks the actor to read what another process appended.
    pub fn follow(&self) {
        let _ = self.tx.send(Command::Follow);
    }

    /// Stops the actor (queued work runs first).
    pub fn close(&self) {
        let _ = self.tx.send(Command::Close);
    }
}

/// The actor's queue, with the commands set aside while a hook was pending.
struct Inbox {
    rx: mpsc::UnboundedReceiver<Command>,
    deferred: VecDeque<Command>,
    closed: bool,
}

impl Inbox {
    async fn next(&mut self) -> Option<Command> {
        match self.deferred.pop_front() {
            Some(command) => Some(command),
            None => self.rx.recv().await,
        }
    }
}

/// A notification waiting to be sent.
enum Outgoing {
    Change(proto::DidChangeParams),
    Navigate(proto::DidNavigateParams),
    Branch(proto::DidBranchParams),
}

/// The owner of one session.
pub struct Actor {
    /// The session.
    pub session: Session,
    /// Its URI.
    pub uri: String,
    /// Its file (a store's session: its URI, the key it is registered under).
    pub path: PathBuf,
    /// The store it is kept in, when it is not a file.
    pub store: Option<Located>,
    /// Added to the engine's revision so revisions keep growing across reloads.
    rev_base: u64,
    /// Which opening of a session this actor is (unique in the process): a revision is only
    /// meaningful with it, since a session opened again counts from its start.
    opening: u64,
    outbox: Vec<Outgoing>,
    diagnostics_dirty: bool,
    shared: Arc<Shared>,
    /// The `/tree` model of the current revision (built on the first rows request after a change).
    view: std::sync::Mutex<Option<CachedView>>,
    /// Started after the first window of a loaded session (see [`view::SearchWarmUp`]).
    search_warm_up: std::sync::Once,
    /// The `/tree` choice that produced the leaf (see [`NavigationMark`]).
    last_navigation: Option<NavigationMark>,
}

/// A tree model and what it was built for.
struct CachedView {
    revision: u64,
    home: Option<PathBuf>,
    model: Arc<view::TreeModel>,
}

/// How often the actor looks at its file even without a watcher event (network file systems,
/// missed events).
const POLL: Duration = Duration::from_secs(2);

/// Files from this size on report `$/progress` while they load.
const PROGRESS_BYTES: u64 = 16 << 20;

/// How often a mutation refused as `writerBusy` is tried again.
const WRITER_RETRIES: u64 = 4;

/// Runs `f`, which may wait on a store's network round trips, letting the runtime move its other
/// tasks off this thread meanwhile (on a multi-threaded runtime; a file session's work is run
/// as it is).
fn off_async<R>(store: bool, f: impl FnOnce() -> R) -> R {
    let multi = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if store && multi {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// Starts the actor of a session: `load` runs off the async threads, and requests queue up
/// meanwhile, so a request sent right behind `open` is answered in order. When loading fails,
/// queued and later requests get the load error and `on_fail` runs (it forgets the session).
pub fn spawn(
    load: impl FnOnce() -> Result<Session, CoreError> + Send + 'static,
    uri: String,
    path: PathBuf,
    store: Option<Located>,
    shared: Arc<Shared>,
    on_fail: impl FnOnce() + Send + 'static,
) -> SessionHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let failed: Arc<OnceLock<ApiError>> = Arc::default();
    let handle = SessionHandle {
        uri: uri.clone(),
        path: path.clone(),
        store: store.clone(),
        tx,
        failed: Arc::clone(&failed),
    };
    tokio::spawn(async move {
        // A big file takes a moment: say so in clients that show progress.
        let size = match &store {
            Some(_) => 0,
            None => std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
        };
        let progress = if size >= PROGRESS_BYTES {
            let message = format!("{} ({} MB)", path.display(), size >> 20);
            shared.begin_progress("Opening session", message).await
        } else {
            None
        };
        let loaded = tokio::task::spawn_blocking(load).await;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        let error = match loaded {
            Ok(Ok(session)) => {
                let actor = Actor {
                    session,
                    uri,
                    path,
                    store,
                    rev_base: 0,
                    opening: NEXT_OPENING.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                    outbox: Vec::new(),
                    diagnostics_dirty: false,
                    shared,
                    view: Default::default(),
                    search_warm_up: std::sync::Once::new(),
                    last_navigation: None,
                };
                return actor.run_loop(rx).await;
            }
            Ok(Err(err)) => ApiError::from(err),
            Err(err) => ApiError::new(ErrorKind::Internal, format!("loading {uri} failed: {err}")),
        };
        let _ = failed.set(error);
        on_fail();
        // Dropping the queue answers every queued request with the load error.
        drop(rx);
    });
    handle
}

/// The next actor's [`Actor::opening`].
static NEXT_OPENING: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How long after the first window's answer the search warm-up starts: that answer is on its
/// way out meanwhile, and both cores are the editor's for what it asks next.
const WARM_UP_AFTER: Duration = Duration::from_millis(50);

impl Actor {
    /// The revision clients see.
    pub fn revision(&self) -> u64 {
        self.rev_base + self.session.revision()
    }

    /// What `workspace/symbol` indexes this session's current state under.
    pub fn symbol_stamp(&self) -> crate::symbols::Stamp {
        crate::symbols::Stamp::Open {
            opening: self.opening,
            revision: self.revision(),
        }
    }

    /// The `/tree` window for `state`: from this revision's tree model when one is built; else,
    /// as the selector opens (on the leaf, no search), found without building it (see
    /// [`view::first_window`]); else from a model built now.
    /// `folded`: pi's folded entries (none: the selector as it opens).
    pub fn window(
        &self,
        home: Option<&Path>,
        state: &view::ViewState,
        folded: &[String],
    ) -> view::RowsView {
        self.search_warm_up.call_once(|| {
            // What a first search does before it matches, done ahead on a blocking thread,
            // once this answer is out: the first search then only matches.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let warm = view::SearchWarmUp::new(&self.session);
                runtime.spawn_blocking(move || {
                    std::thread::sleep(WARM_UP_AFTER);
                    warm.run();
                });
            }
        });
        if let Some(model) = self.built_tree_model(home) {
            return model.window_folded(state, folded);
        }
        if !folded.is_empty() {
            return self.tree_model(home).window_folded(state, folded);
        }
        match view::first_window(&self.session, home, state) {
            Some(quick) => quick,
            None => self.tree_model(home).window(state),
        }
    }

    /// Where pi's fold keys move the selection from `state` when they do not fold (see
    /// [`view::Segment`]), in this revision's tree model.
    pub fn segment_start(
        &self,
        home: Option<&Path>,
        state: &view::ViewState,
        folded: &[String],
        way: view::Segment,
    ) -> Option<String> {
        self.tree_model(home).segment_start(state, folded, way)
    }

    /// This revision's tree model, when it is built.
    fn built_tree_model(&self, home: Option<&Path>) -> Option<Arc<view::TreeModel>> {
        let revision = self.revision();
        let cached = self
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cached
            .as_ref()
            .filter(|c| c.revision == revision && c.home.as_deref() == home)
            .map(|c| Arc::clone(&c.model))
    }

    /// The `/tree` model of this revision: kept until the session changes, so windows, filters
    /// and searches over an unchanged session do not flatten it again.
    pub fn tree_model(&self, home: Option<&Path>) -> Arc<view::TreeModel> {
        let revision = self.revision();
        let mut cached = self
            .view
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = cached.as_ref() {
            if c.revision == revision && c.home.as_deref() == home {
                return Arc::clone(&c.model);
            }
        }
        let model = Arc::new(view::TreeModel::new(&self.session, home));
        *cached = Some(CachedView {
            revision,
            home: home.map(Path::to_path_buf),
            model: Arc::clone(&model),
        });
        model
    }

    /// Refuses when the client's view is stale.
    pub fn check_base(&self, base: Option<u64>) -> ApiResult<()> {
        match base {
            Some(base) if base != self.revision() => Err(ApiError::new(
                ErrorKind::StaleRevision,
                format!(
                    "session {} is at revision {}, not {base}; refresh and try again (nothing was written)",
                    self.uri,
                    self.revision()
                ),
            )
            .at(self.revision())),
            _ => Ok(()),
        }
    }

    /// Runs an engine mutation: checks `base`, announces what changed (lines other writers
    /// appended that the engine indexed first included), reloads a replaced file.
    pub fn mutate<T>(
        &mut self,
        base: Option<u64>,
        reason: ChangeReason,
        mut f: impl FnMut(&mut Session) -> Result<T, CoreError>,
    ) -> ApiResult<T> {
        self.check_base(base)?;
        let before_len = self.session.entries().len();
        let before_rev = self.revision();
        let mut result = f(&mut self.session);
        // Another writer may append a whole line between the engine's catch-up and our write;
        // the engine then refuses (it never writes after bytes it has not read). Those lines are
        // complete, so read them and try again; a line still being written stays `writerBusy`.
        // A store refuses a write when another writer grew the value first (nothing written);
        // the next try reads those lines first, as for a file.
        for attempt in 1..=WRITER_RETRIES {
            if !matches!(
                result,
                Err(CoreError::WriterBusy { .. } | CoreError::StoreConflict { .. })
            ) {
                break;
            }
            std::thread::sleep(Duration::from_millis(2 * attempt));
            result = f(&mut self.session);
        }
        if let Err(CoreError::FileReplaced { .. }) = &result {
            self.reload();
        } else if self.revision() != before_rev {
            let reason = if result.is_ok() {
                reason
            } else {
                ChangeReason::Follow
            };
            self.announce(reason, before_len);
        }
        result.map_err(|e| ApiError::from(e).at(self.revision()))
    }

    /// Queues a `didChange` for the entries from `from` on.
    fn announce(&mut self, reason: ChangeReason, from: usize) {
        let len = self.session.entries().len();
        let new_entry_ids = to_proto::ids_of(&self.session, from.min(len)..len);
        self.outbox.push(Outgoing::Change(proto::DidChangeParams {
            uri: self.uri.clone(),
            revision: self.revision(),
            leaf: self.session.leaf_id().map(str::to_owned),
            reason,
            new_entry_ids,
        }));
        self.diagnostics_dirty = true;
    }

    /// Reads what other processes appended.
    fn follow(&mut self) {
        let before = self.session.entries().len();
        match self.session.follow() {
            Ok(outcome) if !outcome.new_entries.is_empty() => {
                self.announce(ChangeReason::Follow, before);
                // A store's session may be written on another machine, whose work tree this
                // machine's folder of the same name is not: no snapshot of it is taken here.
                if self.store.is_none() && !self.shared.rewind_by_bridge(&self.path) {
                    crate::rewind::record_followed(&self.session, before, &self.uri, &self.shared);
                }
            }
            Ok(_) => {}
            Err(CoreError::FileReplaced { .. }) => self.reload(),
            Err(err) => tracing::debug!(uri = %self.uri, "follow: {err}"),
        }
    }

    /// Reopens a file that was rewritten, truncated or replaced (a store's value: read again).
    fn reload(&mut self) {
        let reopened = match self.session.store() {
            Some(store) => Session::open_store(Arc::clone(store), OpenOptions::default()),
            None => Session::open(&self.path, OpenOptions::default()),
        };
        match reopened {
            Ok(session) => {
                self.rev_base = self.revision() + 1;
                self.session = session;
                self.search_warm_up = std::sync::Once::new();
                tracing::info!(uri = %self.uri, "reloaded a replaced file");
                let ids = to_proto::ids_of(&self.session, 0..self.session.entries().len());
                self.outbox.push(Outgoing::Change(proto::DidChangeParams {
                    uri: self.uri.clone(),
                    revision: self.revision(),
                    leaf: self.session.leaf_id().map(str::to_owned),
                    reason: ChangeReason::Reload,
                    new_entry_ids: ids,
                }));
                self.diagnostics_dirty = true;
            }
            Err(err) => tracing::warn!(uri = %self.uri, "cannot reload: {err}"),
        }
    }

    async fn run_loop(mut self, rx: mpsc::UnboundedReceiver<Command>) {
        let mut inbox = Inbox {
            rx,
            deferred: VecDeque::new(),
            closed: false,
        };
        let mut poll = tokio::time::interval(POLL);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                command = inbox.next() => {
                    let Some(command) = command else { break };
                    // Notifications go out before the answer that caused them: a client then
                    // sees `didChange` first, and Emacs 28's jsonrpc, which can drop a message
                    // arriving right behind a reply it is waiting for, keeps them.
                    let store = self.store.is_some();
                    let deliver: Option<Deliver> = match command {
                        Command::Run(job) => Some(off_async(store, || job(&mut self))),
                        Command::Read(job) => Some(off_async(store, || job(&self))),
                        Command::Navigate(params, mut reply) => {
                            let result = self.navigate(params, &mut inbox, &mut reply).await;
                            Some(Box::new(move || {
                                let _ = reply.send(result);
                            }))
                        }
                        Command::Branch(params, mut reply) => {
                            let result = self.branch(params, &mut inbox, &mut reply).await;
                            Some(Box::new(move || {
                                let _ = reply.send(result);
                            }))
                        }
                        Command::Follow => {
                            off_async(store, || self.follow());
                            None
                        }
                        Command::Close => break,
                    };
                    self.flush().await;
                    if let Some(deliver) = deliver {
                        deliver();
                    }
                }
                _ = poll.tick() => {
                    off_async(self.store.is_some(), || self.follow());
                    self.flush().await;
                }
            }
        }
        tracing::debug!(uri = %self.uri, "actor stopped");
    }

    /// Sends the queued notifications in order, and fresh diagnostics when the file is open as a
    /// text document.
    async fn flush(&mut self) {
        for out in std::mem::take(&mut self.outbox) {
            match out {
                Outgoing::Change(p) => self.shared.notify::<proto::DidChange>(p).await,
                Outgoing::Navigate(p) => self.shared.notify::<proto::DidNavigate>(p).await,
                Outgoing::Branch(p) => self.shared.notify::<proto::DidBranch>(p).await,
            }
        }
        if std::mem::take(&mut self.diagnostics_dirty) && self.shared.is_document_open(&self.path) {
            let diagnostics = crate::plain::diagnostics(&self.session);
            self.shared
                .publish_diagnostics(&self.uri, diagnostics, self.revision())
                .await;
        }
    }
}
