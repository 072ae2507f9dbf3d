//! Test support of the server's tests: the shared Rust test support (fixtures, prerequisites, the
//! second writer, the stdio connection and `data.kind`: `sessiontree-testkit`), the in-process
//! client, the real agents with the real server over stdio, and sessions in a Redis store.
#![allow(dead_code, unused_imports)]

/// The in-process client.
pub mod inproc;

/// The real agents, the model server and the real server over stdio.
pub mod agents;

/// Sessions in a Redis store as omp writes them.
pub mod omp_store;

/// A Redis store serving TLS.
pub mod tls_store;

/// A terminal (tmux) for the agents' TUIs.
pub mod tmux;

pub use sessiontree_testkit::lsp::{frame, header_length, kind, uri};
pub use sessiontree_testkit::{copy_fixture, fixture, require};
