//! A JSON reader without serde_json's nesting limit of 128: the fixtures' `tree` of a 70-deep
//! chain nests objects and arrays 140 levels deep. Strings and numbers are still decoded by
//! serde_json; only the nesting is walked here, with an explicit stack (no recursion).

use serde_json::{Map, Value};

enum Frame {
    Array(Vec<Value>),
    Object(Map<String, Value>, Option<String>),
}

/// Parses a JSON text of any nesting depth.
pub fn parse(text: &str) -> Result<Value, String> {
    let b = text.as_bytes();
    let mut i = 0usize;
    let mut stack: Vec<Frame> = Vec::new();
    let ws = |i: &mut usize| {
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
    };
    loop {
        ws(&mut i);
        // Inside an object and expecting a key?
        if let Some(Frame::Object(map, key @ None)) = stack.last_mut() {
            if b.get(i) == Some(&b'}') {
                i += 1;
                let done = Value::Object(std::mem::take(map));
                stack.pop();
                if let Some(v) = finish(&mut stack, done, b, &mut i)? {
                    return end(v, b, i);
                }
                continue;
            }
            let (k, next) = string_at(text, i)?;
            i = next;
            ws(&mut i);
            if b.get(i) != Some(&b':') {
                return Err(format!("expected ':' at {i}"));
            }
            i += 1;
            *key = Some(k);
            continue;
        }
        let value = match b.get(i) {
            Some(b'{') => {
                i += 1;
                stack.push(Frame::Object(Map::new(), None));
                continue;
            }
            Some(b'[') => {
                i += 1;
                ws(&mut i);
                if b.get(i) == Some(&b']') {
                    i += 1;
                    Value::Array(Vec::new())
                } else {
                    stack.push(Frame::Array(Vec::new()));
                    continue;
                }
            }
            Some(b'"') => {
                let (s, next) = string_at(text, i)?;
                i = next;
                Value::String(s)
            }
            Some(_) => {
                let start = i;
                while i < b.len()
                    && !matches!(b[i], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    i += 1;
                }
                serde_json::from_str::<Value>(&text[start..i])
                    .map_err(|e| format!("at {start}: {e}"))?
            }
            None => return Err("unexpected end".into()),
        };
        if let Some(v) = finish(&mut stack, value, b, &mut i)? {
            return end(v, b, i);
        }
    }
}

/// Places a finished value in its container and closes every container that ends here.
/// Returns the top-level value when the whole text is done.
fn finish(
    stack: &mut Vec<Frame>,
    mut value: Value,
    b: &[u8],
    i: &mut usize,
) -> Result<Option<Value>, String> {
    loop {
        let Some(top) = stack.last_mut() else {
            return Ok(Some(value));
        };
        match top {
            Frame::Array(items) => items.push(value),
            Frame::Object(map, key) => {
                let k = key.take().ok_or("value without key")?;
                map.insert(k, value);
            }
        }
        while *i < b.len() && matches!(b[*i], b' ' | b'\t' | b'\n' | b'\r') {
            *i += 1;
        }
        match (b.get(*i), stack.last_mut()) {
            (Some(b','), _) => {
                *i += 1;
                return Ok(None);
            }
            (Some(b']'), Some(Frame::Array(items))) => {
                *i += 1;
                value = Value::Array(std::mem::take(items));
                stack.pop();
            }
            (Some(b'}'), Some(Frame::Object(map, None))) => {
                *i += 1;
                value = Value::Object(std::mem::take(map));
                stack.pop();
            }
            _ => return Err(format!("unexpected byte at {}", *i)),
        }
    }
}

fn end(v: Value, b: &[u8], mut i: usize) -> Result<Value, String> {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    if i == b.len() {
        Ok(v)
    } else {
        Err(format!("trailing data at {i}"))
    }
}

fn string_at(text: &str, start: usize) -> Result<(String, usize), String> {
    let b = text.as_bytes();
    if b.get(start) != Some(&b'"') {
        return Err(format!("expected a string at {start}"));
    }
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => {
                let s: String = serde_json::from_str(&text[start..=i])
                    .map_err(|e| format!("at {start}: {e}"))?;
                return Ok((s, i + 1));
            }
            _ => i += 1,
        }
    }
    Err("unterminated string".into())
}
