//! `sessiontree check`: the problems found in a session file, one per line as
//! `FILE:LINE: severity: message` (or a JSON array with `--json`). Exits 1 when any is an error,
//! 0 otherwise; a file that cannot be opened at all (missing, unreadable, no session header) is
//! reported by `main` with the engine's typed error and exit code 2.

use super::CliResult;
use sessiontree_core::diagnostics::Severity;
use sessiontree_core::session::FileState;
use sessiontree_core::Dialect;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The session file.
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub store: super::store::StoreArgs,
    /// Read the file with this agent's rules (`pi` or `omp`) instead of detecting them.
    #[arg(long)]
    pub dialect: Option<Dialect>,
    /// Print the diagnostics as a JSON array.
    #[arg(long)]
    pub json: bool,
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information => "info",
    }
}

/// Runs the subcommand.
pub fn run(args: CheckArgs) -> CliResult {
    super::inspect::quiet_on_closed_pipe(run_inner(args))
}

fn run_inner(args: CheckArgs) -> CliResult {
    let session = super::inspect::open(&args.file, args.dialect, &args.store)?;
    let mut diagnostics = session.diagnostics().to_vec();
    // In file order (the reader and the integrity checks find problems in separate passes).
    diagnostics.sort_by_key(|d| d.line.unwrap_or(0));
    let diagnostics = diagnostics.as_slice();
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = serde_json::to_value(diagnostics).unwrap_or(serde_json::Value::Null);
        writeln!(out, "{value}")?;
    } else {
        let file = args.file.display();
        for d in diagnostics {
            match d.line {
                Some(line) => writeln!(
                    out,
                    "{file}:{line}: {}: {}",
                    severity(d.severity),
                    d.message
                )?,
                None => writeln!(out, "{file}: {}: {}", severity(d.severity), d.message)?,
            }
        }
    }
    if let FileState::Written { pending, .. } = session.file_state() {
        if *pending > 0 && !args.json {
            writeln!(
                out,
                "{}: info: the last {pending} bytes have no newline yet; held back until the line is complete",
                args.file.display()
            )?;
        }
    }
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Ok(ExitCode::from(1))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}
