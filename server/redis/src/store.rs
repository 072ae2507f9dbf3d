//! [`RedisStore`]: one omp session in Redis, as the engine's [`SessionStore`].

use crate::link::{Link, Retry};
use crate::{scripts, title};
use sessiontree_core::session::{SessionStore, Since, Written};
use sessiontree_core::title_slot::TitleSlot;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bytes fetched by one `GETRANGE` when a session is read whole.
const CHUNK: u64 = 8 << 20;

/// One session of a store: the key `<prefix>file:<path>` and its rows in `<prefix>meta` and
/// `<prefix>title`.
#[derive(Debug, Clone)]
pub struct RedisStore {
    link: Arc<Link>,
    path: PathBuf,
    value_key: String,
    meta_key: String,
    title_key: String,
}

impl RedisStore {
    /// The session `path` (as omp names it) in the store `link` points at.
    pub fn new(link: Arc<Link>, path: &Path) -> RedisStore {
        let prefix = link.address().prefix.clone();
        let name = path.to_string_lossy();
        RedisStore {
            value_key: format!("{prefix}file:{name}"),
            meta_key: format!("{prefix}meta"),
            title_key: format!("{prefix}title"),
            path: path.to_path_buf(),
            link,
        }
    }

    /// The key holding the session's text.
    pub fn value_key(&self) -> &str {
        &self.value_key
    }

    /// The link to the store.
    pub fn link(&self) -> &Arc<Link> {
        &self.link
    }

    /// The path as omp stores it in the hashes (a lossy path is what the key holds too).
    fn field(&self) -> String {
        self.path.to_string_lossy().into_owned()
    }

    fn now_ms() -> String {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
            .to_string()
    }

    /// Reads the value (its first `len` bytes, in chunks) and the title in one transaction.
    fn read_exactly(&self, len: u64) -> std::io::Result<Option<Snapshot>> {
        self.link.run(Retry::Once, |conn| {
            let mut pipe = redis::pipe();
            pipe.atomic();
            pipe.cmd("EXISTS").arg(&self.value_key);
            pipe.cmd("STRLEN").arg(&self.value_key);
            pipe.cmd("HGET").arg(&self.title_key).arg(self.field());
            let mut at = 0;
            while at < len {
                let end = (at + CHUNK).min(len);
                pipe.cmd("GETRANGE")
                    .arg(&self.value_key)
                    .arg(at)
                    .arg(end - 1);
                at = end;
            }
            let values: Vec<redis::Value> = pipe.query(conn)?;
            let mut values = values.into_iter();
            let exists: i64 = redis::from_redis_value(values.next().unwrap_or(redis::Value::Nil))?;
            let strlen: u64 = redis::from_redis_value(values.next().unwrap_or(redis::Value::Nil))?;
            let title: Option<Vec<u8>> =
                redis::from_redis_value(values.next().unwrap_or(redis::Value::Nil))?;
            if exists == 0 {
                return Ok(None);
            }
            let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            for chunk in values {
                let chunk: Vec<u8> = redis::from_redis_value(chunk)?;
                bytes.extend_from_slice(&chunk);
            }
            self.link.count_value_bytes(bytes.len());
            Ok(Some(Snapshot {
                bytes,
                title,
                len_now: strlen,
            }))
        })
    }
}

/// A value's first bytes and its title, read in one transaction.
struct Snapshot {
    bytes: Vec<u8>,
    title: Option<Vec<u8>>,
    /// The value's whole length at that moment.
    len_now: u64,
}

impl SessionStore for RedisStore {
    fn path(&self) -> &Path {
        &self.path
    }

    fn read_all(&self) -> std::io::Result<Option<Vec<u8>>> {
        // The value may grow between the length and the read (an agent appending): what is read
        // is the first `len` bytes, and the rest is followed. It shrinking means a rewrite: read
        // again.
        for _ in 0..4 {
            let len: Option<u64> = self.link.run(Retry::Once, |conn| {
                let (exists, len): (i64, u64) = redis::pipe()
                    .atomic()
                    .cmd("EXISTS")
                    .arg(&self.value_key)
                    .cmd("STRLEN")
                    .arg(&self.value_key)
                    .query(conn)?;
                Ok((exists == 1).then_some(len))
            })?;
            let Some(len) = len else { return Ok(None) };
            match self.read_exactly(len)? {
                None => return Ok(None),
                Some(Snapshot {
                    mut bytes,
                    title,
                    len_now,
                }) if len_now >= len && bytes.len() as u64 == len => {
                    if let Some(slot) = title.as_deref().and_then(title::decode) {
                        title::overlay(&mut bytes, &slot);
                    }
                    return Ok(Some(bytes));
                }
                Some(_) => continue,
            }
        }
        Err(std::io::Error::other(format!(
            "{}: the session kept changing length while it was read",
            self.path.display()
        )))
    }

    fn head(&self, len: u64) -> std::io::Result<Option<(u64, Vec<u8>)>> {
        self.link.run(Retry::Once, |conn| {
            let (exists, strlen, title, mut bytes): (i64, u64, Option<Vec<u8>>, Vec<u8>) =
                redis::pipe()
                    .atomic()
                    .cmd("EXISTS")
                    .arg(&self.value_key)
                    .cmd("STRLEN")
                    .arg(&self.value_key)
                    .cmd("HGET")
                    .arg(&self.title_key)
                    .arg(self.field())
                    .cmd("GETRANGE")
                    .arg(&self.value_key)
                    .arg(0)
                    .arg(i64::try_from(len).unwrap_or(i64::MAX) - 1)
                    .query(conn)?;
            self.link.count_value_bytes(bytes.len());
            if exists == 0 {
                return Ok(None);
            }
            if let Some(slot) = title.as_deref().and_then(title::decode) {
                title::overlay(&mut bytes, &slot);
            }
            Ok(Some((strlen, bytes)))
        })
    }

    fn read_ranges(&self, ranges: &[(u64, u64)]) -> std::io::Result<Vec<Vec<u8>>> {
        let wanted: Vec<(u64, u64)> = ranges.iter().copied().filter(|(f, t)| t > f).collect();
        let read: Vec<Vec<u8>> = if wanted.is_empty() {
            Vec::new()
        } else {
            self.link.run(Retry::Once, |conn| {
                let mut pipe = redis::pipe();
                for (from, to) in &wanted {
                    pipe.cmd("GETRANGE")
                        .arg(&self.value_key)
                        .arg(from)
                        .arg(to - 1);
                }
                pipe.query(conn)
            })?
        };
        self.link
            .count_value_bytes(read.iter().map(Vec::len).sum::<usize>());
        // `GETRANGE` past the end answers nothing; an empty range is not sent.
        let mut read = read.into_iter();
        Ok(ranges
            .iter()
            .map(|(from, to)| {
                if to > from {
                    read.next().unwrap_or_default()
                } else {
                    Vec::new()
                }
            })
            .collect())
    }

    fn read_since(&self, len: u64, tail: &[u8]) -> std::io::Result<Since> {
        self.link.run(Retry::Once, |conn| {
            let mut pipe = redis::pipe();
            pipe.atomic();
            pipe.cmd("EXISTS").arg(&self.value_key);
            pipe.cmd("STRLEN").arg(&self.value_key);
            let check_from = len.saturating_sub(tail.len() as u64);
            if !tail.is_empty() {
                pipe.cmd("GETRANGE")
                    .arg(&self.value_key)
                    .arg(check_from)
                    .arg(len - 1);
            }
            pipe.cmd("GETRANGE").arg(&self.value_key).arg(len).arg(-1);
            let values: Vec<redis::Value> = pipe.query(conn)?;
            let mut values = values.into_iter();
            let mut next = || values.next().unwrap_or(redis::Value::Nil);
            let exists: i64 = redis::from_redis_value(next())?;
            let strlen: u64 = redis::from_redis_value(next())?;
            let seen: Vec<u8> = if tail.is_empty() {
                Vec::new()
            } else {
                redis::from_redis_value(next())?
            };
            let after: Vec<u8> = redis::from_redis_value(next())?;
            self.link.count_value_bytes(seen.len() + after.len());
            if exists == 0 || strlen < len || seen != tail {
                return Ok(Since::Replaced);
            }
            // `GETRANGE len -1` on a value of exactly `len` bytes (len > 0) answers nothing.
            Ok(Since::Grown(if strlen == len { Vec::new() } else { after }))
        })
    }

    fn append(&self, expected: u64, bytes: &[u8]) -> std::io::Result<Written> {
        let answer: (i64, i64) = self.link.run(Retry::Never, |conn| {
            scripts::append_if()
                .key(&self.value_key)
                .key(&self.meta_key)
                .arg(bytes)
                .arg(self.field())
                .arg(Self::now_ms())
                .arg(expected)
                .invoke(conn)
        })?;
        Ok(written(answer))
    }

    fn create(&self, contents: &[u8], title: Option<&TitleSlot>) -> std::io::Result<Written> {
        let encoded = title.map(title::encode).unwrap_or_default();
        let answer: (i64, i64) = self.link.run(Retry::Never, |conn| {
            scripts::write_full()
                .key(&self.value_key)
                .key(&self.meta_key)
                .key(&self.title_key)
                .arg(contents)
                .arg(self.field())
                .arg(Self::now_ms())
                .arg(if title.is_some() { "1" } else { "0" })
                .arg(&encoded)
                .arg(-1)
                .invoke(conn)
        })?;
        Ok(written(answer))
    }

    fn set_title(&self, slot: &TitleSlot) -> std::io::Result<()> {
        let encoded = title::encode(slot);
        self.link.run(Retry::Never, |conn| {
            scripts::update_title()
                .key(&self.meta_key)
                .key(&self.title_key)
                .arg(self.field())
                .arg(Self::now_ms())
                .arg(&encoded)
                .invoke::<i64>(conn)
        })?;
        Ok(())
    }

    fn title(&self) -> std::io::Result<Option<TitleSlot>> {
        let raw: Option<Vec<u8>> = self.link.run(Retry::Once, |conn| {
            redis::cmd("HGET")
                .arg(&self.title_key)
                .arg(self.field())
                .query(conn)
        })?;
        Ok(raw.as_deref().and_then(title::decode))
    }

    fn sibling(&self, path: &Path) -> Arc<dyn SessionStore> {
        Arc::new(RedisStore::new(Arc::clone(&self.link), path))
    }
}

fn written((done, len): (i64, i64)) -> Written {
    if done == 1 {
        Written::Done {
            len: u64::try_from(len).unwrap_or(0),
        }
    } else {
        Written::Conflict {
            actual: u64::try_from(len).ok(),
        }
    }
}
