//! The `sessiontree` binary: the language server (`sessiontree lsp`) and the command-line tools
//! (`inspect`, `check`, `tree`, `migrate`, `continue`, `install-bridge`, `snapshots`, `rewind`,
//! `rewind-point`).

mod cli;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc: opening a session allocates and frees many small values on two threads, where it is
/// markedly faster than the system allocator (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Session trees of the pi-family coding agents, for editors and shells.
#[derive(Debug, Parser)]
#[command(name = "sessiontree", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the language server over stdio (the editors start this).
    Lsp,
    /// Show a session: header, name, leaf, tree, branch, labels, context (`--json` for everything).
    Inspect(cli::inspect::InspectArgs),
    /// Print the problems found in a session file; exits non-zero when there are errors.
    Check(cli::check::CheckArgs),
    /// Print the `/tree` view as the agent shows it.
    Tree(cli::tree::TreeArgs),
    /// Rewrite a legacy or damaged session file in the current format (keeps `<file>.bak`).
    Migrate(cli::migrate::MigrateArgs),
    /// List the session's rewind points (entries whose workspace files can be restored).
    Snapshots(cli::rewind::SnapshotsArgs),
    /// Restore the session's workspace files to an entry's point (`--at`), or undo the last restore.
    Rewind(cli::rewind::RewindArgs),
    /// Record a rewind point from inside the agent (the bridge runs it): `take` a snapshot now,
    /// `bind` it to an entry once written.
    RewindPoint(cli::rewind_point::RewindPointArgs),
    /// Write a realistic synthetic session (for benchmarks), deterministic by seed.
    Generate(cli::generate::GenerateArgs),
    /// Continue a session with its real agent from an entry: prints the answer as it streams.
    Continue(cli::continue_cmd::ContinueArgs),
    /// Install the sessiontree bridge into an agent's extensions folder (for agents in a terminal).
    InstallBridge(cli::install_bridge::InstallBridgeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Lsp => {
            // The server watches the work trees it compares and snapshots, so git looks only at
            // the files that changed (the CLI, which stages once, looks at every file).
            sessiontree_rewind::watch_work_trees(true);
            return match sessiontree_lsp::run_stdio() {
                Ok(true) => ExitCode::SUCCESS,
                // `exit` without `shutdown` (or a closed input): LSP says exit code 1.
                Ok(false) => ExitCode::from(1),
                Err(err) => {
                    use std::io::Write as _;
                    let _ = writeln!(std::io::stderr(), "sessiontree lsp: {err}");
                    ExitCode::from(2)
                }
            };
        }
        Command::Inspect(args) => cli::inspect::run(args),
        Command::Check(args) => cli::check::run(args),
        Command::Tree(args) => cli::tree::run(args),
        Command::Migrate(args) => cli::migrate::run(args),
        Command::Generate(args) => cli::generate::run(args),
        Command::Continue(args) => cli::continue_cmd::run(args),
        Command::InstallBridge(args) => cli::install_bridge::run(args),
        Command::Snapshots(args) => cli::rewind::run_snapshots(args),
        Command::Rewind(args) => cli::rewind::run_rewind(args),
        Command::RewindPoint(args) => cli::rewind_point::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            cli::report_error(&err);
            ExitCode::from(2)
        }
    }
}
