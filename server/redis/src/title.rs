//! omp's title beside a Redis session: the JSON `{title?, source?, updatedAt}` in the `title`
//! hash, decoded and laid over the value's title slot exactly as omp reads it.

use serde_json::Value;
use sessiontree_core::title_slot::{TitleSlot, SLOT_BYTES};

/// omp's `decodeTitleMeta`: an object with a string `updatedAt`; `title` kept when a string,
/// `source` when `"auto"` or `"user"`. Anything else is no title.
pub(crate) fn decode(raw: &[u8]) -> Option<TitleSlot> {
    let value: Value = serde_json::from_slice(raw).ok()?;
    let obj = value.as_object()?;
    let updated_at = obj.get("updatedAt")?.as_str()?.to_owned();
    let title = obj
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let source = obj
        .get("source")
        .and_then(Value::as_str)
        .filter(|s| *s == "auto" || *s == "user")
        .map(str::to_owned);
    Some(TitleSlot {
        title,
        source,
        updated_at,
    })
}

/// omp's `encodeTitleMeta` of a slot's title (`JSON.stringify({title, source, updatedAt})`).
pub(crate) fn encode(slot: &TitleSlot) -> String {
    let mut map = serde_json::Map::new();
    map.insert("title".into(), slot.title.as_str().into());
    if let Some(source) = &slot.source {
        map.insert("source".into(), source.as_str().into());
    }
    map.insert("updatedAt".into(), slot.updated_at.as_str().into());
    sessiontree_core::json::to_line(&Value::Object(map))
}

/// omp's `overlayTitleSlotContent`: the first 256 bytes replaced by the slot of `title` (the
/// whole value when it is no longer than the slot).
pub(crate) fn overlay(bytes: &mut Vec<u8>, title: &TitleSlot) {
    let slot = title.to_line();
    if bytes.len() <= SLOT_BYTES {
        *bytes = slot.into_bytes();
    } else {
        bytes[..SLOT_BYTES].copy_from_slice(slot.as_bytes());
    }
}
