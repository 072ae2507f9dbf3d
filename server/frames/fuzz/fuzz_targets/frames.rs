//! The frame reader on arbitrary input, two ways (the first byte chooses):
//!
//! - **bytes**: the rest as the client's stream, pushed whole and in pieces (sizes drawn from the
//!   input). Never a panic; the events are the same however the bytes are cut; every message
//!   passed on decodes as the LSP library's request or response; every answer is a framed
//!   JSON-RPC error with `id: null` and code -32700 or -32600; an end is the last event.
//! - **segments**: the rest drawn into a stream of well-framed valid messages, well-framed
//!   arbitrary bodies and junk (bytes without `content-length` in any case), in any order. Then
//!   resynchronization is exact: the messages passed on are exactly the framed bodies the library
//!   decodes, in order; every framed body it does not decode is answered; nothing ends.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use sessiontree_frames::{check, frame, Event, FrameReader, LibraryMessage};
use tower_lsp_server::jsonrpc::Response;

/// Every event of `input`, pushed in pieces of the given sizes (cycled), then whole.
fn events(input: &[u8], pieces: &[u8]) -> Vec<Event> {
    let mut reader = FrameReader::new();
    let mut out = Vec::new();
    let mut rest = input;
    let mut sizes = pieces.iter().cycle();
    while !rest.is_empty() {
        let size = match pieces.is_empty() {
            true => rest.len(),
            false => usize::from(*sizes.next().unwrap_or(&1)).max(1),
        };
        let (piece, after) = rest.split_at(size.min(rest.len()));
        reader.push(piece);
        out.extend(std::iter::from_fn(|| reader.event()));
        rest = after;
    }
    out
}

fn check_answer(answer: &[u8]) {
    let text = std::str::from_utf8(answer).expect("an answer is UTF-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("an answer is framed");
    assert_eq!(head, format!("Content-Length: {}", body.len()));
    let value: Value = serde_json::from_str(body).expect("an answer is JSON");
    assert_eq!(value["id"], Value::Null);
    assert_eq!(value["jsonrpc"], "2.0");
    let code = value["error"]["code"].as_i64();
    assert!(code == Some(-32700) || code == Some(-32600), "{value}");
    assert!(value["error"]["data"]["kind"].is_string(), "{value}");
    assert!(serde_json::from_str::<Response>(body).is_ok(), "{value}");
}

/// The library reads the body: UTF-8, then its message type (a response, else a request, from
/// the text read whole), exactly as it decodes a frame.
fn decodes(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    !text.is_empty() && serde_json::from_str::<LibraryMessage>(text).is_ok()
}

/// `check` agrees with the library on `body`.
fn agrees(body: &[u8]) {
    assert_eq!(check(body).is_ok(), decodes(body), "check and the library disagree");
}

fn bytes(data: &[u8]) {
    agrees(data);
    let cut = data.len().min(8);
    let (pieces, input) = data.split_at(cut);
    let whole = events(input, &[]);
    assert_eq!(events(input, pieces), whole, "the pieces changed the events");
    assert_eq!(events(input, &[1]), whole, "byte by byte changed the events");
    for (n, event) in whole.iter().enumerate() {
        match event {
            Event::Message(body) => {
                assert!(decodes(body), "passed on but not decoded");
                assert_eq!(check(body), Ok(()));
            }
            Event::Rejected(rejection) => check_answer(&rejection.answer()),
            Event::End(_) => assert_eq!(n + 1, whole.len(), "events after the end"),
        }
    }
}

/// Junk with every `content-length` (any case) taken out.
fn junk(bytes: &[u8]) -> Vec<u8> {
    let mut junk = bytes.to_vec();
    while let Some(at) = junk
        .windows(14)
        .position(|w| w.eq_ignore_ascii_case(b"content-length"))
    {
        junk.drain(at..at + 14);
    }
    junk
}

fn segments(data: &[u8]) {
    let mut stream = Vec::new();
    let mut framed = Vec::new();
    let mut rest = data;
    let mut id = 0u32;
    // Junk segments in a row are one stretch (cleaned as one).
    let mut stretch = Vec::new();
    while rest.len() >= 2 {
        let (kind, len) = (rest[0] % 3, usize::from(rest[1]));
        let take = len.min(rest.len() - 2);
        let part = &rest[2..2 + take];
        rest = &rest[2 + take..];
        if kind != 2 {
            stream.extend(junk(&std::mem::take(&mut stretch)));
        }
        match kind {
            0 => {
                id += 1;
                let text = String::from_utf8_lossy(part);
                let body = serde_json::to_vec(&serde_json::json!({
                    "jsonrpc": "2.0", "id": id, "method": "m", "params": {"text": text}
                }))
                .expect("encode");
                stream.extend(frame(&body));
                framed.push(body);
            }
            1 => {
                stream.extend(frame(part));
                framed.push(part.to_vec());
            }
            _ => stretch.extend_from_slice(part),
        }
    }
    stream.extend(junk(&stretch));
    let got = events(&stream, &[7, 1, 3]);
    let passed: Vec<&Vec<u8>> = got
        .iter()
        .filter_map(|e| match e {
            Event::Message(body) => Some(body),
            _ => None,
        })
        .collect();
    let expected: Vec<&Vec<u8>> = framed.iter().filter(|b| decodes(b)).collect();
    assert_eq!(passed, expected, "a framed message was lost or made up");
    let refused = framed.iter().filter(|b| !decodes(b)).count();
    let answered = got
        .iter()
        .filter(|e| matches!(e, Event::Rejected(_)))
        .count();
    assert!(answered >= refused, "{answered} answers for {refused} refused bodies");
    assert!(!got.iter().any(|e| matches!(e, Event::End(_))), "ended");
}

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((mode, rest)) if mode % 2 == 0 => bytes(rest),
        Some((_, rest)) => segments(rest),
        None => {}
    }
});
