//! What a list of sessions shows of one session file: its dialect, id, working folder, the session
//! it was forked from, its name, its first user message and how many entries it holds.
//!
//! Read by opening the file as [`Session::open`] does (without the view's facts), so a list says
//! what opening the file says: the same dialect (a title slot, or an entry only omp writes anywhere
//! in the file, means omp), the same name (omp's title slot over the header's title; pi's last
//! `session_info`, trimmed as JavaScript trims), and only files the engine opens as sessions.

use crate::describe;
use crate::dialect::Dialect;
use crate::session::{OpenOptions, Session, SessionStore};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

/// Characters of the first user message a listing keeps (its first line).
const FIRST_MESSAGE_CHARS: usize = 120;

/// One session file as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The file's dialect.
    pub dialect: Dialect,
    /// The header's `id`.
    pub session_id: String,
    /// The header's `cwd` (`""` when it has none).
    pub cwd: String,
    /// The header's `parentSession` (the file a `/branch` fork was made from), when not empty.
    pub parent_session: Option<String>,
    /// The session's name, as [`Session::session_name`] gives it.
    pub name: Option<String>,
    /// The first line of the first user message (cut to 120 characters, `…` last).
    pub first_user_message: Option<String>,
    /// Entries after the header.
    pub entry_count: usize,
    /// When the file was last modified, in milliseconds since the epoch (0 when unknown).
    pub modified_ms: u64,
}

impl Listing {
    /// The listing of an open session (`modified_ms` 0: a session in memory has no file time).
    pub fn of(session: &Session) -> Listing {
        let first_user_message = session
            .entries()
            .iter()
            .find(|e| e.kind() == "message" && e.role() == Some("user"))
            .map(|e| {
                let message = e.json();
                let content = message.get("message").and_then(|m| m.get("content"));
                describe::one_line(&describe::content_text(content), FIRST_MESSAGE_CHARS)
            });
        Listing {
            dialect: session.dialect(),
            session_id: session.session_id().to_owned(),
            cwd: session.cwd().to_owned(),
            parent_session: session
                .header()
                .get("parentSession")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
            name: session.session_name().map(str::to_owned),
            first_user_message,
            entry_count: session.entries().len(),
            modified_ms: 0,
        }
    }
}

/// The listing of the session file at `path`; `None` when the engine does not open it as a session
/// (not a regular file, unreadable, no session header).
pub fn read(path: &Path) -> Option<Listing> {
    let modified = std::fs::metadata(path).ok()?.modified().ok();
    let session = Session::open(
        path,
        OpenOptions {
            view_facts: false,
            ..OpenOptions::default()
        },
    )
    .ok()?;
    let modified_ms = modified
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    Some(Listing {
        modified_ms,
        ..Listing::of(&session)
    })
}

/// The listing of a session file's whole text (a store's value), modified at `modified_ms`;
/// `None` when it is not a session. `path` names it.
pub fn from_bytes(path: &Path, bytes: Vec<u8>, modified_ms: u64) -> Option<Listing> {
    let options = OpenOptions {
        view_facts: false,
        ..OpenOptions::default()
    };
    let session = Session::open_bytes(path, bytes, options).ok()?;
    Some(Listing {
        modified_ms,
        ..Listing::of(&session)
    })
}

/// The listing of a session a store keeps, whose value is `size` bytes long and begins with
/// `head` (read as [`SessionStore::head`] reads it), modified at `modified_ms`; `None` when it is
/// not a session or cannot be read. Read as the file of the same bytes is read, by byte range:
/// the value is scanned once (a value no longer than `head` not at all) and only the first user
/// message's body is read back; the text is never held whole.
pub fn from_store(
    store: Arc<dyn SessionStore>,
    size: u64,
    head: Vec<u8>,
    modified_ms: u64,
) -> Option<Listing> {
    let options = OpenOptions {
        view_facts: false,
        ..OpenOptions::default()
    };
    let session = Session::scan_store(&store, size, head, options).ok()?;
    Some(Listing {
        modified_ms,
        ..Listing::of(&session)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    const USER: &str = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"  Plan a trip\nto Rome","timestamp":1}}"#;

    fn listing_of(lines: &[&str]) -> Option<Listing> {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("s.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&file, text).expect("write");
        read(&file)
    }

    #[test]
    fn a_pi_session_is_listed_with_its_last_name_and_first_user_message() {
        let name = |n: &str, id: &str| {
            format!(
                r#"{{"type":"session_info","id":"{id}","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","name":"{n}"}}"#
            )
        };
        let (first, second) = (name("first", "a2"), name("  second ", "a3"));
        let listing = listing_of(&[HEADER, USER, &first, &second]).expect("a session");
        assert_eq!(listing.dialect, Dialect::Pi);
        assert_eq!(listing.session_id, "s1");
        assert_eq!(listing.cwd, "/p");
        assert_eq!(listing.parent_session, None);
        assert_eq!(listing.name.as_deref(), Some("second"));
        assert_eq!(listing.first_user_message.as_deref(), Some("Plan a trip"));
        assert_eq!(listing.entry_count, 3);
        assert!(listing.modified_ms > 0);
    }

    /// JavaScript's `trim` keeps U+0085: the agents show `\u0085named`, and so does the list.
    #[test]
    fn a_pi_name_is_trimmed_as_javascript_trims() {
        let info = r#"{"type":"session_info","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","name":"\u0085named\ufeff "}"#;
        let listing = listing_of(&[HEADER, USER, info]).expect("a session");
        assert_eq!(listing.name.as_deref(), Some("\u{85}named"));
    }

    /// An entry only omp writes, even late in the file, makes the file omp's: its name is the
    /// header's title, not a `session_info`'s.
    #[test]
    fn an_omp_only_entry_anywhere_means_omp() {
        let header = HEADER.replace(r#""cwd":"/p""#, r#""cwd":"/p","title":"Titled""#);
        let info = r#"{"type":"session_info","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","name":"pi name"}"#;
        let mode = r#"{"type":"mode_change","id":"a3","parentId":"a2","timestamp":"2025-01-01T00:00:03.000Z","mode":"plan"}"#;
        let listing = listing_of(&[&header, USER, info, mode]).expect("a session");
        assert_eq!(listing.dialect, Dialect::Omp);
        assert_eq!(listing.name.as_deref(), Some("Titled"));
        let pi = listing_of(&[&header, USER, info]).expect("a session");
        assert_eq!(pi.dialect, Dialect::Pi);
        assert_eq!(pi.name.as_deref(), Some("pi name"));
    }

    /// omp's title slot names the session; an empty slot title leaves it unnamed, as omp folds
    /// the slot over the header.
    #[test]
    fn the_title_slot_names_an_omp_session() {
        let slot = |title: &str| {
            crate::title_slot::TitleSlot {
                title: title.to_owned(),
                source: Some("user".to_owned()),
                updated_at: "2025-01-01T00:00:00.000Z".to_owned(),
            }
            .to_line()
        };
        let named = slot("Slot title");
        let header = HEADER.replace(r#""cwd":"/p""#, r#""cwd":"/p","title":"Header title""#);
        let listing =
            listing_of(&[named.trim_end_matches('\n'), &header, USER]).expect("a session");
        assert_eq!(listing.dialect, Dialect::Omp);
        assert_eq!(listing.name.as_deref(), Some("Slot title"));
        let empty = slot("");
        let listing =
            listing_of(&[empty.trim_end_matches('\n'), &header, USER]).expect("a session");
        assert_eq!(listing.name, None);
        assert_eq!(listing.entry_count, 1);
    }

    #[test]
    fn a_file_that_is_not_a_session_is_not_listed() {
        assert_eq!(listing_of(&[USER]), None);
        assert_eq!(listing_of(&[]), None);
        assert_eq!(listing_of(&["not json"]), None);
    }

    #[test]
    fn a_fork_names_its_source_session() {
        let header = HEADER.replace(
            r#""cwd":"/p""#,
            r#""cwd":"/p","parentSession":"/s/source.jsonl""#,
        );
        let listing = listing_of(&[&header, USER]).expect("a session");
        assert_eq!(listing.parent_session.as_deref(), Some("/s/source.jsonl"));
    }

    /// A store's value is listed as the file of the same bytes.
    #[test]
    fn bytes_are_listed_as_the_file_of_the_same_bytes() {
        let text = format!("{HEADER}\n{USER}\n");
        let mut from_file = listing_of(&[HEADER, USER]).expect("a session");
        let of_bytes =
            from_bytes(Path::new("/s/x.jsonl"), text.into_bytes(), 7).expect("a session");
        from_file.modified_ms = 7;
        assert_eq!(of_bytes, from_file);
        assert_eq!(
            from_bytes(Path::new("/s/y.jsonl"), b"{}\n".to_vec(), 0),
            None
        );
    }
}
