//! `sessiontree inspect`: a session as the engine sees it. `--json` prints one object with the
//! fields of the conformance fixtures' `reloaded` snapshot (`sessionId`, `header`, `sessionName`,
//! `leafId`, `entryIds`, `tree`, `branch`, `branchOf`, `children`, `labels`,
//! `collectForBranchSummary`, and `context` where the engine builds it) plus `dialect` and
//! `diagnostics`; without it, a short readable summary.

use super::CliResult;
use serde_json::Value;
use sessiontree_core::diagnostics::Severity;
use sessiontree_core::snapshot;
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// The session file (with `--store`, the session's path as omp names it).
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub store: super::store::StoreArgs,
    /// Read the file with this agent's rules (`pi` or `omp`) instead of detecting them.
    #[arg(long)]
    pub dialect: Option<Dialect>,
    /// Move the leaf to this entry before answering (nothing is written).
    #[arg(long)]
    pub leaf: Option<String>,
    /// Print everything as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// With `--json`: a search query whose `/tree` rows join `treeRender.searches` (repeatable).
    #[arg(long = "search", value_name = "QUERY")]
    pub searches: Vec<String>,
    /// With `--json`: the width `treeRender` is drawn at (default 120, the fixtures' size).
    #[arg(long)]
    pub width: Option<usize>,
    /// With `--json`: the terminal height `treeRender` is drawn for (default 40).
    #[arg(long)]
    pub height: Option<usize>,
}

/// Opens a session file read-only, with a forced dialect or the detected one.
pub(crate) fn open(
    file: &std::path::Path,
    dialect: Option<Dialect>,
    store: &super::store::StoreArgs,
) -> Result<Session, super::anyhow_like::Error> {
    store.open(
        file,
        OpenOptions {
            dialect,
            ..OpenOptions::default()
        },
    )
}

/// A reader that stopped reading (`| head`) is not an error.
pub(crate) fn quiet_on_closed_pipe(result: CliResult) -> CliResult {
    match result {
        Err(super::anyhow_like::Error::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::SUCCESS)
        }
        other => other,
    }
}

/// The `--json` object: the fixture snapshot (whole tree, any depth) plus `treeRender` (every
/// filter and each search, paths under `$HOME` shortened), `dialect` and `diagnostics`. Write it
/// with `snapshot::write_json` and free it with `snapshot::drop_deep`: a long conversation nests as
/// deep as it is long.
pub fn inspect_json(session: &Session, args: &InspectArgs) -> Value {
    let mut snap = snapshot::snapshot_with_depth(session, usize::MAX);
    if let Some(map) = snap.as_object_mut() {
        map.insert(
            "treeRender".into(),
            sessiontree_core::view::tree_render_for_inspect(
                session,
                &args.searches,
                args.width,
                args.height,
            ),
        );
        map.insert("dialect".into(), session.dialect().as_str().into());
        map.insert(
            "diagnostics".into(),
            serde_json::to_value(session.diagnostics()).unwrap_or(Value::Null),
        );
    }
    snap
}

/// Runs the subcommand.
pub fn run(args: InspectArgs) -> CliResult {
    quiet_on_closed_pipe(run_inner(args))
}

fn run_inner(args: InspectArgs) -> CliResult {
    let mut session = open(&args.file, args.dialect, &args.store)?;
    if let Some(leaf) = &args.leaf {
        if session.branch(leaf).is_err() {
            return Err(super::anyhow_like::Error::Usage(format!(
                "--leaf {leaf}: no entry with this id in {}",
                args.file.display()
            )));
        }
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = inspect_json(&session, &args);
        let mut buffered = std::io::BufWriter::new(&mut out);
        snapshot::write_json(&value, &mut buffered)?;
        buffered.write_all(b"\n")?;
        buffered.flush()?;
        drop(buffered);
        snapshot::drop_deep(value);
    } else {
        summary(&mut out, &args.file, &session)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn summary(out: &mut impl Write, file: &std::path::Path, session: &Session) -> std::io::Result<()> {
    writeln!(
        out,
        "name:        {}",
        session.session_name().unwrap_or("(none)")
    )?;
    writeln!(out, "dialect:     {}", session.dialect())?;
    writeln!(out, "path:        {}", file.display())?;
    writeln!(out, "session:     {}", session.session_id())?;
    if session.file_version() < 3 {
        writeln!(
            out,
            "version:     {} (migrated in memory; `sessiontree migrate` writes it)",
            session.file_version()
        )?;
    }
    writeln!(out, "entries:     {}", session.entries().len())?;
    match session.leaf_id() {
        Some(leaf) => writeln!(out, "leaf:        {leaf} ({})", describe(session, leaf))?,
        None => writeln!(out, "leaf:        (none)")?,
    }
    const SHOWN_LABELS: usize = 10;
    let total_labels = session.labels().count();
    let mut labels: Vec<String> = session
        .labels()
        .take(SHOWN_LABELS)
        .map(|(target, state)| format!("{target} [{}]", state.label))
        .collect();
    if total_labels > SHOWN_LABELS {
        labels.push(format!("… {} more", total_labels - SHOWN_LABELS));
    }
    if labels.is_empty() {
        writeln!(out, "labels:      (none)")?;
    } else {
        writeln!(out, "labels:      {total_labels}: {}", labels.join(", "))?;
    }
    let branch = session.branch_path(None);
    writeln!(out, "branch:      {} entries", branch.len())?;
    const HEAD: usize = 5;
    const TAIL: usize = 10;
    for (n, &index) in branch.iter().enumerate() {
        if branch.len() > HEAD + TAIL + 1 && n == HEAD {
            writeln!(out, "  … {} more", branch.len() - HEAD - TAIL)?;
        }
        if branch.len() > HEAD + TAIL + 1 && n >= HEAD && n < branch.len() - TAIL {
            continue;
        }
        let Some(entry) = session.entry_at(index) else {
            continue;
        };
        let id = entry.id().unwrap_or("-");
        writeln!(out, "  {id}  {}", describe(session, id))?;
    }
    let diagnostics = session.diagnostics();
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    writeln!(
        out,
        "diagnostics: {} ({errors} errors, {warnings} warnings; `sessiontree check` lists them)",
        diagnostics.len()
    )?;
    Ok(())
}

/// `type[/role]: first words`, for one entry.
fn describe(session: &Session, id: &str) -> String {
    let Some(entry) = session.entry(id) else {
        return "unknown".to_owned();
    };
    let value = entry.json();
    let mut head = entry.kind().to_owned();
    let text = match entry.kind() {
        "message" => {
            let message = value.get("message").cloned().unwrap_or(Value::Null);
            if let Some(role) = message.get("role").and_then(Value::as_str) {
                head = format!("{head}/{role}");
            }
            message
                .get("command")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| message.get("content").map(content_text))
                .unwrap_or_default()
        }
        "custom_message" => value.get("content").map(content_text).unwrap_or_default(),
        "branch_summary" | "compaction" => value
            .get("summary")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        "label" => value
            .get("label")
            .and_then(Value::as_str)
            .unwrap_or("(cleared)")
            .to_owned(),
        "session_info" => value
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        "title_change" => value
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        "model_change" => value
            .get("model")
            .or_else(|| value.get("modelId"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        "thinking_level_change" => value
            .get("thinkingLevel")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    };
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return head;
    }
    let short: String = text.chars().take(60).collect();
    let ellipsis = if text.chars().count() > 60 { "…" } else { "" };
    format!("{head}: {short}{ellipsis}")
}

fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
