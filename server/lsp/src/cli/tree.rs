//! `sessiontree tree`: prints a session's `/tree` list exactly as the agent draws it (ANSI removed)
//! for a filter, a search query, a selected entry, folded entries and a terminal size; `--json`
//! prints the structured rows instead.

use super::CliResult;
use sessiontree_core::view::{FilterMode, TreeModel, ViewState};
use sessiontree_core::Dialect;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree tree`.
#[derive(Debug, clap::Args)]
pub struct TreeArgs {
    /// The session file.
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub store: super::store::StoreArgs,
    /// Filter mode: default, no-tools, user-only, labeled-only or all.
    #[arg(long, default_value = "default")]
    pub filter: FilterMode,
    /// Search query, typed into the selector key by key.
    #[arg(long, default_value = "")]
    pub search: String,
    /// Entry id to select (default: the leaf, or its nearest visible ancestor).
    #[arg(long)]
    pub select: Option<String>,
    /// Terminal width (default: $COLUMNS, else 120).
    #[arg(long)]
    pub width: Option<usize>,
    /// Terminal height.
    #[arg(long, default_value_t = 40)]
    pub height: usize,
    /// Read the file with this agent's rules (`pi` or `omp`) instead of detecting them.
    #[arg(long)]
    pub dialect: Option<Dialect>,
    /// Fold an entry (repeatable): its descendants are hidden, as pi's `/tree` folds them
    /// (omp sessions fold by the same rule, with no marker drawn).
    #[arg(long = "fold", value_name = "ID")]
    pub folded: Vec<String>,
    /// Print the structured rows as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs the subcommand.
pub fn run(args: TreeArgs) -> CliResult {
    super::inspect::quiet_on_closed_pipe(print(args))
}

fn print(args: TreeArgs) -> CliResult {
    let session = super::inspect::open(&args.file, args.dialect, &args.store)?;
    let width = args
        .width
        .or_else(|| {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|c| c.trim().parse().ok())
        })
        .filter(|&w| w > 0)
        .unwrap_or(120);
    let state = ViewState {
        filter: args.filter,
        search: args.search,
        selected: args.select,
        width,
        height: args.height,
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let model = TreeModel::new(&session, home.as_deref());
    let view = if args.folded.is_empty() {
        // As the agent shows it: the selector opens on the selection, then the query is typed.
        model.typed(&state)
    } else {
        // Folds are made in the list as it shows (pi clears them when the query changes).
        model.rows_folded(&state, &args.folded)
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = serde_json::to_string_pretty(&view)
            .map_err(|e| super::anyhow_like::Error::Usage(e.to_string()))?;
        writeln!(out, "{text}")?;
    } else {
        for line in view.text_lines() {
            writeln!(out, "{line}")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
