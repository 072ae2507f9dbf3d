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

/// A session's length and first bytes (as [`heads`] reads them).
pub type Head = (u64, Vec<u8>);

/// One session's answer in [`heads`]: `EXISTS`, `STRLEN`, its title row, the `GETRANGE`.
type HeadReply = (i64, u64, Option<Vec<u8>>, Vec<u8>);

/// Sessions whose heads one pipeline of [`heads`] reads.
const HEADS_PER_PIPELINE: usize = 256;

/// The length and first `len` bytes of each of `paths`, as [`crate::RedisStore`]'s `head` reads
/// them (the title omp keeps laid over the slot), each session's `EXISTS`, `STRLEN`, title and
/// `GETRANGE` in one transaction, sessions pipelined 256 at a time; `None` for a session whose
/// key vanished meanwhile. What a listing reads first: a session no longer than `len` needs
/// nothing more.
pub fn heads(link: &Link, paths: &[PathBuf], len: u64) -> std::io::Result<Vec<Option<Head>>> {
    let prefix = link.address().prefix.clone();
    let title_key = format!("{prefix}title");
    let last = i64::try_from(len).unwrap_or(i64::MAX).saturating_sub(1);
    let mut out = Vec::with_capacity(paths.len());
    for batch in paths.chunks(HEADS_PER_PIPELINE) {
        let answers: Vec<HeadReply> = link.run(Retry::Once, |conn| {
            let mut pipe = redis::pipe();
            for path in batch {
                let name = path.to_string_lossy();
                let key = format!("{prefix}file:{name}");
                // One transaction per session: its replies come back as EXEC's array.
                pipe.cmd("MULTI").ignore();
                pipe.cmd("EXISTS").arg(&key).ignore();
                pipe.cmd("STRLEN").arg(&key).ignore();
                pipe.cmd("HGET").arg(&title_key).arg(name.as_ref()).ignore();
                pipe.cmd("GETRANGE").arg(&key).arg(0).arg(last).ignore();
                pipe.cmd("EXEC");
            }
            pipe.query(conn)
        })?;
        for (exists, size, title, mut bytes) in answers {
            link.count_value_bytes(bytes.len());
            if exists == 0 {
                out.push(None);
                continue;
            }
            if let Some(slot) = title.as_deref().and_then(crate::title::decode) {
                crate::title::overlay(&mut bytes, &slot);
            }
            out.push(Some((size, bytes)));
        }
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
