//! The live agent's figures, with the real pi and omp against the loopback model server:
//!   - spawn to ready: `sessionTree/agent {start: true}` until the agent's bridge is armed;
//!   - prompt to first delta: `sessionTree/prompt` sent until the first `agentEvent` delta is read;
//!   - the server's own relay time per streamed event: from the bridge's line read to the
//!     notification handed to the output (the server logs it at debug level).
//!
//! `cargo bench -p sessiontree --bench agent` prints the medians and writes them to
//! `target/bench/agent.json`. Figures, not tests: nothing here fails on a slow machine.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "../tests/support/mod.rs"]
mod support;

use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::agents::{is_event, Agent, Home, ModelServer, Server};

const STARTS: usize = 5;
const PROMPTS: usize = 10;

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Figures {
    agent: &'static str,
    spawn_ms: Vec<f64>,
    first_delta_ms: Vec<f64>,
    relay_us: Vec<f64>,
    events: usize,
}

fn measure(agent: Agent) -> Figures {
    let dir = tempfile::tempdir().expect("tempdir");
    // A 600-character answer in chunks of 8, a little apart: about 75 deltas a turn.
    let answer: String = "The quick brown fox jumps over the lazy dog. ".repeat(14);
    let model = ModelServer::start(
        dir.path(),
        &json!([{"when": {"lastUser": "^bench"}, "reply": {"text": answer, "chunk": 8, "delayMs": 2}}]),
    );
    let home = Home::new(&model);
    let file = home.first_session(agent, "first question");
    let log_path = dir.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let mut server = Server::start_logging(
        &home,
        json!({}),
        json!({}),
        "info,sessiontree::agent::relay=debug",
        Stdio::from(log),
    );
    let session = support::uri(&file);
    server.ok("sessionTree/open", json!({"uri": session}));
    let mut spawn_ms = Vec::new();
    for _ in 0..STARTS {
        let started = Instant::now();
        let status = server.ok("sessionTree/agent", json!({"uri": session, "start": true}));
        spawn_ms.push(ms(started.elapsed()));
        assert_eq!(status["armed"], true, "{status}");
        server.ok("sessionTree/stopAgent", json!({"uri": session}));
    }
    server.ok("sessionTree/agent", json!({"uri": session, "start": true}));
    let mut first_delta_ms = Vec::new();
    let mut events = 0;
    let mut not_idle = 0;
    for n in 0..PROMPTS {
        // The agent may run turns of its own after one ends (omp's reminders): wait for idle.
        let waited = Instant::now();
        while server.ok("sessionTree/agent", json!({"uri": session}))["state"] != "idle" {
            assert!(
                waited.elapsed() < Duration::from_secs(60),
                "the agent never became idle"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        if waited.elapsed() > Duration::from_millis(100) {
            not_idle += 1;
        }
        server.seen.clear();
        let sent = Instant::now();
        let id = server.send(
            "sessionTree/prompt",
            json!({"uri": session, "text": format!("bench {n}")}),
        );
        let answer = server.answer(id);
        let turn = answer["result"]["turn"].clone();
        assert!(turn.is_u64(), "{answer}");
        let mut first = server
            .seen
            .iter()
            .any(|m| is_event(m, &session, "delta"))
            .then_some(Duration::ZERO);
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            assert!(Instant::now() < deadline, "no end of turn {n}");
            let Some((msg, at)) = server.next_seen(Duration::from_millis(500)) else {
                continue;
            };
            if is_event(&msg, &session, "delta") && msg["params"]["turn"] == turn {
                events += 1;
                first.get_or_insert(at - sent);
            }
            if is_event(&msg, &session, "agentEnd") && msg["params"]["turn"] == turn {
                break;
            }
        }
        first_delta_ms.push(ms(first.expect("a delta")));
    }
    if not_idle > 0 {
        println!("{}: {not_idle} of {PROMPTS} prompts waited for the agent to become idle after the previous turn", agent.name());
    }
    server.shutdown();
    let relay_us: Vec<f64> = std::fs::read_to_string(&log_path)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("relayed"))
        .filter_map(|l| {
            let at = l.find("us=")? + 3;
            l[at..].split_whitespace().next()?.parse::<f64>().ok()
        })
        .collect();
    Figures {
        agent: agent.name(),
        spawn_ms,
        first_delta_ms,
        relay_us,
        events,
    }
}

fn main() {
    let mut all = Vec::new();
    println!("agent | spawn to ready (median, ms) | prompt to first delta (median, ms) | relay per event (median / p90, ms) | events");
    for agent in [Agent::Pi, Agent::Omp] {
        let f = measure(agent);
        println!(
            "{} | {:.0} | {:.0} | {:.3} / {:.3} | {}",
            f.agent,
            median(f.spawn_ms.clone()),
            median(f.first_delta_ms.clone()),
            median(f.relay_us.clone()) / 1e3,
            percentile(f.relay_us.clone(), 0.9) / 1e3,
            f.relay_us.len()
        );
        all.push(json!({
            "agent": f.agent,
            "spawnToReadyMs": f.spawn_ms,
            "promptToFirstDeltaMs": f.first_delta_ms,
            "relayMedianMs": median(f.relay_us.clone()) / 1e3,
            "relayP90Ms": percentile(f.relay_us.clone(), 0.9) / 1e3,
            "relayedEvents": f.relay_us.len(),
            "deltasSeen": f.events,
        }));
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench");
    let _ = std::fs::create_dir_all(&out);
    let _ = std::fs::write(
        out.join("agent.json"),
        serde_json::to_string_pretty(&Value::from(all)).unwrap_or_default(),
    );
}
