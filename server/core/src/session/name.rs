//! Naming a session: pi's `session_info` entries, omp's `setSessionName` (title slot rewritten in
//! place, user titles never replaced by automatic ones), and plan-approval naming.

use super::Session;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::title_cleaning::{clean_title, humanize_plan_title};
use crate::title_slot::TitleSlot;
use serde_json::Value;

/// Who chose a name (omp's `titleSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameSource {
    /// The user renamed the session.
    User,
    /// Generated (first-message titles, plan approval).
    Auto,
}

impl NameSource {
    fn as_str(self) -> &'static str {
        match self {
            NameSource::User => "user",
            NameSource::Auto => "auto",
        }
    }
}

impl Session {
    /// pi `appendSessionInfo(name)`: stores the trimmed name (empty clears it).
    pub fn append_session_info(&mut self, name: &str) -> Result<String> {
        if self.dialect != Dialect::Pi {
            return Err(Error::Unsupported(
                "session_info entries exist only in pi sessions; use set_session_name".into(),
            ));
        }
        let mut fields = serde_json::Map::new();
        fields.insert("name".into(), crate::js::trim(name).into());
        self.append_entry("session_info", fields)
    }

    /// omp `setSessionName(name, source, trigger)`: returns the `title_change` entry id, or `None`
    /// when the name is ignored (an automatic name over a user's, or nothing left after cleaning).
    pub fn set_session_name(
        &mut self,
        name: &str,
        source: NameSource,
        trigger: Option<&str>,
    ) -> Result<Option<String>> {
        if self.dialect != Dialect::Omp {
            return Err(Error::Unsupported(
                "title changes exist only in omp sessions; use append_session_info".into(),
            ));
        }
        if self.title_source() == Some("user") && source == NameSource::Auto {
            return Ok(None);
        }
        let title = clean_title(name);
        if title.is_empty() {
            return Ok(None);
        }
        self.check_writable()?;
        self.catch_up()?;
        let previous = self.session_name().map(str::to_owned);
        let timestamp = self.now_iso();
        let id = self.fresh_id();
        let parent = self.leaf.as_deref().map_or(Value::Null, Value::from);
        let mut map = serde_json::Map::new();
        map.insert("type".into(), "title_change".into());
        map.insert("id".into(), id.as_str().into());
        map.insert("parentId".into(), parent);
        map.insert("timestamp".into(), timestamp.as_str().into());
        map.insert("title".into(), title.as_str().into());
        map.insert("source".into(), source.as_str().into());
        if let Some(previous) = previous {
            map.insert("previousTitle".into(), previous.into());
        }
        if let Some(trigger) = trigger.filter(|t| !t.is_empty()) {
            map.insert("trigger".into(), trigger.into());
        }
        self.record_value(Value::Object(map))?;
        self.header.insert("title".into(), title.as_str().into());
        self.header
            .insert("titleSource".into(), source.as_str().into());
        self.rewrite_slot(TitleSlot {
            title,
            source: Some(source.as_str().to_owned()),
            updated_at: timestamp,
        })?;
        Ok(Some(id))
    }

    /// Names the session the dialect's way, as a user rename: pi appends `session_info`, omp sets
    /// a user title. Returns the new entry's id when one was written.
    pub fn set_name(&mut self, name: &str) -> Result<Option<String>> {
        match self.dialect {
            Dialect::Pi => self.append_session_info(name).map(Some),
            Dialect::Omp => self.set_session_name(name, NameSource::User, None),
        }
    }

    /// Plan-approval naming: `humanizePlanTitle(title)`, applied only when the session has no name
    /// yet, as an automatic name (so never over a user's). Returns the entry id when it applied.
    pub fn name_from_plan_title(&mut self, plan_title: &str) -> Result<Option<String>> {
        let name = humanize_plan_title(plan_title);
        if name.is_empty() || self.session_name().is_some() {
            return Ok(None);
        }
        match self.dialect {
            Dialect::Pi => self.append_session_info(&name).map(Some),
            Dialect::Omp => self.set_session_name(&name, NameSource::Auto, None),
        }
    }
}
