//! Branch summaries stored as the agents store them, checked against the agents themselves: the
//! installed pi (0.73.1, on Node) and omp (18.2.3, on Bun) run their own `generateBranchSummary`
//! on the same abandoned entries, answered by a scripted model with the same text
//! (`scripts/testing/branch-summary.mjs`), and what they would store — the summary text and the
//! file lists of `details` — must equal the engine's byte for byte. The preambles, written once
//! in `summary::stored`, are also read from the agents' installed files. The agents come from
//! `scripts/install-agents.sh` (pinned, cached); without them these tests fail.

use serde_json::{json, Value};
use sessiontree_core::dialect::Dialect;
use sessiontree_core::summary::{self, OMP_PREAMBLE, PI_PREAMBLE};
use sessiontree_testkit::agents::{agents_bin, agents_modules, repo};
use std::io::Write;
use std::process::{Command, Stdio};

/// The token budget both agents use with a 128,000-token model and their default reserve.
const BUDGET: usize = 128_000 - 16_384;

fn message(id: &str, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": null, "timestamp": "2025-01-01T00:00:00.000Z", "message": message})
}

fn user(id: &str, text: &str) -> Value {
    message(
        id,
        json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}),
    )
}

/// An assistant message calling tools: `(name, path)`; a `null` path leaves `arguments` out.
fn assistant(id: &str, calls: &[(&str, Value)]) -> Value {
    let mut content = vec![json!({"type": "text", "text": "Working on it."})];
    for (n, (name, path)) in calls.iter().enumerate() {
        let arguments = match path {
            Value::Null => json!({}),
            path => json!({"path": path}),
        };
        content.push(json!({"type": "toolCall", "id": format!("{id}-{n}"), "name": name, "arguments": arguments}));
    }
    message(
        id,
        json!({
            "role": "assistant",
            "content": content,
            "api": "openai-completions",
            "provider": "test",
            "model": "test-model",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "toolUse",
            "timestamp": 2,
        }),
    )
}

fn earlier_summary(id: &str, extra: Value, read: &[&str], modified: &[&str]) -> Value {
    let mut entry = json!({
        "type": "branch_summary", "id": id, "parentId": null, "timestamp": "2025-01-01T00:00:00.000Z",
        "fromId": "x", "summary": "Earlier work.",
        "details": {"readFiles": read, "modifiedFiles": modified},
    });
    if let (Some(entry), Some(extra)) = (entry.as_object_mut(), extra.as_object()) {
        entry.extend(extra.clone());
    }
    entry
}

fn calls(paths: &[(&str, &str)]) -> Vec<(String, Value)> {
    paths
        .iter()
        .map(|(name, path)| (name.to_string(), json!(path)))
        .collect()
}

/// Abandoned branches and model answers that reach every rule of the stored text.
fn cases() -> Vec<(Vec<Value>, String)> {
    let with = |calls: Vec<(String, Value)>| {
        let refs: Vec<(&str, Value)> = calls.iter().map(|(n, p)| (n.as_str(), p.clone())).collect();
        vec![user("u1", "Change things."), assistant("a1", &refs)]
    };
    let many: Vec<(String, Value)> = (0..24)
        .map(|n| {
            let name = if n % 3 == 0 { "edit" } else { "read" };
            (
                name.to_owned(),
                json!(format!("src/mod{}/file{n:02}.rs", n % 4)),
            )
        })
        .collect();
    let sorting = calls(&[
        ("read", "z.rs"),
        ("read", "Z.rs"),
        ("read", "é.rs"),
        ("read", "😀.rs"),
        ("read", "\u{ff5e}.rs"),
        ("read", "a.rs"),
        ("write", "\u{fffd}.rs"),
        ("edit", "𝒜.rs"),
    ]);
    let odd_names = calls(&[
        ("read", "trailing.rs "),
        ("read", "|table|"),
        ("read", "line\nbreak.rs"),
        ("read", "blank\n\n\nlines.rs"),
        ("read", "```fence.rs"),
        ("edit", "dir/</files>"),
        ("write", "dir/sub/"),
        ("read", "back\\slash\\path.rs"),
        ("read", "ends\\"),
        ("read", "/"),
        ("read", "a//b.rs"),
        ("read", "  indented.rs"),
        ("read", "\u{3000}wide.rs"),
    ]);
    let selectors_and_urls = calls(&[
        ("read", "src/lib.rs:10-20"),
        ("read", "src/lib.rs:L5+3"),
        ("read", "src/a.rs:raw"),
        ("read", "src/a.rs:1-50:raw"),
        ("read", "src/b.rs:raw:1-50"),
        ("read", "src/c.rs:conflicts"),
        ("read", "C:"),
        ("read", "a:b"),
        ("read", "src/d.rs:10+"),
        ("read", "artifact://3"),
        ("read", "https://example.com/x"),
        ("edit", "file.ts:conflict://1"),
        ("write", "local://ctx.md"),
        ("read", "1://x"),
        ("edit", "src/main.rs"),
        ("read", "src/main.rs"),
        ("write", "src/new.rs"),
        ("read", "/abs/path/x.rs"),
        ("read", "/abs/path/y.rs"),
        ("read", ""),
        ("bash", "ignored"),
    ]);
    let mut odd_calls = with(calls(&[("read", "kept.rs")]));
    odd_calls.push(assistant(
        "a2",
        &[
            ("read", Value::Null),
            ("read", json!(5)),
            ("read", json!(["x"])),
        ],
    ));
    let earlier = vec![
        earlier_summary(
            "s1",
            json!({}),
            &["docs/a.md:1-20", "docs/b.md"],
            &["src/old.rs"],
        ),
        earlier_summary(
            "s2",
            json!({"fromHook": true}),
            &["hooked.md"],
            &["hooked.rs"],
        ),
        earlier_summary("s3", json!({"fromExtension": true}), &["extension.md"], &[]),
        earlier_summary(
            "s4",
            json!({"fromHook": 0, "fromExtension": ""}),
            &["falsy.md"],
            &[],
        ),
        user("u1", "More."),
        assistant(
            "a1",
            &[("read", json!("docs/b.md")), ("edit", json!("docs/a.md"))],
        ),
    ];
    let plain = vec![user("u1", "Just talk."), assistant("a1", &[])];
    vec![
        (plain.clone(), "## Goal\nTalk.".to_owned()),
        (plain.clone(), String::new()),
        (plain.clone(), "  \n## Goal\r\nSpaces around.  \n\n".to_owned()),
        (plain.clone(), "Ends in wide space\u{3000}\u{feff}".to_owned()),
        (
            plain.clone(),
            "Before <files>\nx (Read)\n</files>\n\n after <read-files>\na\n</read-files><modified-files>b</modified-files>\n<files>unclosed".to_owned(),
        ),
        (with(calls(&[("read", "src/a.rs"), ("edit", "src/b.rs")])), "## Goal\nFix it.\n".to_owned()),
        (with(selectors_and_urls), "## Goal\nSelectors.".to_owned()),
        (with(sorting), "Sorted.".to_owned()),
        (with(odd_names), "Odd names.".to_owned()),
        (with(many), "Many files.".to_owned()),
        (odd_calls, "Odd calls.".to_owned()),
        (earlier, "## Goal\nAgain.".to_owned()),
        (
            with(calls(&[("read", "src/a.rs")])),
            "Text naming files <files>\nsrc/z.rs (Read)\n</files>".to_owned(),
        ),
    ]
}

/// What the agent stores for each case: `{summary, readFiles, modifiedFiles}`.
fn agent_results(dialect: Dialect, cases: &[(Vec<Value>, String)]) -> Vec<Value> {
    let input: Vec<Value> = cases
        .iter()
        .map(|(entries, text)| json!({"entries": entries, "text": text}))
        .collect();
    let (runtime, agent) = match dialect {
        Dialect::Pi => ("node".into(), "pi"),
        Dialect::Omp => (agents_bin().join("bun"), "omp"),
    };
    let mut child = Command::new(&runtime)
        .arg(repo().join("scripts/testing/branch-summary.mjs"))
        .arg(agent)
        .env("AGENTS_DIR", agents_modules().join(".."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", runtime.display()));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&serde_json::to_vec(&input).expect("cases"))
        .expect("write the cases");
    let out = child.wait_with_output().expect("the agent's summarizer");
    assert!(
        out.status.success(),
        "{agent}'s summarizer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the agent's answer is JSON")
}

fn check(dialect: Dialect) {
    let cases = cases();
    let theirs = agent_results(dialect, &cases);
    assert_eq!(theirs.len(), cases.len());
    for ((entries, text), theirs) in cases.iter().zip(&theirs) {
        let request = summary::build_request(entries, dialect, None, BUDGET)
            .unwrap_or_else(|| panic!("a request for {entries:?}"));
        let ours = summary::finish(&request, text);
        assert_eq!(
            ours.text,
            theirs["summary"].as_str().unwrap_or_default(),
            "{dialect:?}, model text {text:?}, entries {entries:?}"
        );
        assert_eq!(
            ours.details,
            json!({"readFiles": theirs["readFiles"], "modifiedFiles": theirs["modifiedFiles"]}),
            "{dialect:?}: the details of {entries:?}"
        );
    }
}

#[test]
fn pi_stores_summaries_as_the_engine_does() {
    check(Dialect::Pi);
}

#[test]
fn omp_stores_summaries_as_the_engine_does() {
    check(Dialect::Omp);
}

/// With an empty answer and no files, each agent stores its preamble alone (omp trims the end).
#[test]
fn the_preambles_are_the_installed_agents() {
    let plain = vec![(
        vec![user("u1", "Hello."), assistant("a1", &[])],
        String::new(),
    )];
    assert_eq!(
        agent_results(Dialect::Pi, &plain)[0]["summary"],
        json!(PI_PREAMBLE)
    );
    assert_eq!(
        agent_results(Dialect::Omp, &plain)[0]["summary"],
        json!(OMP_PREAMBLE)
    );
    // And as written in their installed files: pi's as a template literal, omp's as a prompt
    // file (its renderer drops the last newline).
    let modules = agents_modules();
    let pi = std::fs::read_to_string(
        modules.join("@mariozechner/pi-coding-agent/dist/core/compaction/branch-summarization.js"),
    )
    .expect("pi's branch-summarization.js");
    assert!(
        pi.contains(&format!("const BRANCH_SUMMARY_PREAMBLE = `{PI_PREAMBLE}`;")),
        "pi's preamble changed"
    );
    let omp = std::fs::read_to_string(
        modules.join("@oh-my-pi/pi-agent-core/src/compaction/prompts/branch-summary-preamble.md"),
    )
    .expect("omp's branch-summary-preamble.md");
    assert_eq!(omp, format!("{OMP_PREAMBLE}\n"));
}
