//! `sessiontree snapshots` and `sessiontree rewind`: the rewind points of a session and restoring
//! its workspace (the header's `cwd`) to one of them, for scripts. The same engine as the editors
//! (`sessiontree-rewind`); the session file is never written. Errors (not a git repository, no
//! point, a pruned snapshot) exit non-zero with a message, and nothing is touched then.

use super::CliResult;
use serde_json::{json, Value};
use sessiontree_core::{Dialect, Session};
use sessiontree_rewind::{Point, Resolved, RestoreReport, Retention, Rewind};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree snapshots`.
#[derive(Debug, clap::Args)]
pub struct SnapshotsArgs {
    /// The session file.
    pub file: std::path::PathBuf,
    /// Read the file with this agent's rules (`pi` or `omp`) instead of detecting them.
    #[arg(long)]
    pub dialect: Option<Dialect>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Apply the retention rules (git config `sessiontree.rewind.maxSnapshots` /
    /// `sessiontree.rewind.maxAgeDays`, or the flags below) before listing.
    #[arg(long)]
    pub prune: bool,
    /// With `--prune`: keep at most this many snapshots (labelled entries are pinned).
    #[arg(long, requires = "prune")]
    pub keep: Option<usize>,
    /// With `--prune`: drop snapshots older than this many days (labelled entries are pinned).
    #[arg(long, requires = "prune")]
    pub max_age_days: Option<f64>,
}

/// Arguments of `sessiontree rewind`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["at", "undo"])))]
pub struct RewindArgs {
    /// The session file.
    pub file: std::path::PathBuf,
    /// Restore the files to this entry's point (or the nearest point above it).
    #[arg(long, value_name = "ENTRY_ID")]
    pub at: Option<String>,
    /// Undo the last restore made in the workspace.
    #[arg(long)]
    pub undo: bool,
    /// Print what would change and touch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Read the file with this agent's rules (`pi` or `omp`) instead of detecting them.
    #[arg(long)]
    pub dialect: Option<Dialect>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn open(
    file: &std::path::Path,
    dialect: Option<Dialect>,
) -> Result<(Session, Rewind), super::anyhow_like::Error> {
    let options = sessiontree_core::OpenOptions {
        dialect,
        ..Default::default()
    };
    let session = Session::open(file, options)?;
    let rewind = Rewind::for_session(&session)?;
    if let Some(undo) = rewind.recovered() {
        let _ = writeln!(
            std::io::stderr().lock(),
            "sessiontree: an interrupted restore was rolled back (the files are as they were before it: snapshot {undo})"
        );
    }
    Ok((session, rewind))
}

/// The point as JSON (the shape of `sessionTree/rewindPoints`).
pub fn point_json(point: &Point) -> Value {
    json!({
        "entryId": point.entry_id,
        "moment": point.moment.as_str(),
        "exact": point.exact,
        "source": point.source.as_str(),
        "by": point.by,
        "takenAt": point.taken_at,
        "snapshot": point.tree,
        "pruned": point.pruned,
    })
}

/// Runs `sessiontree snapshots`.
pub fn run_snapshots(args: SnapshotsArgs) -> CliResult {
    let (session, rewind) = open(&args.file, args.dialect)?;
    let mut out = std::io::stdout().lock();
    let mut pruned = None;
    if args.prune {
        let mut retention = Retention::from_git_config(rewind.workspace());
        if args.keep.is_some() {
            retention.max_snapshots = args.keep;
        }
        if args.max_age_days.is_some() {
            retention.max_age_days = args.max_age_days;
        }
        if retention.is_off() {
            return Err(super::anyhow_like::Error::Usage(
                "retention is off: set git config sessiontree.rewind.maxSnapshots or sessiontree.rewind.maxAgeDays, or pass --keep / --max-age-days".to_owned(),
            ));
        }
        pruned = Some(rewind.prune(&retention, &[&session])?);
    }
    let points = rewind.points(&session)?;
    let listed = points.in_order(&session);
    if args.json {
        let value = json!({
            "workspace": rewind.workspace().toplevel(),
            "points": listed.iter().map(|p| point_json(p)).collect::<Vec<_>>(),
            "pruned": pruned.as_ref().map(|r| r.pruned.clone()),
        });
        writeln!(out, "{value}")?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(report) = &pruned {
        writeln!(
            out,
            "pruned {} snapshot(s); {} kept ({} pinned)",
            report.pruned.len(),
            report.kept,
            report.pinned
        )?;
    }
    if listed.is_empty() {
        writeln!(out, "no rewind points in {}", args.file.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    // Each point's entry named as its `/tree` row names it.
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let model = sessiontree_core::view::TreeModel::new(&session, home.as_deref());
    for point in listed {
        let name = session
            .index_of(&point.entry_id)
            .map(|i| sessiontree_lsp::drawable(&model.entry_text(&session, i)));
        writeln!(
            out,
            "{}  {:<6}  {:<7}  {}  {}{}  {}",
            point.entry_id,
            point.moment.as_str(),
            if point.exact { "exact" } else { "approx" },
            short(&point.tree),
            point.taken_at.as_deref().unwrap_or("-"),
            match (point.pruned, point.source) {
                (true, _) => "  (pruned)".to_owned(),
                (false, sessiontree_rewind::Source::PiRewindHook) =>
                    "  (pi-rewind-hook)".to_owned(),
                _ => String::new(),
            },
            name.unwrap_or_default(),
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn short(tree: &str) -> &str {
    tree.get(..10).unwrap_or(tree)
}

/// Which point was used, in words.
pub fn used(point: &Resolved) -> String {
    let p = &point.point;
    let what = format!(
        "{} ({}, {})",
        p.entry_id,
        p.moment.as_str(),
        if p.exact { "exact" } else { "approximate" }
    );
    if point.is_own() {
        format!("the point of {what}")
    } else {
        format!("the point of {what}, the nearest above {}", point.asked)
    }
}

/// Runs `sessiontree rewind`.
pub fn run_rewind(args: RewindArgs) -> CliResult {
    let (session, rewind) = open(&args.file, args.dialect)?;
    let report = match &args.at {
        Some(entry) => rewind.restore(&session, entry, args.dry_run)?,
        None => rewind.undo(args.dry_run)?,
    };
    print_report(&args, &report)?;
    Ok(ExitCode::SUCCESS)
}

fn print_report(args: &RewindArgs, report: &RestoreReport) -> CliResult {
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = json!({
            "dryRun": report.dry_run,
            "point": report.point.as_ref().map(|p| json!({
                "asked": p.asked,
                "used": point_json(&p.point),
            })),
            "undoSnapshot": report.undo,
            "restoredSnapshot": report.restored,
            "files": report.plan.actions.iter().map(|a| json!({"path": a.path, "action": a.action.as_str()})).collect::<Vec<_>>(),
            "skipped": report.plan.skipped.iter().map(|(p, why)| json!({"path": p, "reason": why})).collect::<Vec<_>>(),
        });
        writeln!(out, "{value}")?;
        return Ok(ExitCode::SUCCESS);
    }
    let verb = if report.dry_run {
        "would restore"
    } else {
        "restored"
    };
    match &report.point {
        Some(point) => writeln!(out, "{verb} the files to {}", used(point))?,
        None => writeln!(out, "{verb} the files as they were before the last restore")?,
    }
    for action in &report.plan.actions {
        writeln!(out, "{:<8} {}", action.action.as_str(), action.path)?;
    }
    for (path, why) in &report.plan.skipped {
        writeln!(out, "left     {path} ({why})")?;
    }
    if report.plan.actions.is_empty() {
        writeln!(out, "no file differs")?;
    }
    if let Some(undo) = &report.undo {
        writeln!(
            out,
            "undo point {}: `sessiontree rewind {} --undo` puts the files back",
            short(undo),
            args.file.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
