//! Ordering: hundreds of mutations pipelined without awaiting, with another writer's appends in
//! between, give the same file (our entries, in order, one chain) and the same revision sequence
//! as the same mutations sent one at a time (plus one revision per batch of the other writer's
//! lines).

mod support;

use serde_json::{json, Value};
use std::io::Write as _;
use std::path::Path;
use support::inproc::{Client, Opened};
use support::*;

const OMP: &str = "c06-branch-basic/omp/session.jsonl";
const N: usize = 300;
/// Request indices after which the other writer appends a line.
const EXTERNAL_AT: [usize; 3] = [60, 150, 240];

fn op(i: usize, u: &str) -> (&'static str, Value) {
    if i % 3 == 2 {
        (
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": "2ececf0f", "label": format!("l{i}")}),
        )
    } else {
        (
            "sessionTree/append",
            json!({"uri": u, "text": format!("m{i}")}),
        )
    }
}

fn external_line(k: usize, parent: &str) -> String {
    format!(
        r#"{{"type":"custom","customType":"agent","data":{{"k":{k}}},"id":"eeee{k:04}","parentId":"{parent}","timestamp":"2025-01-01T00:10:00.000Z"}}"#
    )
}

fn append_external(file: &Path, k: usize) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(file)
        .expect("open for append");
    // One write per line, as the agents do.
    f.write_all(format!("{}\n", external_line(k, "662d009f")).as_bytes())
        .expect("append");
}

/// The file's lines after the fixture, as (is ours, what, parent is the previous line).
fn shape(file: &Path, skip: usize) -> Vec<(bool, String, bool)> {
    let text = std::fs::read_to_string(file).expect("read");
    let mut prev_id: Option<String> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("line {} is torn: {e}: {line}", i + 1));
        let id = v["id"].as_str().map(str::to_owned);
        if i >= skip {
            let ours = v["type"] != json!("custom");
            let what = match v["type"].as_str() {
                Some("label") => format!("label {} {}", v["targetId"], v["label"]),
                Some("message") => format!("message {}", v["message"]["content"]),
                _ => format!("external {}", v["data"]["k"]),
            };
            let chained = v["parentId"].as_str().map(str::to_owned) == prev_id;
            out.push((ours, what, chained));
        }
        prev_id = id;
    }
    out
}

async fn sequential(dir: &Path) -> (Vec<u64>, Vec<(bool, String, bool)>) {
    let c = Client::plain().await;
    let Opened { uri: u, file, .. } = c.open_copy_as(dir, OMP, "seq.jsonl").await;
    let mut revisions = Vec::new();
    for i in 0..N {
        let (m, p) = op(i, &u);
        revisions.push(c.ok(m, p).await["revision"].as_u64().expect("revision"));
    }
    let skip = std::fs::read_to_string(fixture(OMP))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    (revisions, shape(&file, skip))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pipelined_mutations_match_a_sequential_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let (seq_revisions, seq_shape) = sequential(dir.path()).await;

    let c = Client::plain().await;
    let Opened { uri: u, file, .. } = c.open_copy_as(dir.path(), OMP, "pipe.jsonl").await;
    let mut pending = Vec::new();
    let mut external = 0;
    for i in 0..N {
        let (m, p) = op(i, &u);
        pending.push(c.send(m, p).await);
        if EXTERNAL_AT.contains(&i) {
            append_external(&file, external);
            external += 1;
        }
    }
    let mut revisions = Vec::new();
    for rx in pending {
        let msg = rx.await.expect("response");
        assert!(msg.get("error").is_none(), "{msg}");
        revisions.push(msg["result"]["revision"].as_u64().expect("revision"));
    }

    let skip = std::fs::read_to_string(fixture(OMP))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    let shape = shape(&file, skip);
    assert_eq!(
        shape.iter().filter(|s| !s.0).count(),
        EXTERNAL_AT.len(),
        "every external line is kept"
    );
    // Every line of ours hangs under the line before it: the writes never interleaved.
    for (k, (ours, what, chained)) in shape.iter().enumerate() {
        assert!(
            !ours || *chained,
            "line {k} ({what}) is not chained to the line before it"
        );
    }
    // Without the other writer's lines, the file is the sequential file.
    let ours: Vec<_> = shape.iter().filter(|s| s.0).map(|s| s.1.clone()).collect();
    let seq_ours: Vec<_> = seq_shape.iter().map(|s| s.1.clone()).collect();
    assert_eq!(ours, seq_ours);
    // Revisions: the sequential ones, plus one for each batch of the other writer's lines the
    // server read before a mutation (lines read together make one change).
    let mut seen = 0u64;
    let mut mine = 0usize;
    let mut last = (0u64, 0u64); // (lines seen, revision delta) at the previous mutation
    for (ours, _, _) in &shape {
        if !*ours {
            seen += 1;
            continue;
        }
        let delta = revisions[mine] - seq_revisions[mine];
        assert!(
            delta <= seen,
            "mutation {mine}: {delta} extra revisions but only {seen} other lines before it"
        );
        if seen == last.0 {
            assert_eq!(
                delta, last.1,
                "mutation {mine}: the revision moved without another writer"
            );
        } else {
            assert!(
                delta > last.1,
                "mutation {mine}: other lines arrived but the revision did not show it"
            );
        }
        last = (seen, delta);
        mine += 1;
    }
    assert!(
        revisions.windows(2).all(|w| w[0] < w[1]),
        "revisions grow in request order"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pipelined_without_other_writers_is_identical() {
    let dir = tempfile::tempdir().expect("tmp");
    let (seq_revisions, seq_shape) = sequential(dir.path()).await;
    let c = Client::plain().await;
    let Opened { uri: u, file, .. } = c.open_copy_as(dir.path(), OMP, "pipe.jsonl").await;
    let mut pending = Vec::new();
    for i in 0..N {
        let (m, p) = op(i, &u);
        pending.push(c.send(m, p).await);
    }
    let mut revisions = Vec::new();
    for rx in pending {
        revisions.push(
            rx.await.expect("response")["result"]["revision"]
                .as_u64()
                .expect("revision"),
        );
    }
    let skip = std::fs::read_to_string(fixture(OMP))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    assert_eq!(revisions, seq_revisions);
    assert_eq!(shape(&file, skip), seq_shape);
    // The didChange notifications came in the same order, one per mutation.
    let notes = c.drain().await;
    let changes: Vec<u64> = notes
        .iter()
        .filter(|n| n["method"] == json!("sessionTree/didChange"))
        .filter_map(|n| n["params"]["revision"].as_u64())
        .collect();
    assert_eq!(changes, revisions);
}
