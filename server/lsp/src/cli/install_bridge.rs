//! `sessiontree install-bridge --agent pi|omp`: writes the sessiontree bridge into the agent's
//! extensions folder, so an agent started in a terminal can be driven from the editor (a
//! one-time set-up; restart running agents to load it).

use super::anyhow_like::Error;
use super::CliResult;
use sessiontree_lsp::agent::{install, AgentKind};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `sessiontree install-bridge`.
#[derive(Debug, clap::Args)]
pub struct InstallBridgeArgs {
    /// Which agent.
    #[arg(long, value_parser = ["pi", "omp"])]
    pub agent: String,
    /// The extensions folder (default: the agent's own).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: InstallBridgeArgs) -> CliResult {
    let kind = if args.agent == "omp" {
        AgentKind::Omp
    } else {
        AgentKind::Pi
    };
    let dir = args
        .dir
        .or_else(|| install::default_dir(kind))
        .ok_or_else(|| Error::Usage("no home folder: pass --dir".to_owned()))?;
    let (path, written) = install::into(&dir).map_err(Error::Usage)?;
    let mut out = std::io::stdout().lock();
    if written {
        writeln!(out, "installed {}", path.display())?;
    } else {
        writeln!(out, "{} is already installed", path.display())?;
    }
    Ok(ExitCode::SUCCESS)
}
