//! The performance harness (issue 8): generates realistic synthetic sessions once (cached in
//! `target/bench-data/`), then measures, per size and dialect, medians of several runs of every
//! operation the editor waits on, and reports each figure against `benches/budgets.json`.
//!
//! ```text
//! cargo bench -p sessiontree --bench harness -- [--sizes 1k,10k,100k] [--dialects pi,omp] [--runs 5]
//!                                                [--seed 1] [--json target/bench.json]
//! ```
//!
//! Opening is measured in fresh child processes (this binary re-executed with `--probe`), so the
//! peak RSS is the real one of a process that opened the file. Everything else runs in this
//! process on one opened session; writes go to a scratch copy, never to the cached file. Relative
//! `--json` paths are taken from the workspace root. Timing never goes into the test suite.
//!
//! One job a module: `args` (the command line), `data` (the cached synthetic sessions), `probe`
//! (the fresh process that opens a file), `measure` (the engine's figures), `server` (the
//! server's figures, through `lsp_client`), `figures` (figures, budgets, verdicts) and `report`
//! (the tables).

mod args;
mod data;
mod figures;
mod lsp_client;
mod measure;
mod probe;
mod report;
mod server;

use args::*;
use data::*;
use figures::*;
use measure::*;
use probe::*;
use report::*;
use serde_json::{json, Value};
use sessiontree_core::synth;
use sessiontree_core::Dialect;
use std::collections::BTreeMap;
use std::io::Write;

/// The same allocator as the `sessiontree` binary, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The search query (2-3 tokens, words the generator uses).
pub const SEARCH: &str = "parse config";
/// A second workspace-symbol query, different from the first: the server answers a query it has
/// just answered over unchanged files from its last answer, which would not measure scoring.
pub const NEXT_SYMBOL_QUERY: &str = "writer client";

/// Bumped whenever the generator's output changes, so cached files are regenerated.
pub const DATA_VERSION: u32 = 1;

pub type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(err) = real_main() {
        let _ = writeln!(std::io::stderr().lock(), "harness: {err}");
        std::process::exit(2);
    }
}

fn real_main() -> AnyResult<()> {
    let args = parse_args()?;
    if let Some(file) = &args.probe {
        return run_probe(file, &args.op, args.repeat);
    }
    let budgets = Budgets::load()?;
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(|| target_dir().join("bench-data"));
    let scratch_dir = data_dir.join("scratch");
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "sessiontree harness: sizes {:?}, dialects {:?}, {} runs, seed {} (data in {})",
        args.sizes
            .iter()
            .map(|&s| synth::format_count(s))
            .collect::<Vec<_>>(),
        args.dialects.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
        args.runs,
        args.seed,
        data_dir.display()
    )?;
    drop(out);

    let mut results = Vec::new();
    let mut by_size: BTreeMap<usize, Vec<(Dialect, Value, Vec<Figure>)>> = BTreeMap::new();
    for &size in &args.sizes {
        for &dialect in &args.dialects {
            writeln!(
                std::io::stdout().lock(),
                "  {} {}…",
                synth::format_count(size),
                dialect
            )?;
            let file = data_file(&data_dir, dialect, size, args.seed)?;
            let figs = measure(&file, dialect, args.runs, &scratch_dir, args.keep_scratch)?;
            for fig in &figs {
                let budget = budgets.for_figure(size, fig);
                let (min, max) = fig.spread().unwrap_or((f64::NAN, f64::NAN));
                results.push(json!({
                    "size": synth::format_count(size),
                    "entries": size,
                    "bytes": file.stats["bytes"],
                    "dialect": dialect.as_str(),
                    "op": fig.op.trim(),
                    "unit": fig.unit,
                    "median": fig.median(),
                    "min": fig.median().map(|_| min),
                    "max": fig.median().map(|_| max),
                    "samples": fig.samples,
                    "writeMs": fig.write_ms,
                    "budget": budget.map(|b| b.limit),
                    "budgetPlusWrite": budget.map(|b| b.plus_write),
                    "verdict": verdict(fig, budget),
                    "note": fig.note,
                }));
            }
            by_size
                .entry(size)
                .or_default()
                .push((dialect, file.stats, figs));
        }
    }

    print_tables(&budgets, &by_size, args.markdown.as_deref())?;
    let mut out = std::io::stdout().lock();
    if let Some(json_path) = &args.json {
        let json_path = if json_path.is_absolute() {
            json_path.clone()
        } else {
            workspace_root().join(json_path)
        };
        if let Some(dir) = json_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let doc = json!({
            "runs": args.runs,
            "seed": args.seed,
            "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "unixTime": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            "results": results,
        });
        std::fs::write(&json_path, serde_json::to_string_pretty(&doc)?)?;
        writeln!(out, "\nwrote {}", json_path.display())?;
    }
    Ok(())
}
