//! Command-line subcommands. Each writes to stdout through `std::io::Write` and returns an exit
//! code; errors are reported on stderr by `main`.

pub mod check;
pub mod continue_cmd;
pub mod generate;
pub mod inspect;
pub mod install_bridge;
pub mod migrate;
pub mod rewind;
pub mod rewind_point;
pub mod store;
pub mod tree;

use std::io::Write;

/// Prints an error and its causes to stderr.
pub fn report_error(err: &anyhow_like::Error) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "sessiontree: {err}");
}

/// The CLI's error type: an engine error or a message.
pub mod anyhow_like {
    /// Anything a subcommand can fail with.
    #[derive(Debug, thiserror::Error)]
    pub enum Error {
        /// From the engine.
        #[error(transparent)]
        Engine(#[from] sessiontree_core::Error),
        /// From the rewind store.
        #[error(transparent)]
        Rewind(#[from] sessiontree_rewind::Error),
        /// Writing output failed.
        #[error("cannot write output: {0}")]
        Output(#[from] std::io::Error),
        /// A usage problem.
        #[error("{0}")]
        Usage(String),
    }
}

/// Result of a subcommand.
pub type CliResult = Result<std::process::ExitCode, anyhow_like::Error>;
