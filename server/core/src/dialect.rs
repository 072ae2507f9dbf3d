//! The two agents whose files we read and write.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which agent's rules a session follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// Upstream pi (`@mariozechner/pi-coding-agent`): header first.
    Pi,
    /// oh-my-pi (`@oh-my-pi/pi-coding-agent`): a 256-byte title slot, then the header.
    #[default]
    Omp,
}

impl Dialect {
    /// The name used in files, flags and the protocol.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Pi => "pi",
            Dialect::Omp => "omp",
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pi" => Ok(Dialect::Pi),
            "omp" => Ok(Dialect::Omp),
            other => Err(format!(
                "unknown dialect `{other}` (expected `pi` or `omp`)"
            )),
        }
    }
}

/// Entry types only oh-my-pi writes; their presence marks a file as omp's.
pub const OMP_ONLY_TYPES: &[&str] = &[
    "title_change",
    "service_tier_change",
    "mode_change",
    "ttsr_injection",
    "reset_boundary",
    "session_init",
    "model_usage",
    "credential_pin",
];
