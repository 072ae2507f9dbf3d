//! The sessiontree protocol: every custom LSP method, written once.
//!
//! Clients (VS Code, Neovim) and `docs/protocol.md` are checked against this crate.

/// Version of the custom protocol; bumped on any incompatible change.
pub const PROTOCOL_VERSION: u32 = 1;
