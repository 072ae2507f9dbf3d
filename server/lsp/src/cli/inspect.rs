//! `sessiontree inspect` (not built yet).

use super::CliResult;

/// Arguments of `sessiontree inspect`.
#[derive(Debug, clap::Args)]
pub struct InspectArgs {
    /// The session file.
    pub file: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(_args: InspectArgs) -> CliResult {
    Err(super::anyhow_like::Error::Usage("not built yet".into()))
}
