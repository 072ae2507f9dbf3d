//! Arbitrary bytes as a session file: the reader (title slot, torn tails, non-UTF-8, junk lines),
//! the in-memory migrations, the index, context building and the row renderer under a view state
//! taken from the first bytes, and the typed read of common message lines against the projection.
//! Nothing may panic, hang or write.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessiontree_core::context::session_context;
use sessiontree_core::view::{compute_rows, FilterMode, ViewState};
use sessiontree_core::{OpenOptions, Session};
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let (state, file) = data.split_at(data.len().min(4));
    // The typed read of common message lines answers as the projection does.
    for line in String::from_utf8_lossy(file).split('\n') {
        if let Err(diff) = sessiontree_core::entry::check_against_projection(line) {
            panic!("{line}\n{diff}");
        }
    }
    let pick = |i: usize| state.get(i).copied().unwrap_or(0) as usize;
    let mut tmp = tempfile_in_shm();
    let cleanup = Cleanup(tmp.0.clone());
    tmp.1.write_all(file).unwrap();
    let Ok(session) = Session::open(&tmp.0, OpenOptions::default()) else {
        drop(cleanup);
        return;
    };
    let _ = session_context(&session, None).llm_messages();
    let _ = session.tree();
    let filter = [
        FilterMode::Default,
        FilterMode::NoTools,
        FilterMode::UserOnly,
        FilterMode::LabeledOnly,
        FilterMode::All,
    ][pick(0) % 5];
    let selected = session
        .entries()
        .get(pick(1) % session.entries().len().max(1))
        .and_then(|e| e.id().map(str::to_owned));
    let view = ViewState {
        filter,
        search: String::from_utf8_lossy(&state[..state.len().min(1)]).into_owned(),
        selected,
        width: pick(2),
        height: pick(3),
    };
    let _ = compute_rows(&session, &view, None);
    assert_eq!(std::fs::read(&tmp.0).unwrap(), file, "reading wrote");
    drop(cleanup);
});

/// Removes the file when dropped (also when an assertion fails).
struct Cleanup(std::path::PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A fresh file in a RAM-backed folder when there is one.
fn tempfile_in_shm() -> (std::path::PathBuf, std::fs::File) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        std::path::PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let path = dir.join(format!(
        "sessiontree-fuzz-{}-{}.jsonl",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let file = std::fs::File::create(&path).unwrap();
    (path, file)
}
