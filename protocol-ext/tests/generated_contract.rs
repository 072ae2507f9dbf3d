//! `protocol-ext/generated/protocol.json`: the protocol as data for the TypeScript and Lua
//! clients (method names, directions, kinds, example params and results, error kinds and codes,
//! commands, features, version). Clients test their constants against it; this test keeps it in
//! step with the Rust types (`UPDATE_EXPECT=1` rewrites it).

use serde_json::{json, Value};
use sessiontree_protocol::{catalog, commands, ErrorKind, MethodKind, FEATURES, PROTOCOL_VERSION};

fn contract() -> Value {
    let methods: Vec<Value> = catalog()
        .into_iter()
        .map(|m| {
            json!({
                "method": m.method,
                "direction": match m.direction {
                    sessiontree_protocol::Direction::ClientToServer => "clientToServer",
                    sessiontree_protocol::Direction::ServerToClient => "serverToClient",
                },
                "kind": match m.kind { MethodKind::Request => "request", MethodKind::Notification => "notification" },
                "params": m.params,
                "result": m.result,
            })
        })
        .collect();
    let errors: Vec<Value> = ErrorKind::ALL
        .iter()
        .map(|k| json!({"kind": k.as_str(), "code": k.code()}))
        .collect();
    json!({
        "version": PROTOCOL_VERSION,
        "experimentalKey": sessiontree_protocol::EXPERIMENTAL_KEY,
        "features": FEATURES,
        "commands": commands::ALL,
        "errorKinds": errors,
        "methods": methods,
    })
}

#[test]
fn generated_contract_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("generated/protocol.json");
    let want = format!(
        "{}\n",
        serde_json::to_string_pretty(&contract()).unwrap_or_default()
    );
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        return;
    }
    let got = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "{} is stale: run `UPDATE_EXPECT=1 cargo test -p sessiontree-protocol`",
        path.display()
    );
}
