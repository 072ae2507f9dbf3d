//! `sessiontree check` (not built yet).

use super::CliResult;

/// Arguments of `sessiontree check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The session file.
    pub file: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(_args: CheckArgs) -> CliResult {
    Err(super::anyhow_like::Error::Usage("not built yet".into()))
}
