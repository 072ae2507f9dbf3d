//! The synthetic session files, generated once per dialect, size and seed, and cached.

use crate::{AnyResult, DATA_VERSION};
use serde_json::{json, Value};
use sessiontree_core::synth::{self, SynthOptions};
use sessiontree_core::Dialect;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub struct DataFile {
    pub path: PathBuf,
    pub stats: Value,
}

pub fn data_file(dir: &Path, dialect: Dialect, entries: usize, seed: u64) -> AnyResult<DataFile> {
    std::fs::create_dir_all(dir)?;
    let stem = format!(
        "v{DATA_VERSION}-{}-{}-s{seed}",
        dialect.as_str(),
        synth::format_count(entries)
    );
    let path = dir.join(format!("{stem}.jsonl"));
    let stats_path = dir.join(format!("{stem}.stats.json"));
    if path.exists() {
        if let Ok(text) = std::fs::read_to_string(&stats_path) {
            if let Ok(stats) = serde_json::from_str::<Value>(&text) {
                if std::fs::metadata(&path)?.len() == stats["bytes"].as_u64().unwrap_or(u64::MAX) {
                    return Ok(DataFile { path, stats });
                }
            }
        }
    }
    let started = Instant::now();
    let tmp = dir.join(format!("{stem}.jsonl.tmp"));
    let s = synth::generate_file(
        SynthOptions {
            dialect,
            entries,
            seed,
        },
        &tmp,
    )?;
    std::fs::rename(&tmp, &path)?;
    let stats = json!({
        "entries": s.entries, "bytes": s.bytes, "branchPoints": s.branch_points,
        "branchSummaries": s.branch_summaries, "compactions": s.compactions, "labels": s.labels,
        "leafDepth": s.leaf_depth, "leafId": s.leaf_id, "generateSeconds": started.elapsed().as_secs_f64(),
    });
    std::fs::write(&stats_path, serde_json::to_string_pretty(&stats)?)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "  generated {} ({:.1} MB) in {:.2} s",
        path.display(),
        s.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    )?;
    Ok(DataFile { path, stats })
}
