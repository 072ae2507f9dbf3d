//! Time as the agents see it: ISO strings (`Date.prototype.toISOString`) on entries, epoch
//! milliseconds on messages, and `Date.parse` for sorting children.

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

/// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.sssZ`.
pub fn format_iso(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(t) => t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => "1970-01-01T00:00:00.000Z".to_owned(),
    }
}

/// Reads an ISO date the way `Date.parse` reads the forms the agents write; `None` stands for NaN.
pub fn parse_iso_ms(text: &str) -> Option<f64> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.timestamp_millis() as f64);
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return Some(t.and_utc().timestamp_millis() as f64);
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return d
            .and_hms_opt(0, 0, 0)
            .map(|t| t.and_utc().timestamp_millis() as f64);
    }
    None
}

/// A source of the current time, injectable so tests can replay recorded sessions.
pub trait Clock: Send + Sync {
    /// Now, in epoch milliseconds.
    fn now_ms(&self) -> i64;
}

/// The real clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis()
    }
}

/// A clock that moves only when told to; clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl ManualClock {
    /// A clock standing at `ms`.
    pub fn new(ms: i64) -> Self {
        Self(std::sync::Arc::new(std::sync::atomic::AtomicI64::new(ms)))
    }
    /// Sets the time.
    pub fn set(&self, ms: i64) {
        self.0.store(ms, std::sync::atomic::Ordering::SeqCst);
    }
    /// Moves the time by `delta` milliseconds (may be negative).
    pub fn advance(&self, delta: i64) {
        self.0.fetch_add(delta, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trip() {
        assert_eq!(format_iso(1735689601000), "2025-01-01T00:00:01.000Z");
        assert_eq!(
            parse_iso_ms("2025-01-01T00:00:01.000Z"),
            Some(1735689601000.0)
        );
        assert_eq!(parse_iso_ms("2025-01-01"), Some(1735689600000.0));
        assert_eq!(parse_iso_ms("garbage"), None);
    }
}
