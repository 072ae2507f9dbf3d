//! `sessiontree lsp`: the language server. The custom `sessionTree/*` protocol (defined in
//! `sessiontree-protocol`) for rich clients, and standard LSP (outline, hover, lenses, actions,
//! diagnostics, go-to-parent, workspace symbols) for any editor that opens a session `.jsonl`.
//!
//! Layout: `backend` (the `LanguageServer` impl), `custom` (the `sessionTree/*` requests),
//! `actor` (one task per open session, its only writer), `registry` (open sessions), `stores`
//! (sessions kept in omp's Redis storage), `watcher` (file events), `discovery` (the agents'
//! session folders), `rows` and `plain` (views: every entry named by the engine's one
//! description of it, its `/tree` row text), `to_proto` (engine → wire), `errors` (→ JSON-RPC
//! errors),
//! `context_reply` and `raw_reply` (results written as JSON text and spliced into the output),
//! `output_thread` (standard output written by a thread of its own), `checked_input` (the
//! client's messages checked before the LSP library reads them, bad ones answered),
//! `answer_every_request` (`$/` requests answered MethodNotFound).
//! Nothing here writes to stdout except the protocol itself.

mod actor;
pub mod agent;
mod agent_requests;
mod answer_every_request;
mod backend;
mod checked_input;
mod context_reply;
mod custom;
mod discovery;
mod errors;
#[cfg(test)]
mod one_description;
mod output_thread;
mod plain;
mod raw_reply;
mod registry;
mod rewind;
mod rows;
mod shared;
mod store_summaries;
mod stores;
mod summary;
mod symbols;
#[cfg(test)]
mod test_sessions;
mod to_proto;
mod watcher;

pub use backend::Backend;
pub use discovery::{omp_dir_name, pi_dir_name};
pub(crate) use shared::Shared;
pub use to_proto::drawable;

use tower_lsp_server::{ClientSocket, LspService, Server};

/// The service with every custom method registered (for stdio, tests, or any transport).
pub fn service() -> (LspService<Backend>, ClientSocket) {
    custom::register(LspService::build(Backend::new)).finish()
}

/// Serves LSP on any byte streams until the client sends `exit` (or closes the input). Returns
/// whether `shutdown` came first, as LSP asks of a clean stop.
pub async fn serve<I, O>(input: I, output: O) -> bool
where
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite,
{
    serve_to(input, raw_reply::Writes::new(output)).await
}

/// [`serve`] to an output that may take whole buffers.
async fn serve_to<I, O>(input: I, output: O) -> bool
where
    I: tokio::io::AsyncRead + Unpin,
    O: raw_reply::Output + Unpin,
{
    let replies = raw_reply::RawReplies::new();
    let spliced = std::sync::Arc::clone(&replies);
    let (service, socket) = custom::register(LspService::build(move |client| {
        Backend::with_raw_replies(client, spliced)
    }))
    .finish();
    // Messages the library cannot decode are answered here instead of ending the server; the
    // answers go out through the same output, between whole messages.
    let answers = checked_input::Answers::new();
    let input = checked_input::CheckedInput::new(input, std::sync::Arc::clone(&answers));
    let output = raw_reply::Splice::new(output, replies, answers);
    let shut_down = std::sync::Arc::clone(&service.inner().shut_down);
    let service = answer_every_request::AnswerEveryRequest(service);
    // Requests for a session wait in its actor's queue (behind a pending hook, for instance);
    // a wider window keeps requests for other sessions and reads flowing meanwhile. Requests
    // still reach the actors in arrival order: new handlers are first polled in order.
    Server::new(input, output, socket)
        .concurrency_level(32)
        .serve(service)
        .await;
    shut_down.load(std::sync::atomic::Ordering::SeqCst)
}

/// Logs to stderr (never stdout, which carries the protocol); `SESSIONTREE_LOG` or `RUST_LOG`
/// set the filter (default `info`).
pub fn init_logging() {
    let filter = std::env::var("SESSIONTREE_LOG")
        .ok()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| "info".to_owned());
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .try_init();
}

/// Runs the server over stdin/stdout on a fresh tokio runtime. Returns when the client exits,
/// with whether it asked for `shutdown` first (the exit code is 0 then, 1 otherwise).
pub fn run_stdio() -> std::io::Result<bool> {
    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let output = output_thread::OutputThread::stdout()?;
    let clean = runtime.block_on(serve_to(tokio::io::stdin(), output));
    // Actors and blocking reads may still be parked; do not wait for them after `exit`.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(clean)
}
