//! The client's side of the LSP base protocol, checked before the LSP library sees it.
//!
//! `tower-lsp-server` answers a message it cannot decode (not JSON, not UTF-8, not a JSON-RPC
//! request or response) with an error and then ends its input stream, which ends the server
//! with every open session. This crate stands in front of it: [`FrameReader`] takes the bytes
//! the client sends, cuts them into `Content-Length` frames, and gives back each message the
//! library will decode (as a canonical frame, [`frame`]) or a [`Rejection`] to answer in its
//! place ([`Rejection::answer`]: a JSON-RPC error with `id: null`, as JSON-RPC 2.0 asks). A
//! damaged header is answered once and skipped up to the next `Content-Length` header, so one bad
//! message costs one error answer. Only a message announced larger than [`MAX_BODY`] ends the
//! stream ([`Event::End`]): its end cannot be found without reading that much.
//!
//! What the library decodes is decided by the library's own types ([`check`]), so nothing
//! passed on can make it stop. Pure and synchronous: no I/O, no runtime (the server wraps it
//! around its input; the fuzz target drives it directly).

mod check;
mod fast;
mod reader;

pub use check::{check, Code, LibraryMessage, Rejection};
pub use reader::{frame, Event, FrameReader, MAX_BODY, MAX_HEADER};
