//! The live agent: sessiontree as a front end to the real omp or pi. For an open session the
//! server starts the session's agent in its RPC mode with the sessiontree bridge
//! (`server/bridge/sessiontree-bridge.ts`), or attaches to one the user runs in a terminal with
//! the bridge installed; prompts, leaf moves, labels and names then go through the agent, which
//! is its session's only writer, and its answer streams to the editor as `agentEvent`s.
//!
//! Layout: `paths` (the private runtime folder, discovery files, the bridge file), `locate` (the
//! executable), `process` (an agent we start), `bridge` (the bridge socket), `terminal` (agents in
//! a terminal), `install` (the bridge into an agent's extensions folder), `driver` (one live agent, however it runs), `stream` (bridge events → protocol
//! events), `live_writer` (an agent without the bridge writing the session), `rewind_points` (the points
//! a bridge records), `manager` (the agents of the open sessions).

pub mod bridge;
pub mod driver;
pub mod install;
pub mod live_writer;
pub mod locate;
pub mod manager;
pub mod paths;
pub mod process;
pub mod rewind_points;
pub mod stream;
pub mod terminal;

pub use sessiontree_protocol::{AgentKind, AgentSource};
