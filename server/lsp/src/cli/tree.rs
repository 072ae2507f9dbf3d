//! `sessiontree tree` (not built yet).

use super::CliResult;

/// Arguments of `sessiontree tree`.
#[derive(Debug, clap::Args)]
pub struct TreeArgs {
    /// The session file.
    pub file: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(_args: TreeArgs) -> CliResult {
    Err(super::anyhow_like::Error::Usage("not built yet".into()))
}
