//! A measured figure (its samples, unit and note), the budgets of `benches/budgets.json`, and
//! the verdict of a figure against its budget.

use crate::AnyResult;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// One measured (or not yet measurable) figure.
#[derive(Clone)]
pub struct Figure {
    pub op: &'static str,
    /// Budget key in budgets.json.
    pub budget_key: &'static str,
    /// Samples in ms (or MB for memory figures).
    pub samples: Vec<f64>,
    pub unit: &'static str,
    /// For "plus the write" budgets: the median write alone, in ms.
    pub write_ms: Option<f64>,
    pub note: String,
}

impl Figure {
    pub fn time(op: &'static str, budget_key: &'static str, samples: &[Duration]) -> Figure {
        Figure {
            op,
            budget_key,
            samples: samples.iter().map(|d| d.as_secs_f64() * 1e3).collect(),
            unit: "ms",
            write_ms: None,
            note: String::new(),
        }
    }

    pub fn memory(op: &'static str, budget_key: &'static str, mb: Vec<f64>) -> Figure {
        Figure {
            op,
            budget_key,
            samples: mb,
            unit: "MB",
            write_ms: None,
            note: String::new(),
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Figure {
        self.note = note.into();
        self
    }

    pub fn median(&self) -> Option<f64> {
        median(&self.samples)
    }

    pub fn spread(&self) -> Option<(f64, f64)> {
        let min = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self
            .samples
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (!self.samples.is_empty()).then_some((min, max))
    }
}

pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

pub struct Budgets(pub Value);

/// The budget that applies: (limit, unit, plus the write).
#[derive(Clone, Copy)]
pub struct Budget {
    pub limit: f64,
    pub plus_write: bool,
}

impl Budgets {
    pub fn load() -> AnyResult<Budgets> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/budgets.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(Budgets(serde_json::from_str(&text)?))
    }

    pub fn for_figure(&self, entries: usize, fig: &Figure) -> Option<Budget> {
        let key = fig.budget_key;
        if key.is_empty() {
            return None;
        }
        let read = |table: &Value, key: &str| -> Option<Budget> {
            let b = table.get(key)?;
            let limit = b.get("ms").or_else(|| b.get("mb"))?.as_f64()?;
            Some(Budget {
                limit,
                plus_write: b.get("plusWrite").and_then(Value::as_bool).unwrap_or(false),
            })
        };
        if entries <= 100_000 {
            read(&self.0["100k"], key)
        } else {
            let table = &self.0["1M"];
            read(table, key).or_else(|| match key {
                "open" | "peak_rss" | "create_branched" => None,
                _ => read(table, "interactive"),
            })
        }
    }
}

pub fn verdict(fig: &Figure, budget: Option<Budget>) -> &'static str {
    let (Some(b), Some(m)) = (budget, fig.median()) else {
        return if fig.samples.is_empty() && !fig.budget_key.is_empty() {
            "not measured yet"
        } else {
            "-"
        };
    };
    let value = if b.plus_write {
        m - fig.write_ms.unwrap_or(0.0)
    } else {
        m
    };
    if value <= b.limit {
        "ok"
    } else {
        "OVER"
    }
}
