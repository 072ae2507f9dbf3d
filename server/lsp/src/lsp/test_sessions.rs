//! Sessions for the unit tests: generated, written to a folder and opened.

use sessiontree_core::synth::{generate_file, SynthOptions};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::path::Path;

/// A generated session of `entries` entries in `dialect`, written to `dir` and opened.
pub(crate) fn generated(dir: &Path, dialect: Dialect, entries: usize, seed: u64) -> Session {
    let file = dir.join(format!("{dialect:?}-{entries}-{seed}.jsonl"));
    let options = SynthOptions {
        dialect,
        entries,
        seed,
    };
    generate_file(options, &file).unwrap_or_else(|e| panic!("{e}"));
    Session::open(&file, OpenOptions::with_dialect(dialect)).unwrap_or_else(|e| panic!("{e}"))
}
