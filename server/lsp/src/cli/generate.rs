//! `sessiontree generate`: writes a realistic synthetic session (for benchmarks), deterministic
//! by seed, in either dialect's exact file shape.

use super::anyhow_like::Error;
use super::CliResult;
use sessiontree_core::synth::{self, SynthOptions};
use sessiontree_core::Dialect;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree generate`.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// The dialect whose file shape to write: `pi` or `omp`.
    #[arg(long, default_value = "omp")]
    pub dialect: Dialect,
    /// Number of entries after the header: `1000`, `10k`, `100k`, `1M`… (about 3 KB each).
    #[arg(long, value_parser = parse_entries)]
    pub entries: usize,
    /// The seed; the same arguments always give the same bytes.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write the session file (created or truncated).
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// Print the counts as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_entries(text: &str) -> Result<usize, String> {
    synth::parse_count(text).ok_or_else(|| format!("`{text}` is not a count (e.g. 1000, 10k, 1M)"))
}

/// Runs the subcommand.
pub fn run(args: GenerateArgs) -> CliResult {
    let options = SynthOptions {
        dialect: args.dialect,
        entries: args.entries,
        seed: args.seed,
    };
    let started = std::time::Instant::now();
    let stats = synth::generate_file(options, &args.out)
        .map_err(|e| Error::Usage(format!("cannot write {}: {e}", args.out.display())))?;
    let elapsed = started.elapsed();
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = serde_json::json!({
            "file": args.out.display().to_string(),
            "dialect": args.dialect.as_str(),
            "seed": args.seed,
            "entries": stats.entries,
            "bytes": stats.bytes,
            "messages": stats.messages,
            "toolCalls": stats.tool_calls,
            "thinkingBlocks": stats.thinking_blocks,
            "branchPoints": stats.branch_points,
            "branches": stats.branches,
            "branchSummaries": stats.branch_summaries,
            "compactions": stats.compactions,
            "labels": stats.labels,
            "modelChanges": stats.model_changes,
            "thinkingChanges": stats.thinking_changes,
            "customs": stats.customs,
            "leafDepth": stats.leaf_depth,
            "leafId": stats.leaf_id,
            "sessionId": stats.session_id,
            "seconds": elapsed.as_secs_f64(),
        });
        writeln!(out, "{value}")?;
    } else {
        writeln!(
            out,
            "{}: {} {} entries, {:.1} MB in {:.2} s",
            args.out.display(),
            args.dialect,
            stats.entries,
            stats.bytes as f64 / 1e6,
            elapsed.as_secs_f64()
        )?;
        writeln!(
            out,
            "  {} messages ({} tool calls, {} thinking blocks), {} branch points ({:.1}%), {} branch summaries, {} compactions, {} labels, {} model / {} thinking changes, {} custom; leaf {} at depth {}",
            stats.messages,
            stats.tool_calls,
            stats.thinking_blocks,
            stats.branch_points,
            100.0 * stats.branch_points as f64 / stats.entries.max(1) as f64,
            stats.branch_summaries,
            stats.compactions,
            stats.labels,
            stats.model_changes,
            stats.thinking_changes,
            stats.customs,
            stats.leaf_id,
            stats.leaf_depth
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
