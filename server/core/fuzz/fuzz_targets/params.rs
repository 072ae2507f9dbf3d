//! Arbitrary bytes as the params of every client → server request: decoding must answer (a
//! value or an error), never panic, whatever the JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sessiontree_protocol as proto;

fn decode<T: serde::de::DeserializeOwned>(value: &serde_json::Value) {
    let _ = serde_json::from_value::<T>(value.clone());
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    decode::<proto::ListSessionsParams>(&value);
    decode::<proto::OpenParams>(&value);
    decode::<proto::RowsParams>(&value);
    decode::<proto::TreeParams>(&value);
    decode::<proto::EntryParams>(&value);
    decode::<proto::ContextParams>(&value);
    decode::<proto::NavigateParams>(&value);
    decode::<proto::BranchParams>(&value);
    decode::<proto::SetLabelParams>(&value);
    decode::<proto::AppendParams>(&value);
    decode::<proto::SetNameParams>(&value);
    decode::<proto::NameFromPlanTitleParams>(&value);
    decode::<proto::InitializationOptions>(&value);
});
