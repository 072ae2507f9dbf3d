//! Session files for tests that compare two ways of computing the same thing.

/// Session files the tests can read: generated ones of both dialects (branches, equal and
/// out-of-order timestamps) and the `.jsonl` files of [`fixture_files`].
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
    files.extend(
        fixture_files()
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl")),
    );
    files
}

/// Every file under the conformance fixtures (and `$SESSIONTREE_CONFORMANCE_DIR`) and the load
/// fuzz seeds.
pub(crate) fn fixture_files() -> Vec<std::path::PathBuf> {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/load");
    sessiontree_testkit::fixture_files(&[&seeds])
}

/// A generated session of `entries` entries, opened from `dir`.
pub(crate) fn generated_session(
    dir: &std::path::Path,
    dialect: crate::dialect::Dialect,
    entries: usize,
    seed: u64,
) -> crate::session::Session {
    let path = dir.join(format!("{dialect:?}-{entries}-{seed}.jsonl"));
    let options = crate::synth::SynthOptions {
        dialect,
        entries,
        seed,
    };
    crate::synth::generate_file(options, &path).unwrap_or_else(|e| panic!("{e}"));
    crate::session::Session::open(&path, crate::session::OpenOptions::default())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A deterministic xorshift stream from `seed`: each call gives a number below `n`.
pub(crate) fn numbers(seed: u64) -> impl FnMut(usize) -> usize {
    let mut seed = seed;
    move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

/// Appends user messages with `text(entry count)` until the session holds `until` entries, every
/// 50th labeled "Config Parse" (a label puts an entry's search string off the column path).
pub(crate) fn append_labeled(
    session: &mut crate::session::Session,
    until: usize,
    text: impl Fn(usize) -> String,
) {
    while session.entries().len() < until {
        let n = session.entries().len();
        let id = session
            .append_message(serde_json::json!({"role": "user", "content": text(n)}))
            .unwrap_or_else(|e| panic!("{e}"));
        if n % 50 == 0 {
            session
                .append_label_change(&id, Some("Config Parse"))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

/// A session whose label line between two messages is not UTF-8 (its label is the byte 0xff); the
/// second message's text has an escaped and a written `é`.
pub(crate) fn session_with_a_line_not_utf8(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("mixed.jsonl");
    let mut bytes = br#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"h\u00e9","timestamp":1}}
"#
    .to_vec();
    bytes.extend_from_slice(
        b"{\"type\":\"label\",\"id\":\"l\",\"parentId\":\"a\",\"label\":\"\xff\"}\n",
    );
    bytes.extend_from_slice(r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"\u00e9 é"}],"timestamp":2}}
"#.as_bytes());
    std::fs::write(&file, bytes).unwrap_or_else(|e| panic!("{e}"));
    file
}
