//! The session header as the agents read it: its format `version`, and omp's title slot (the
//! file's first line) folded into the header's `title` and `titleSource`.

use crate::entry::BodySource;
use serde_json::{Map, Value};

/// omp folds the slot's title into the in-memory header (`""` deletes it).
pub(super) fn fold_slot_into_header(
    header: &mut Map<String, Value>,
    slot: &crate::title_slot::TitleSlot,
) {
    if slot.title.is_empty() {
        header.shift_remove("title");
    } else {
        header.insert("title".into(), slot.title.as_str().into());
    }
    match &slot.source {
        Some(source) => {
            header.insert("titleSource".into(), source.as_str().into());
        }
        None => {
            header.shift_remove("titleSource");
        }
    }
}

/// The header's format `version` (1 when absent).
pub(super) fn file_version(header: &Map<String, Value>) -> u64 {
    header.get("version").and_then(Value::as_u64).unwrap_or(1)
}

/// Whether the file's first line is an omp title slot.
pub(super) fn starts_with_title_slot(source: &BodySource, size: u64) -> bool {
    let head = source
        .read(0, usize::try_from(size.min(1024)).unwrap_or(1024))
        .unwrap_or_default();
    let line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    std::str::from_utf8(line)
        .ok()
        .and_then(crate::title_slot::TitleSlot::parse)
        .is_some()
}
