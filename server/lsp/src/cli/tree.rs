//! `sessiontree tree`: prints a session's `/tree` list exactly as the agent draws it (ANSI removed)
//! for a filter, a search query, a selected entry and a terminal size; `--json` prints the
//! structured rows instead.

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
    // As the agent shows it: the selector opens on the selection, then the query is typed.
    let view = TreeModel::new(&session, home.as_deref()).typed(&state);
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
