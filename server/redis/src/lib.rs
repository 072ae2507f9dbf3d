//! `sessiontree-redis`: the sessions omp keeps in Redis (`RedisSessionStorage` of
//! `@oh-my-pi/pi-coding-agent`), served through the engine's [`SessionStore`] interface.
//!
//! omp keeps each session file as one Redis string `<prefix>file:<path>` holding the JSONL text,
//! a hash `<prefix>meta` (path → modification time in ms) and a hash `<prefix>title` (path → the
//! title as JSON, laid over the title slot when the session is read). Writes here go through Lua
//! scripts with the same effect on those keys as omp's `OMP_APPEND`, `OMP_WRITE_FULL` and
//! `OMP_UPDATE_TITLE`, with omp's expected-size rule on every write that could land on bytes we
//! have not read. Listing is a `SCAN` over the prefix. See `docs/redis.md`.
//!
//! The client is the `redis` crate's blocking one: the engine is called off the async threads, and
//! this crate needs no runtime. A lost connection is opened again with a growing pause between
//! tries; reads are tried again once reconnected, writes never (see [`link`]).
//!
//! [`SessionStore`]: sessiontree_core::session::SessionStore

pub mod address;
pub mod follow;
pub mod link;
pub mod listing;
mod scripts;
pub mod store;
#[doc(hidden)]
pub mod testing;
mod title;

pub use address::StoreAddress;
pub use link::Link;
pub use store::RedisStore;
