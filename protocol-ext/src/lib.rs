//! The sessiontree protocol: every custom LSP method, written once.
//!
//! Each method is one marker type implementing [`Request`] or [`Notification`]: its name, its
//! direction, and the Rust types of its params and result. Wire shapes are camelCase, enums travel
//! as strings and booleans default to `false`. This crate holds no LSP library types and no
//! behaviour: the server (`server/lsp`) implements it, clients (VS Code, Neovim) and
//! `docs/protocol.md` are checked against it (see [`catalog`]).

mod capabilities;
mod catalog;
mod errors;
mod methods;
mod types;

pub use capabilities::*;
pub use catalog::{catalog, MethodDoc, MethodKind};
pub use errors::{ErrorData, ErrorKind};
pub use methods::*;
pub use types::*;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Version of the custom protocol; bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 1;

/// Who sends a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The editor asks, the server answers.
    ClientToServer,
    /// The server asks or tells, the editor answers or listens.
    ServerToClient,
}

impl Direction {
    /// The arrow used in `docs/protocol.md`.
    pub fn as_doc(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client → server",
            Direction::ServerToClient => "server → client",
        }
    }
}

/// A JSON-RPC request of the protocol (a method that gets an answer).
pub trait Request {
    /// The method name (`sessionTree/…`).
    const METHOD: &'static str;
    /// Who sends it.
    const DIRECTION: Direction;
    /// What it carries.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// What the answer carries.
    type Result: Serialize + DeserializeOwned + Send + Sync + 'static;
}

/// A JSON-RPC notification of the protocol (no answer).
pub trait Notification {
    /// The method name (`sessionTree/…`).
    const METHOD: &'static str;
    /// Who sends it.
    const DIRECTION: Direction;
    /// What it carries.
    type Params: Serialize + DeserializeOwned + Send + Sync + 'static;
}
