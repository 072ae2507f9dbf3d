//! Listing a store's sessions as omp's `loadIndex` does: a `SCAN` over `<prefix>file:*`, each
//! value's length, and the `meta` and `title` hashes.

use crate::link::{Link, Retry};
use sessiontree_core::title_slot::TitleSlot;
use std::path::PathBuf;

/// One session of a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The path as omp names it.
    pub path: PathBuf,
    /// The value's length in bytes.
    pub size: u64,
    /// The modification time omp recorded (ms since the epoch), when it is a number.
    pub mtime_ms: Option<i64>,
    /// The title omp keeps beside the value.
    pub title: Option<TitleSlot>,
}

/// Keys fetched per `SCAN` step (omp's default `scanCount`).
const SCAN_COUNT: usize = 500;

/// Every session under the link's prefix, sorted by path.
pub fn list(link: &Link) -> std::io::Result<Vec<Listed>> {
    let prefix = link.address().prefix.clone();
    let file_prefix = format!("{prefix}file:");
    let pattern = format!("{}*", escape_glob(&file_prefix));
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let (next, batch): (u64, Vec<Vec<u8>>) = link.run(Retry::Once, |conn| {
            redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(SCAN_COUNT)
                .query(conn)
        })?;
        keys.extend(batch);
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    keys.sort();
    keys.dedup();
    let (meta, titles): (
        std::collections::HashMap<String, String>,
        std::collections::HashMap<String, Vec<u8>>,
    ) = link.run(Retry::Once, |conn| {
        redis::pipe()
            .cmd("HGETALL")
            .arg(format!("{prefix}meta"))
            .cmd("HGETALL")
            .arg(format!("{prefix}title"))
            .query(conn)
    })?;
    let sizes: Vec<u64> = link.run(Retry::Once, |conn| {
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("STRLEN").arg(key);
        }
        pipe.query(conn)
    })?;
    let mut out = Vec::with_capacity(keys.len());
    for (key, size) in keys.iter().zip(sizes) {
        let Some(path) = key
            .strip_prefix(file_prefix.as_bytes())
            .and_then(|p| std::str::from_utf8(p).ok())
        else {
            continue;
        };
        out.push(Listed {
            path: PathBuf::from(path),
            size,
            mtime_ms: meta
                .get(path)
                .and_then(|m| m.parse::<f64>().ok())
                .filter(|m| m.is_finite())
                .map(|m| m as i64),
            title: titles.get(path).and_then(|raw| crate::title::decode(raw)),
        });
    }
    Ok(out)
}

/// Bytes fetched by one pipeline of [`read_values`] (a value longer than this is fetched alone).
const BATCH_BYTES: u64 = 32 << 20;

/// The text of each listed session as omp reads it (its title laid over the slot), fetched by
/// pipelined `GET`s in batches; `None` for a session whose key vanished meanwhile. Each value is
/// read whole, as a file is line-scanned whole when folders are listed.
pub fn read_values(link: &Link, listed: &[Listed]) -> std::io::Result<Vec<Option<Vec<u8>>>> {
    let prefix = link.address().prefix.clone();
    let mut out = Vec::with_capacity(listed.len());
    let mut start = 0;
    while start < listed.len() {
        let mut end = start;
        let mut bytes = 0;
        while end < listed.len() && (end == start || bytes + listed[end].size <= BATCH_BYTES) {
            bytes += listed[end].size;
            end += 1;
        }
        let batch = &listed[start..end];
        let values: Vec<Option<Vec<u8>>> = link.run(Retry::Once, |conn| {
            let mut pipe = redis::pipe();
            for item in batch {
                pipe.cmd("GET")
                    .arg(format!("{prefix}file:{}", item.path.to_string_lossy()));
            }
            pipe.query(conn)
        })?;
        for (item, value) in batch.iter().zip(values) {
            out.push(value.map(|mut bytes| {
                if let Some(slot) = &item.title {
                    crate::title::overlay(&mut bytes, slot);
                }
                bytes
            }));
        }
        start = end;
    }
    Ok(out)
}

/// `text` with the glob characters of `SCAN MATCH` escaped.
pub(crate) fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
