//! Session files for tests that compare two ways of computing the same thing.

/// Session files the tests can read: generated ones of both dialects (branches, equal and
/// out-of-order timestamps), the conformance fixtures and the fuzz seeds.
pub(crate) fn sample_sessions(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dialect in [crate::dialect::Dialect::Pi, crate::dialect::Dialect::Omp] {
        for seed in 1..4 {
            let path = dir.join(format!("{dialect:?}-{seed}.jsonl"));
            let options = crate::synth::SynthOptions {
                dialect,
                entries: 2000,
                seed,
            };
            crate::synth::generate_file(options, &path).unwrap_or_else(|e| panic!("{e}"));
            files.push(path);
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![
        root.join("../../../shared/conformance"),
        root.join("fuzz/seeds/load"),
    ];
    if let Some(extra) = std::env::var_os("SESSIONTREE_CONFORMANCE_DIR") {
        dirs.push(extra.into());
    }
    while let Some(dir) = dirs.pop() {
        for item in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = item.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files
}
