//! Comparing JSON values and files, reporting the first difference by path / line.

use serde_json::Value;

/// The first place where `ours` and `expected` differ, as `path: ours != expected`.
pub fn first_diff(path: &str, ours: &Value, expected: &Value) -> Option<String> {
    match (ours, expected) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, bv) in b {
                let p = format!("{path}.{k}");
                match a.get(k) {
                    None => return Some(format!("{p}: missing (expected {})", short(bv))),
                    Some(av) => {
                        if let Some(d) = first_diff(&p, av, bv) {
                            return Some(d);
                        }
                    }
                }
            }
            for (k, av) in a {
                if !b.contains_key(k) {
                    return Some(format!("{path}.{k}: unexpected {}", short(av)));
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                if let Some(d) = first_diff(&format!("{path}[{i}]"), av, bv) {
                    return Some(d);
                }
            }
            if a.len() != b.len() {
                return Some(format!(
                    "{path}: length {} != expected {} ({} vs {})",
                    a.len(),
                    b.len(),
                    short(ours),
                    short(expected)
                ));
            }
            None
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => None,
        _ if ours == expected => None,
        _ => Some(format!(
            "{path}: {} != expected {}",
            short(ours),
            short(expected)
        )),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 300 {
        let cut: String = s.chars().take(300).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// The first differing line of two texts, 1-based.
pub fn first_line_diff(ours: &str, expected: &str) -> Option<String> {
    if ours == expected {
        return None;
    }
    let a: Vec<&str> = ours.split_inclusive('\n').collect();
    let b: Vec<&str> = expected.split_inclusive('\n').collect();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i), b.get(i));
        if x != y {
            return Some(format!(
                "line {}:\n      ours:     {}\n      expected: {}",
                i + 1,
                x.map_or("(none)".to_owned(), |s| s.trim_end_matches('\n').to_owned()),
                y.map_or("(none)".to_owned(), |s| s.trim_end_matches('\n').to_owned()),
            ));
        }
    }
    Some("texts differ".to_owned())
}

/// Replaces every string in `v` found in `map` (used to compare v1 migrations, whose ids are
/// random in the agents and deterministic in ours).
pub fn map_strings(v: &mut Value, map: &std::collections::HashMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(r) = map.get(s.as_str()) {
                *s = r.clone();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| map_strings(i, map)),
        Value::Object(m) => {
            let old = std::mem::take(m);
            for (k, mut val) in old {
                map_strings(&mut val, map);
                let k = map.get(&k).cloned().unwrap_or(k);
                m.insert(k, val);
            }
        }
        _ => {}
    }
}
