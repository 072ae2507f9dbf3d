//! omp's custom-message rows: the model-facing `<system-*>` envelope stripped, and advisor notes
//! shown with their advisor and severity, each field sanitized as omp sanitizes it.

use super::str_field;
use crate::js;
use crate::json::Field;
use serde_json::Value;

/// omp's `stripSystemWrapperTags`: removes one `<system-*>…</system-*>` envelope.
pub(super) fn strip_system_wrapper(content: &str) -> String {
    let trimmed = js::trim(content);
    let lower = trimmed.to_ascii_lowercase();
    if !lower.starts_with("<system-") {
        return content.to_owned();
    }
    let name_len = trimmed[1..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(trimmed.len() - 1);
    let name = &trimmed[1..1 + name_len];
    if name.len() <= "system-".len() {
        return content.to_owned();
    }
    let attr_start = 1 + name_len;
    match trimmed[attr_start..].chars().next() {
        Some('>') => {}
        Some(c) if js::is_whitespace(c) => {}
        _ => return content.to_owned(),
    }
    let mut quote: Option<char> = None;
    let mut opening_end = None;
    for (i, c) in trimmed[attr_start..].char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else if c == '<' {
            return content.to_owned();
        } else if c == '>' {
            opening_end = Some(attr_start + i);
            break;
        }
    }
    let Some(opening_end) = opening_end.filter(|_| quote.is_none()) else {
        return content.to_owned();
    };
    let closing = format!("</{name}>");
    if trimmed.len() < closing.len() {
        return content.to_owned();
    }
    let closing_start = trimmed.len() - closing.len();
    if closing_start <= opening_end
        || !trimmed.is_char_boundary(closing_start)
        || !trimmed[closing_start..].eq_ignore_ascii_case(&closing)
    {
        return content.to_owned();
    }
    js::trim(&trimmed[opening_end + 1..closing_start]).to_owned()
}

/// omp's `sanitizeTreeField`: control characters removed, `\n`/`\t` folded, trimmed.
pub(super) fn sanitize_field(value: &str) -> String {
    let kept: String = value
        .chars()
        .filter(|&c| {
            let cp = c as u32;
            !(cp <= 0x08 || (0x0b..=0x1f).contains(&cp) || (0x7f..=0x9f).contains(&cp))
        })
        .collect();
    js::one_line(&kept)
}

/// omp's advisor notes: `(qualifier, text)`.
pub(super) fn advisor_display(details: Option<&Value>) -> (String, String) {
    let Some(notes) = details
        .and_then(|d| d.field("notes"))
        .and_then(Value::as_array)
    else {
        return (String::new(), String::new());
    };
    let mut texts = Vec::new();
    let mut advisors: Vec<String> = Vec::new();
    let mut severities: Vec<String> = Vec::new();
    for note in notes.iter().filter_map(Value::as_object) {
        if let Some(t) = str_field(note, "note") {
            texts.push(t.to_owned());
        }
        if let Some(a) = str_field(note, "advisor") {
            let name = sanitize_field(a);
            if !name.is_empty() && name != "default" && !advisors.contains(&name) {
                advisors.push(name);
            }
        }
        if let Some(s) = str_field(note, "severity") {
            let sev = sanitize_field(s);
            if !sev.is_empty() && !severities.contains(&sev) {
                severities.push(sev);
            }
        }
    }
    advisors.extend(severities);
    (advisors.join(", "), texts.join(" "))
}
