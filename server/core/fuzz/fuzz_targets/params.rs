//! Arbitrary bytes as what the server decodes from a client: the params of every client → server
//! request, the results of every server → client request (the client's answers), the
//! initialization options and the client's experimental capabilities. Decoding must answer (a
//! value or an error), never panic, whatever the JSON; a decoded value must encode and decode
//! again to the same JSON.
//!
//! The list of methods is checked against the protocol's catalog on the first input: a method
//! added to the protocol without a decoder here stops the fuzzer with its name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use sessiontree_protocol::{self as proto, Direction, Request};
use std::sync::Once;

/// Decodes `value` as `T`; when that works, the value encodes and decodes to the same JSON.
fn decode<T: Serialize + DeserializeOwned>(value: &Value) {
    let Ok(decoded) = serde_json::from_value::<T>(value.clone()) else {
        return;
    };
    let once = serde_json::to_value(&decoded).expect("a decoded value encodes");
    let again: T = serde_json::from_value(once.clone()).expect("an encoded value decodes");
    let twice = serde_json::to_value(&again).expect("a decoded value encodes");
    assert_eq!(once, twice, "encode/decode is stable");
}

/// What the server decodes for one request: its params when the client asks, the client's answer
/// when the server asks.
fn request<R: Request>(value: &Value) -> &'static str {
    match R::DIRECTION {
        Direction::ClientToServer => decode::<R::Params>(value),
        Direction::ServerToClient => decode::<R::Result>(value),
    }
    R::METHOD
}

/// Every request of the protocol; returns the methods covered.
fn all(value: &Value) -> Vec<&'static str> {
    decode::<proto::InitializationOptions>(value);
    decode::<proto::ClientExperimental>(value);
    vec![
        request::<proto::ListSessions>(value),
        request::<proto::Open>(value),
        request::<proto::Close>(value),
        request::<proto::Rows>(value),
        request::<proto::Tree>(value),
        request::<proto::GetEntry>(value),
        request::<proto::Context>(value),
        request::<proto::Navigate>(value),
        request::<proto::Branch>(value),
        request::<proto::SetLabel>(value),
        request::<proto::Append>(value),
        request::<proto::SetName>(value),
        request::<proto::NameFromPlanTitle>(value),
        request::<proto::BeforeTree>(value),
        request::<proto::BeforeBranch>(value),
        request::<proto::RewindPoints>(value),
        request::<proto::RewindCompare>(value),
        request::<proto::RewindFile>(value),
        request::<proto::RewindRestore>(value),
        request::<proto::RewindUndo>(value),
        request::<proto::Transcript>(value),
        request::<proto::GetAgent>(value),
        request::<proto::StopAgent>(value),
        request::<proto::Prompt>(value),
        request::<proto::Abort>(value),
        request::<proto::AgentDialog>(value),
        request::<proto::InstallBridge>(value),
    ]
}

static CATALOG: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    CATALOG.call_once(|| {
        let covered = all(&Value::Null);
        for doc in proto::catalog() {
            let decoded_by_server = doc.kind == proto::MethodKind::Request;
            assert!(
                !decoded_by_server || covered.contains(&doc.method),
                "{} is in the protocol catalog but not in fuzz_targets/params.rs: add it to `all`",
                doc.method
            );
        }
    });
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    all(&value);
    // One of the catalog's examples with this value put in each field in turn, so the
    // decoders see valid objects with one wrong field.
    if let Some(Value::Object(example)) = EXAMPLES.get(data.len() % EXAMPLES.len().max(1)) {
        for key in example.keys() {
            let mut changed = example.clone();
            changed.insert(key.clone(), value.clone());
            all(&Value::Object(changed));
        }
    }
});

/// The params (and client answers) of the catalog's examples.
static EXAMPLES: std::sync::LazyLock<Vec<Value>> = std::sync::LazyLock::new(|| {
    proto::catalog()
        .into_iter()
        .filter(|d| d.kind == proto::MethodKind::Request)
        .map(|d| match d.direction {
            Direction::ClientToServer => d.params,
            Direction::ServerToClient => d.result.unwrap_or(Value::Null),
        })
        .collect()
});
