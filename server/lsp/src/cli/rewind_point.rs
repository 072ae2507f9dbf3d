//! `sessiontree rewind-point take|bind`: recording rewind points from inside the agent. The
//! bridge (`server/bridge/sessiontree-bridge.ts`) runs `take` when a user message is about to be
//! processed (before the agent's first tool runs) and when a turn ends, and `bind` once the agent
//! has written the entry, so the store's logic is written once, here and in `sessiontree-rewind`.
//! Each prints one JSON line on stdout; a failure prints `{"error": {"kind", "message"}}` there
//! too (the kinds of `docs/protocol.md`, e.g. `notARepository`) and exits 2.

use super::CliResult;
use serde_json::json;
use sessiontree_rewind::{Moment, PointTarget, Rewind};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `sessiontree rewind-point`.
#[derive(Debug, clap::Args)]
pub struct RewindPointArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Take a snapshot of the workspace's files now; prints `{"snapshot", "new", "workspace", "ms"}`.
    Take(TakeArgs),
    /// Record a snapshot taken with `take` as the rewind point of an entry; prints `{"bound": true, …}`.
    Bind(BindArgs),
}

/// Which workspace.
#[derive(Debug, clap::Args)]
struct Workspace {
    /// The session's working folder (its header's `cwd`): the git work tree that holds it is
    /// snapshotted.
    #[arg(long)]
    cwd: PathBuf,
    /// The session file: left out of the snapshot (with the `*.jsonl` beside it) when it lies in
    /// the work tree.
    #[arg(long)]
    session_file: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct TakeArgs {
    #[command(flatten)]
    workspace: Workspace,
}

/// What the point's files are.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum MomentArg {
    /// A user message: the files before the agent acted on it.
    Before,
    /// A turn-ending assistant message: the files after the turn.
    After,
}

#[derive(Debug, clap::Args)]
struct BindArgs {
    #[command(flatten)]
    workspace: Workspace,
    /// The snapshot (a tree id printed by `take`).
    #[arg(long)]
    snapshot: String,
    /// The session's id (its header's `id`).
    #[arg(long)]
    session_id: String,
    /// The entry's id.
    #[arg(long)]
    entry: String,
    /// The entry's `timestamp` (a branched session copies it with the entry).
    #[arg(long)]
    entry_time: Option<String>,
    /// Before the agent acted (a user message) or after the turn.
    #[arg(long, value_enum)]
    moment: MomentArg,
    /// Who took the snapshot (written to the ledger).
    #[arg(long, default_value = "bridge")]
    by: String,
    /// The snapshot was not taken exactly at the boundary (the agent's tools may have run first).
    #[arg(long)]
    approximate: bool,
}

/// Runs `sessiontree rewind-point`.
pub fn run(args: RewindPointArgs) -> CliResult {
    let answer = match args.action {
        Action::Take(take) => run_take(&take),
        Action::Bind(bind) => run_bind(&bind),
    };
    let mut out = std::io::stdout().lock();
    match answer {
        Ok(value) => {
            writeln!(out, "{value}")?;
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            writeln!(
                out,
                "{}",
                json!({"error": {"kind": err.kind(), "message": err.to_string()}})
            )?;
            Err(err.into())
        }
    }
}

fn open(workspace: &Workspace) -> sessiontree_rewind::Result<Rewind> {
    Rewind::open(&workspace.cwd, workspace.session_file.as_deref())
}

fn run_take(args: &TakeArgs) -> sessiontree_rewind::Result<serde_json::Value> {
    let started = Instant::now();
    let rewind = open(&args.workspace)?;
    let snapshot = rewind.snapshot()?;
    Ok(json!({
        "snapshot": snapshot.tree,
        "new": snapshot.new,
        "workspace": rewind.workspace().toplevel(),
        "ms": started.elapsed().as_secs_f64() * 1000.0,
    }))
}

fn run_bind(args: &BindArgs) -> sessiontree_rewind::Result<serde_json::Value> {
    let rewind = open(&args.workspace)?;
    rewind.require_snapshot(&args.snapshot)?;
    let target = PointTarget {
        session_id: args.session_id.clone(),
        file: args
            .workspace
            .session_file
            .as_deref()
            .map(absolute)
            .map(|p| p.to_string_lossy().into_owned()),
        entry_id: args.entry.clone(),
        entry_time: args.entry_time.clone(),
    };
    let moment = match args.moment {
        MomentArg::Before => Moment::Before,
        MomentArg::After => Moment::After,
    };
    let exact = !args.approximate;
    rewind.bind_target(&target, moment, &args.snapshot, exact, &args.by)?;
    Ok(json!({
        "bound": true,
        "entryId": args.entry,
        "moment": moment.as_str(),
        "snapshot": args.snapshot,
        "exact": exact,
    }))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
