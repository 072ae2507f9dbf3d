//! The omp title slot: a first line of exactly 256 bytes (newline included) holding the session
//! title, so that a rename can overwrite it in place without rewriting the file.

use crate::json;
use serde_json::Value;

/// Size of the slot in bytes, including its newline.
pub const SLOT_BYTES: usize = 256;

/// A parsed title slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TitleSlot {
    /// The title (`""` = none).
    pub title: String,
    /// `"user"` or `"auto"`, when present.
    pub source: Option<String>,
    /// When the title was last set (ISO).
    pub updated_at: String,
}

impl TitleSlot {
    /// Parses a physical first line; `None` when it is not a valid slot (then it is an ordinary line).
    pub fn parse(line: &str) -> Option<TitleSlot> {
        let value: Value = serde_json::from_str(line).ok()?;
        let obj = value.as_object()?;
        if obj.get("type")?.as_str()? != "title" || obj.get("v")?.as_f64()? != 1.0 {
            return None;
        }
        let title = obj.get("title")?.as_str()?.to_owned();
        let updated_at = obj.get("updatedAt")?.as_str()?.to_owned();
        obj.get("pad")?.as_str()?;
        let source = match obj.get("source") {
            None => None,
            Some(Value::String(s)) if s == "user" || s == "auto" => Some(s.clone()),
            Some(_) => return None,
        };
        Some(TitleSlot {
            title,
            source,
            updated_at,
        })
    }

    /// The slot line, exactly [`SLOT_BYTES`] bytes including the newline. A title too long for the
    /// slot is cut at the longest code-point prefix that fits.
    pub fn to_line(&self) -> String {
        let chars: Vec<char> = self.title.chars().collect();
        let (mut low, mut high) = (0usize, chars.len());
        let mut best = 0usize;
        while low <= high {
            let mid = (low + high) / 2;
            let candidate: String = chars[..mid].iter().collect();
            if self.line_with(&candidate, "").len() <= SLOT_BYTES {
                best = mid;
                low = mid + 1;
            } else if mid == 0 {
                break;
            } else {
                high = mid - 1;
            }
        }
        let title: String = chars[..best].iter().collect();
        let unpadded = self.line_with(&title, "");
        let pad = " ".repeat(SLOT_BYTES.saturating_sub(unpadded.len()));
        self.line_with(&title, &pad)
    }

    fn line_with(&self, title: &str, pad: &str) -> String {
        let value = json::object([
            ("type", Some(Value::from("title"))),
            ("v", Some(Value::from(1))),
            ("title", Some(Value::from(title))),
            ("source", self.source.clone().map(Value::from)),
            ("updatedAt", Some(Value::from(self.updated_at.as_str()))),
            ("pad", Some(Value::from(pad))),
        ]);
        format!("{}\n", json::to_line(&value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_is_256_bytes_and_round_trips() {
        let slot = TitleSlot {
            title: "Second name here".into(),
            source: Some("user".into()),
            updated_at: "2025-01-01T00:00:06.000Z".into(),
        };
        let line = slot.to_line();
        assert_eq!(line.len(), SLOT_BYTES);
        assert_eq!(TitleSlot::parse(line.trim_end()), Some(slot));
    }

    #[test]
    fn long_titles_are_cut_by_code_points() {
        let slot = TitleSlot {
            title: "é".repeat(300),
            source: None,
            updated_at: "2025-01-01T00:00:00.000Z".into(),
        };
        let line = slot.to_line();
        assert_eq!(line.len(), SLOT_BYTES);
        let parsed = TitleSlot::parse(line.trim_end()).unwrap();
        assert!(parsed.title.chars().all(|c| c == 'é'));
    }

    #[test]
    fn rejects_lookalikes() {
        assert!(
            TitleSlot::parse(r#"{"type":"title","v":2,"title":"","updatedAt":"x","pad":""}"#)
                .is_none()
        );
        assert!(TitleSlot::parse(
            r#"{"type":"title","v":1,"title":"","source":"bot","updatedAt":"x","pad":""}"#
        )
        .is_none());
        assert!(TitleSlot::parse(r#"{"type":"session","id":"x"}"#).is_none());
    }
}
