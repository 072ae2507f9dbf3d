//! `sessiontree migrate`: the explicit, safe rewrite of a file its agent would rewrite (a legacy
//! format version; for omp also skipped malformed lines). The original is kept as `<file>.bak`
//! and the new file replaces it atomically; any other file is left byte-identical.

use super::CliResult;
use sessiontree_core::migrate::migrate_file;
use sessiontree_core::Dialect;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree migrate`.
#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The session file.
    pub file: std::path::PathBuf,
    /// Rewrite it as this agent would (`pi` or `omp`) instead of the detected one.
    #[arg(long)]
    pub dialect: Option<Dialect>,
}

/// Runs the subcommand.
pub fn run(args: MigrateArgs) -> CliResult {
    let report = migrate_file(&args.file, args.dialect)?;
    let mut out = std::io::stdout().lock();
    let file = args.file.display();
    if !report.rewritten {
        writeln!(out, "{file} is already current; nothing written")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "migrated {file}")?;
    if let Some(backup) = &report.backup {
        writeln!(out, "backup: {}", backup.display())?;
    }
    if !report.dropped_lines.is_empty() {
        let lines: Vec<String> = report.dropped_lines.iter().map(usize::to_string).collect();
        writeln!(out, "dropped malformed lines: {}", lines.join(", "))?;
    }
    Ok(ExitCode::SUCCESS)
}
