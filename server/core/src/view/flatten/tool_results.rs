//! A tool result's row is made from its call: the call with the result's id that the walk saw
//! last (each agent keeps a map of every call it walks past; the last one wins), found from the
//! recorded call hashes for the rows a window shows, or from a map over the whole model.

use super::{Model, NONE};
use crate::facts::call_hash;
use crate::facts::flags::flag;
use crate::facts::{RowText, ToolCall};
use crate::session::columns::{CallRecord, Chunked};
use std::collections::{HashMap, HashSet};

/// Tool call id (hashed) → (key, index of the call in its facts): the call at the greatest last
/// position among the keys of one half.
pub(crate) type CallMap = HashMap<u64, (u32, u32), foldhash::fast::RandomState>;

impl Model {
    /// Makes the map of tool calls now (before rows are built on several threads).
    pub fn prepare_tool_texts(&self) {
        let _ = self.call("");
    }

    /// The tool call with this id that the walk saw last (pi and omp keep a map of every call
    /// they walk past: the last one wins). The map is made on first use, over two halves of the
    /// keys on two threads; a key's place is its last position.
    pub(super) fn call(&self, id: &str) -> Option<&ToolCall> {
        let calls = self.calls.get_or_init(|| match self.columns.calls() {
            Some(records) => self.call_map_from_records(records),
            None => self.call_map_from_facts(),
        });
        self.call_in(id, calls)
    }

    /// The map of just the calls the tool results at `positions` name, from one pass over the
    /// session's call records (a window needs a handful; the whole map hashes every call). `None`
    /// when the whole map is made already or the records are incomplete.
    pub fn calls_for(&self, positions: &[usize]) -> Option<CallMap> {
        self.window_calls(positions).map(|(calls, _)| calls)
    }

    /// [`Model::calls_for`], and whether every call with one of those ids (by hash) belongs to an
    /// entry the model holds. A prefix model ([`Model::build_prefix`]) holds the walk's first
    /// positions only, and the call a result shows is the last one the whole walk passes.
    pub fn window_calls(&self, positions: &[usize]) -> Option<(CallMap, bool)> {
        if self.calls.get().is_some() {
            return None;
        }
        let records = self.columns.calls()?;
        let wanted = self.wanted_calls(positions);
        let mut calls = CallMap::default();
        let mut held = true;
        if wanted.is_empty() {
            return Some((calls, held));
        }
        for record in records.chunks().flat_map(|c| c.iter()) {
            if !wanted.contains(&record.hash) {
                continue;
            }
            match self.key_of_entry.get(record.entry as usize) {
                Some(&k) if k != NONE => {
                    self.keep_call(&mut calls, record.hash, k as usize, record.call)
                }
                _ => held = false,
            }
        }
        Some((calls, held))
    }

    /// The call id hashes the tool results at `positions` name.
    fn wanted_calls(&self, positions: &[usize]) -> HashSet<u64, foldhash::fast::RandomState> {
        positions
            .iter()
            .filter_map(|&pos| match &self.facts_at(pos).text {
                RowText::ToolResult {
                    call_id: Some(id), ..
                } => Some(call_hash(id)),
                _ => None,
            })
            .collect()
    }

    /// The call with this id in `maps` (the one at the latest place among them).
    pub(super) fn call_in<'a>(&'a self, id: &str, maps: &'a [CallMap]) -> Option<&'a ToolCall> {
        let calls = maps;
        let hash = call_hash(id);
        let mut best: Option<(usize, &ToolCall)> = None;
        for map in calls {
            let Some(&(k, i)) = map.get(&hash) else {
                continue;
            };
            let (call_id, call) = &self.key_facts(k as usize).tool_calls[i as usize];
            if call_id != id {
                // Two call ids with one hash: walk every call, the last one wins.
                return self.call_by_scan(id);
            }
            let at = self.key_last_pos[k as usize] as usize;
            if best.is_none_or(|(b, _)| at > b) {
                best = Some((at, call));
            }
        }
        best.map(|(_, call)| call)
    }

    /// The map from the session's call records (hashes made in the scan): no entry's facts read.
    fn call_map_from_records(&self, records: &Chunked<CallRecord>) -> [CallMap; 2] {
        let scan = |chunks: &[&[CallRecord]]| {
            let mut calls = CallMap::default();
            for record in chunks.iter().flat_map(|c| c.iter()) {
                let k = match self.key_of_entry.get(record.entry as usize) {
                    Some(&k) if k != NONE => k as usize,
                    _ => continue,
                };
                self.keep_call(&mut calls, record.hash, k, record.call);
            }
            calls
        };
        let chunks: Vec<&[CallRecord]> = records.chunks().collect();
        if records.len() < 4096 {
            return [scan(&chunks), CallMap::default()];
        }
        let (a, b) = chunks.split_at(chunks.len() / 2);
        crate::parallel::on_two_threads(a, b, scan)
    }

    /// The map made by hashing every call id of the keys (when some entry's calls are not
    /// recorded): over two halves of the keys on two threads.
    fn call_map_from_facts(&self) -> [CallMap; 2] {
        let scan = |keys: std::ops::Range<usize>| {
            let mut calls = CallMap::default();
            for k in keys {
                if self.flags[k] & flag::CALLS == 0 {
                    continue;
                }
                for (i, (call_id, _)) in self.key_facts(k).tool_calls.iter().enumerate() {
                    self.keep_call(&mut calls, call_hash(call_id), k, i as u32);
                }
            }
            calls
        };
        let n = self.key_entry.len();
        if n < 4096 {
            return [scan(0..n), CallMap::default()];
        }
        let mid = n / 2;
        crate::parallel::on_two_threads((0, mid), (mid, n), |(from, to)| scan(from..to))
    }

    /// Records call `i` of key `k` unless the map holds a call with that hash at a later place
    /// (a key's place is its last position; within a key the later call wins).
    fn keep_call(&self, calls: &mut CallMap, hash: u64, k: usize, i: u32) {
        let slot = calls.entry(hash).or_insert((k as u32, i));
        let held = slot.0 as usize;
        if held == k || self.key_last_pos[k] > self.key_last_pos[held] {
            *slot = (k as u32, i);
        }
    }

    pub(super) fn call_by_scan(&self, id: &str) -> Option<&ToolCall> {
        let mut found = None;
        for k in self.keys() {
            for (call_id, call) in &self.key_facts(k).tool_calls {
                if call_id == id {
                    found = Some(call);
                }
            }
        }
        found
    }
}
