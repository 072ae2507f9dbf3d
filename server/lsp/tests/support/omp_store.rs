//! Sessions in a store (a test's own `redis-server`) as omp's own storage leaves them: a full
//! write (the value, its mtime and the title its slot holds), omp's `OMP_APPEND` (the bytes and
//! the session's time in `omp:sessions:meta`), and the value read back.

use sessiontree_core::session::{SessionStore, Written};
use sessiontree_core::title_slot::TitleSlot;
use sessiontree_redis::testing::RedisServer;
use sessiontree_redis::{Link, RedisStore, StoreAddress};
use std::path::Path;

/// The session at `path` in the store at `address`.
pub fn store_at(address: &StoreAddress, path: &str) -> RedisStore {
    let link = Link::new(address.clone()).unwrap_or_else(|e| panic!("{e}"));
    RedisStore::new(link, Path::new(path))
}

/// The session at `path` in `server`'s store.
pub fn store(server: &RedisServer, path: &str) -> RedisStore {
    store_at(&server.address(), path)
}

/// Puts `bytes` at `path` in the store at `address` as omp's full write leaves them.
pub fn put_at(address: &StoreAddress, path: &str, bytes: &[u8]) {
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let slot = std::str::from_utf8(first).ok().and_then(TitleSlot::parse);
    let written = store_at(address, path)
        .create(bytes, slot.as_ref())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(written, Written::Done { .. }), "{written:?}");
}

/// Puts `bytes` at `path` in `server`'s store as omp's full write leaves them.
pub fn put(server: &RedisServer, path: &str, bytes: &[u8]) {
    put_at(&server.address(), path, bytes);
}

/// Sets the session's time in omp's `meta` hash (milliseconds since the epoch).
pub fn set_mtime(server: &RedisServer, path: &str, mtime_ms: u64) {
    let _: () = redis::cmd("HSET")
        .arg("omp:sessions:meta")
        .arg(path)
        .arg(mtime_ms.to_string())
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{e}"));
}

/// Appends `bytes` to the value as omp's `OMP_APPEND` does, with `mtime_ms` as the session's
/// time.
pub fn append(server: &RedisServer, path: &str, bytes: &str, mtime_ms: u64) {
    let _: () = redis::pipe()
        .cmd("APPEND")
        .arg(format!("omp:sessions:file:{path}"))
        .arg(bytes)
        .cmd("HSET")
        .arg("omp:sessions:meta")
        .arg(path)
        .arg(mtime_ms.to_string())
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The session's value as the store holds it (`None` when there is no such key).
pub fn value(server: &RedisServer, path: &str) -> Option<Vec<u8>> {
    redis::cmd("GET")
        .arg(format!("omp:sessions:file:{path}"))
        .query(&mut server.connection())
        .unwrap_or_else(|e| panic!("{e}"))
}
