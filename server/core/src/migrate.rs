//! The explicit, atomic `migrate` that writes a legacy or damaged file in the current format
//! (temp file, `<file>.bak`, rename); the migrations themselves run in memory on every open
//! (`session/versions.rs`).

use crate::dialect::Dialect;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// What an explicit migrate did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// Whether the file was rewritten (false: it already was in the current form).
    pub rewritten: bool,
    /// The backup of the original bytes, when rewritten.
    pub backup: Option<PathBuf>,
    /// Lines of the original that the migrated file no longer holds (malformed ones), by number.
    pub dropped_lines: Vec<usize>,
}

/// Rewrites a session file in the current format, as its agent would on its next full write:
/// migrated entries, no malformed lines, omp's title slot. The original is kept as `<file>.bak`
/// and the new file replaces it atomically (temp file + rename), so an interruption leaves either
/// the old file or the new one.
///
/// Only files the agent itself would rewrite are touched: a legacy version (both agents), skipped
/// malformed lines (omp rewrites without them; pi never does), and a `null` line (both agents fail
/// to open such a file). Anything else is reported as already current and left byte-identical.
pub fn migrate_file(path: &Path, dialect: Option<Dialect>) -> Result<MigrateReport> {
    use crate::diagnostics::DiagnosticKind as K;
    let options = crate::session::OpenOptions {
        dialect,
        ..Default::default()
    };
    let session = crate::Session::open(path, options)?;
    let original = std::fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    let dropping = |kind: K| match kind {
        K::NullLine => true,
        K::MalformedLine => session.dialect() == Dialect::Omp,
        _ => false,
    };
    let needed =
        session.file_version() < 3 || session.diagnostics().iter().any(|d| dropping(d.kind));
    let contents = session.canonical_contents()?;
    if !needed || contents.as_bytes() == original.as_slice() {
        return Ok(MigrateReport {
            rewritten: false,
            backup: None,
            dropped_lines: Vec::new(),
        });
    }
    let dropped_lines: Vec<usize> = session
        .diagnostics()
        .iter()
        .filter(|d| matches!(d.kind, K::MalformedLine | K::NullLine))
        .filter_map(|d| d.line)
        .collect();
    // Another writer (an agent appending, or mid-line) must not lose a line to the rename.
    let busy = || Error::WriterBusy {
        path: path.to_path_buf(),
    };
    if let crate::session::FileState::Written { len, pending, .. } = session.file_state() {
        if *pending > 0 || *len != original.len() as u64 {
            return Err(busy());
        }
    }
    let backup = write_backup(path, &original)?;
    let temp = sibling(path, ".migrating");
    std::fs::write(&temp, contents.as_bytes()).map_err(|e| Error::io("cannot write", &temp, e))?;
    sync_path(&temp)?;
    let now = std::fs::metadata(path).map_err(|e| Error::io("cannot read", path, e))?;
    if now.len() != original.len() as u64 {
        let _ = std::fs::remove_file(&temp);
        return Err(busy());
    }
    std::fs::rename(&temp, path).map_err(|e| Error::io("cannot replace", path, e))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(MigrateReport {
        rewritten: true,
        backup: Some(backup),
        dropped_lines,
    })
}

/// Writes the original bytes to `<file>.bak`, or `<file>.bak.1`, `.bak.2`, … when an earlier
/// backup exists: a backup is never overwritten.
fn write_backup(path: &Path, original: &[u8]) -> Result<PathBuf> {
    use std::io::Write;
    for n in 0u32.. {
        let backup = if n == 0 {
            sibling(path, ".bak")
        } else {
            sibling(path, &format!(".bak.{n}"))
        };
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&backup)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("cannot write the backup", &backup, e)),
        };
        file.write_all(original)
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io("cannot write the backup", &backup, e))?;
        return Ok(backup);
    }
    Err(Error::InvalidInput("no free backup name".into()))
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

fn sync_path(path: &Path) -> Result<()> {
    std::fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| Error::io("cannot sync", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;
    const ENTRY: &str = r#"{"type":"custom","customType":"x","id":"aaaa0001","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z"}"#;

    fn file_with(lines: &[&str]) -> (tempfile::TempDir, PathBuf, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, &text).unwrap();
        (dir, path, text)
    }

    #[test]
    fn a_null_line_is_dropped_in_both_dialects_with_a_backup() {
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let (_dir, path, original) = file_with(&[HEADER, "null", ENTRY]);
            let report = migrate_file(&path, Some(dialect)).unwrap();
            assert!(report.rewritten);
            assert_eq!(report.dropped_lines, vec![2]);
            let backup = report.backup.unwrap();
            assert_eq!(std::fs::read_to_string(backup).unwrap(), original);
            let now = std::fs::read_to_string(&path).unwrap();
            assert!(!now.contains("null\n") && now.contains(ENTRY));
        }
    }

    #[test]
    fn malformed_lines_are_rewritten_only_for_omp() {
        let (_dir, path, original) = file_with(&[HEADER, "not json", ENTRY]);
        let report = migrate_file(&path, Some(Dialect::Pi)).unwrap();
        assert!(!report.rewritten && report.backup.is_none());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        let report = migrate_file(&path, Some(Dialect::Omp)).unwrap();
        assert!(report.rewritten);
        assert_eq!(report.dropped_lines, vec![2]);
        let now = std::fs::read_to_string(&path).unwrap();
        assert!(now.starts_with(r#"{"type":"title","v":1,"title":"""#));
        assert!(!now.contains("not json"));
    }

    #[test]
    fn an_earlier_backup_is_never_overwritten() {
        let (dir, path, original) = file_with(&[HEADER, "null", ENTRY]);
        std::fs::write(dir.path().join("s.jsonl.bak"), "older backup").unwrap();
        let report = migrate_file(&path, Some(Dialect::Pi)).unwrap();
        assert_eq!(
            report.backup.as_deref(),
            Some(dir.path().join("s.jsonl.bak.1").as_path())
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.jsonl.bak")).unwrap(),
            "older backup"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.jsonl.bak.1")).unwrap(),
            original
        );
    }

    #[test]
    fn a_line_being_written_blocks_the_migrate() {
        let (_dir, path, _) = file_with(&[HEADER, "null", ENTRY]);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(r#"{"type":"custom","#);
        std::fs::write(&path, &text).unwrap();
        assert!(matches!(
            migrate_file(&path, Some(Dialect::Pi)),
            Err(Error::WriterBusy { .. })
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    #[test]
    fn a_current_file_is_left_alone() {
        let (dir, path, original) = file_with(&[HEADER, ENTRY]);
        for dialect in [Dialect::Pi, Dialect::Omp] {
            let report = migrate_file(&path, Some(dialect)).unwrap();
            assert!(!report.rewritten);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
        assert!(!dir.path().join("s.jsonl.bak").exists());
    }
}
