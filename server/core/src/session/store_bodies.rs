//! The bodies of a session kept in a store, read from the store by byte range when asked for, as
//! a file's bodies are read from the file: an open session holds offsets, not the text.
//!
//! The store's value is read through [`SessionStore::read_ranges`] (Redis: `GETRANGE`s sent in
//! one pipeline). The open's scan reads large ranges straight through; small reads (one body, a
//! short run) go through a small cache of aligned blocks, so the entries of one path or one page
//! of the tree cost one round trip rather than one each. Only whole blocks are cached: the value
//! grows at its end, and a short last block would hide what was appended after it.
//!
//! The value's first bytes are read once, when the session opens, with the agent's title laid
//! over the title slot ([`SessionStore::head`]); reads that touch them are served from that copy,
//! so the slot reads as the agent reads it. What the value holds is only ever appended to, except
//! when a writer replaces it whole: the session's follow notices that (the last bytes it indexed
//! are checked) and the session is opened again.

use super::store::SessionStore;
use crate::entry::RangedBytes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Bytes of one cached block.
const BLOCK: u64 = 64 << 10;
/// Blocks kept (4 MiB).
const BLOCKS: usize = 64;
/// A read of this many bytes or more skips the cache.
const DIRECT_FROM: usize = 4 * BLOCK as usize;
/// Bytes asked for by one `GETRANGE` of a direct read (the pieces go in one pipeline).
const PIECE: u64 = 1 << 20;

/// A store's value, read by byte range.
pub(crate) struct StoreBodies {
    store: Arc<dyn SessionStore>,
    /// The value's first bytes as the agent reads them (title laid over the slot).
    head: Box<[u8]>,
    cache: Mutex<Blocks>,
}

impl std::fmt::Debug for StoreBodies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreBodies")
            .field("path", &self.store.path())
            .field("head", &self.head.len())
            .finish_non_exhaustive()
    }
}

/// The cached blocks (block index → bytes), with the tick each was last used at.
#[derive(Default)]
struct Blocks {
    blocks: HashMap<u64, (Arc<[u8]>, u64)>,
    tick: u64,
}

impl Blocks {
    fn get(&mut self, index: u64) -> Option<Arc<[u8]>> {
        self.tick += 1;
        let tick = self.tick;
        self.blocks.get_mut(&index).map(|(bytes, used)| {
            *used = tick;
            Arc::clone(bytes)
        })
    }

    fn put(&mut self, index: u64, bytes: Arc<[u8]>) {
        if self.blocks.len() >= BLOCKS && !self.blocks.contains_key(&index) {
            let oldest = self
                .blocks
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                self.blocks.remove(&oldest);
            }
        }
        self.tick += 1;
        self.blocks.insert(index, (bytes, self.tick));
    }
}

impl StoreBodies {
    /// The value of `store`, whose first bytes (as the agent reads them) are `head`.
    pub(crate) fn new(store: Arc<dyn SessionStore>, head: Vec<u8>) -> StoreBodies {
        StoreBodies {
            store,
            head: head.into_boxed_slice(),
            cache: Mutex::new(Blocks::default()),
        }
    }
}

impl RangedBytes for StoreBodies {
    fn read(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let mut bytes = if len >= DIRECT_FROM {
            self.read_direct(offset, len)?
        } else {
            self.read_cached(offset, len)?
        };
        if bytes.len() < len {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: the store's value ends before byte {}",
                    self.store.path().display(),
                    offset + len as u64
                ),
            ));
        }
        bytes.truncate(len);
        self.lay_head_over(offset, &mut bytes);
        Ok(bytes)
    }

    /// Straight from the store (the open's scan reads each byte once: no cache).
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        let mut bytes = self.read_direct(at, buf.len())?;
        bytes.truncate(buf.len());
        self.lay_head_over(at, &mut bytes);
        buf[..bytes.len()].copy_from_slice(&bytes);
        Ok(bytes.len())
    }
}

impl StoreBodies {
    /// The bytes at `offset` that the head covers are the head's.
    fn lay_head_over(&self, offset: u64, bytes: &mut [u8]) {
        let Ok(start) = usize::try_from(offset) else {
            return;
        };
        if start >= self.head.len() {
            return;
        }
        let n = (self.head.len() - start).min(bytes.len());
        bytes[..n].copy_from_slice(&self.head[start..start + n]);
    }

    /// `len` bytes at `offset` (fewer where the value ends), in pieces sent in one pipeline.
    fn read_direct(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let end = offset.saturating_add(len as u64);
        let mut ranges = Vec::new();
        let mut at = offset;
        while at < end {
            let to = (at + PIECE).min(end);
            ranges.push((at, to));
            at = to;
        }
        let pieces = self.store.read_ranges(&ranges)?;
        let mut bytes = Vec::with_capacity(len);
        for (piece, (from, to)) in pieces.iter().zip(&ranges) {
            bytes.extend_from_slice(piece);
            if (piece.len() as u64) < to - from {
                break;
            }
        }
        Ok(bytes)
    }

    /// `len` bytes at `offset` (fewer where the value ends) through the block cache: the missing
    /// blocks are read in one pipeline.
    fn read_cached(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        let end = offset.saturating_add(len as u64);
        let first = offset / BLOCK;
        let last = end.saturating_sub(1).max(offset) / BLOCK;
        let mut blocks: Vec<Option<Arc<[u8]>>> = {
            let mut cache = lock(&self.cache);
            (first..=last).map(|index| cache.get(index)).collect()
        };
        let missing: Vec<u64> = (first..=last)
            .zip(&blocks)
            .filter(|(_, block)| block.is_none())
            .map(|(index, _)| index)
            .collect();
        if !missing.is_empty() {
            let ranges: Vec<(u64, u64)> = missing
                .iter()
                .map(|index| (index * BLOCK, (index + 1) * BLOCK))
                .collect();
            let read = self.store.read_ranges(&ranges)?;
            let mut cache = lock(&self.cache);
            for (index, bytes) in missing.into_iter().zip(read) {
                let bytes: Arc<[u8]> = bytes.into();
                if bytes.len() as u64 == BLOCK {
                    cache.put(index, Arc::clone(&bytes));
                }
                blocks[usize::try_from(index - first).unwrap_or(0)] = Some(bytes);
            }
        }
        let mut out = Vec::with_capacity(len);
        for (index, block) in (first..).zip(blocks) {
            let block = block.unwrap_or_else(|| Arc::from(Vec::new()));
            let from = offset.saturating_sub(index * BLOCK);
            let to = (end - index * BLOCK).min(BLOCK);
            let (from, to) = (
                usize::try_from(from).unwrap_or(0),
                usize::try_from(to).unwrap_or(0),
            );
            let Some(part) = block.get(from..to.min(block.len())) else {
                break;
            };
            out.extend_from_slice(part);
            if to > block.len() {
                // The value ends in this block.
                break;
            }
        }
        Ok(out)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
