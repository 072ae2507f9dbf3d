//! `sessiontree migrate` (not built yet).

use super::CliResult;

/// Arguments of `sessiontree migrate`.
#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The session file.
    pub file: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(_args: MigrateArgs) -> CliResult {
    Err(super::anyhow_like::Error::Usage("not built yet".into()))
}
