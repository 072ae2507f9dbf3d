//! The `sessiontree` binary's inspect / check / migrate, run as a user runs them.

#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "../../core/tests/conformance/deep_json.rs"]
mod deep_json;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sessiontree"))
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    // The fixtures were rendered with HOME=/tmp/refgen-home (paths under it shown as `~/…`).
    match bin().args(args).env("HOME", "/tmp/refgen-home").output() {
        Ok(o) => o,
        Err(e) => panic!("cannot run sessiontree: {e}"),
    }
}

fn scenario_dirs() -> Vec<PathBuf> {
    sessiontree_testkit::fixtures::all_scenarios()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    match deep_json::parse(&text) {
        Ok(v) => v,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

/// The files to compare: each agent-written `session.jsonl` / `branched.jsonl` (dialect detected
/// from the file) and each hand-made `input.jsonl` the agent loaded as it is (dialect forced: a
/// legacy file could come from either agent). v1 inputs (random ids in the agents) and inputs the
/// agent refused or wiped are covered by the conformance suite instead.
fn inspect_cases() -> Vec<(PathBuf, &'static str, bool, Value)> {
    let mut cases = Vec::new();
    for dir in scenario_dirs() {
        for dialect in ["pi", "omp"] {
            let expected = read_json(&dir.join(dialect).join("expected.json"));
            for (file, key) in [
                ("session.jsonl", "reloaded"),
                ("branched.jsonl", "branchedReloaded"),
            ] {
                let path = dir.join(dialect).join(file);
                if let (true, Some(want)) = (path.exists(), expected.get(key)) {
                    cases.push((path, dialect, false, want.clone()));
                }
            }
            let input = dir.join("input.jsonl");
            let (Ok(text), Some(want)) =
                (std::fs::read_to_string(&input), expected.get("reloaded"))
            else {
                continue;
            };
            let header = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|v| v.get("type").and_then(Value::as_str) == Some("session"));
            let v1 = header
                .as_ref()
                .and_then(|h| h.get("version"))
                .and_then(Value::as_u64)
                .unwrap_or(1)
                < 2;
            let same_session = header.as_ref().and_then(|h| h.get("id")) == want.get("sessionId");
            if !v1 && same_session {
                cases.push((input, dialect, true, want.clone()));
            }
        }
    }
    cases
}

/// The search queries of the scenario a fixture file belongs to (`scenario.json`).
fn scenario_searches(file: &Path) -> Vec<String> {
    let scenario = file
        .ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("scenario.json"))
        .find(|p| p.is_file());
    scenario
        .map(|p| read_json(&p))
        .and_then(|v| v.get("searches").cloned())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|q| q.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn inspect_json_matches_every_fixture() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (file, dialect, force, want) in inspect_cases() {
        let Some(want) = want.as_object() else {
            continue;
        };
        let mut args: Vec<&std::ffi::OsStr> = vec!["inspect".as_ref(), "--json".as_ref()];
        if force {
            args.push("--dialect".as_ref());
            args.push(dialect.as_ref());
        }
        let searches = scenario_searches(&file);
        for query in &searches {
            args.push("--search".as_ref());
            args.push(query.as_ref());
        }
        args.push(file.as_os_str());
        let out = run(&args);
        if !out.status.success() {
            failures.push(format!(
                "{}: exit {:?}: {}",
                file.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let ours = match deep_json::parse(&String::from_utf8_lossy(&out.stdout)) {
            Ok(Value::Object(m)) => m,
            other => {
                failures.push(format!(
                    "{}: not one JSON object: {other:?}",
                    file.display()
                ));
                continue;
            }
        };
        checked += 1;
        if ours.get("dialect").and_then(Value::as_str) != Some(dialect) {
            failures.push(format!(
                "{} [{dialect}]: dialect {:?}",
                file.display(),
                ours.get("dialect")
            ));
        }
        if !ours.get("diagnostics").is_some_and(Value::is_array) {
            failures.push(format!("{}: no diagnostics array", file.display()));
        }
        for (key, value) in want {
            if key == "context" && !ours.contains_key("context") {
                continue;
            }
            if ours.get(key) != Some(value) {
                failures.push(format!("{} [{dialect}]: `{key}` differs", file.display()));
            }
        }
        for key in ours.keys() {
            if !want.contains_key(key) && key != "dialect" && key != "diagnostics" {
                failures.push(format!("{}: unexpected key `{key}`", file.display()));
            }
        }
    }
    println!(
        "inspect --json: {checked} fixture files checked, {} failures",
        failures.len()
    );
    assert!(checked > 0, "no fixtures found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn check_exit_codes() {
    let root = sessiontree_testkit::conformance_dirs().remove(0);
    let code = |file: PathBuf| run(&["check".as_ref(), file.as_os_str()]).status.code();
    // Clean file: 0. Malformed lines are warnings: 0. A parent cycle is an error: 1.
    assert_eq!(
        code(root.join("c01-linear-basic/pi/session.jsonl")),
        Some(0)
    );
    assert_eq!(code(root.join("M01-malformed-lines/input.jsonl")), Some(0));
    assert_eq!(code(root.join("M04-parent-cycle/input.jsonl")), Some(1));
    // No session header, or no file at all: cannot open, 2, with the typed error on stderr.
    let out = run(&[
        "check".as_ref(),
        root.join("M03-invalid-header/input.jsonl").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a session file"));
    assert_eq!(code(root.join("does-not-exist.jsonl")), Some(2));
    // The listing names file and line.
    let out = run(&[
        "check".as_ref(),
        root.join("M01-malformed-lines/input.jsonl").as_os_str(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("input.jsonl:3: warning:"), "{text}");
}

#[test]
fn inspect_leaf_and_summary() {
    let file = sessiontree_testkit::fixture("c06-branch-basic/pi/session.jsonl");
    let expected = read_json(&sessiontree_testkit::fixture(
        "c06-branch-basic/pi/expected.json",
    ));
    let first = expected["reloaded"]["entryIds"][0]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let out = run(&[
        "inspect".as_ref(),
        "--json".as_ref(),
        "--leaf".as_ref(),
        first.as_ref(),
        file.as_os_str(),
    ]);
    assert!(out.status.success());
    let v = deep_json::parse(&String::from_utf8_lossy(&out.stdout)).unwrap_or(Value::Null);
    assert_eq!(v["leafId"], Value::from(first.as_str()));
    assert_eq!(v["branch"], serde_json::json!([first]));
    let out = run(&[
        "inspect".as_ref(),
        "--leaf".as_ref(),
        "nope0000".as_ref(),
        file.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope0000"));
    let out = run(&["inspect".as_ref(), file.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("dialect:     pi") && text.contains("branch:"),
        "{text}"
    );
    // --dialect overrides detection.
    let out = run(&[
        "inspect".as_ref(),
        "--json".as_ref(),
        "--dialect".as_ref(),
        "omp".as_ref(),
        file.as_os_str(),
    ]);
    let v = deep_json::parse(&String::from_utf8_lossy(&out.stdout)).unwrap_or(Value::Null);
    assert_eq!(v["dialect"], Value::from("omp"));
}

#[test]
fn migrate_keeps_a_backup_and_the_result_loads() {
    let input = sessiontree_testkit::fixture("L01-v1-linear-with-compaction/input.jsonl");
    let original = std::fs::read(&input).unwrap_or_default();
    assert!(!original.is_empty());
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = tmp.path().join("legacy.jsonl");
    std::fs::write(&file, &original).unwrap_or_else(|e| panic!("{e}"));

    let out = run(&[
        "migrate".as_ref(),
        "--dialect".as_ref(),
        "pi".as_ref(),
        file.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("backup:"), "{text}");
    let backup = tmp.path().join("legacy.jsonl.bak");
    assert_eq!(
        std::fs::read(&backup).ok(),
        Some(original.clone()),
        "backup differs from the input"
    );
    assert_ne!(std::fs::read(&file).ok(), Some(original));

    let out = run(&["inspect".as_ref(), "--json".as_ref(), file.as_os_str()]);
    assert!(out.status.success());
    let v = deep_json::parse(&String::from_utf8_lossy(&out.stdout)).unwrap_or(Value::Null);
    assert_eq!(v["header"]["version"], Value::from(3));
    assert_eq!(v["entryIds"].as_array().map(Vec::len), Some(8));

    // A second run has nothing to do.
    let out = run(&["migrate".as_ref(), file.as_os_str()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("already current"));
}

/// `tree --fold`: pi's list as pi draws it after folding the branch holding the leaf (the lines
/// the installed pi printed for this file after Ctrl+← from the leaf); omp's session folds by the
/// same rule and draws no marker.
#[test]
fn tree_folds_as_pi_does() {
    let tree = |file: &Path, fold: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> =
            vec!["tree".as_ref(), "--width".as_ref(), "120".as_ref()];
        for id in fold {
            args.push("--fold".as_ref());
            args.push(id.as_ref());
        }
        args.push(file.as_os_str());
        let out = run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let pi = sessiontree_testkit::fixture("c06-branch-basic/pi/session.jsonl");
    assert_eq!(
        tree(&pi, &["a7f4ac9e"]),
        "  • user: Plan a trip\n  • assistant: Where to?\n› ├⊞ • user: Rome\n  └⊟ user: Paris\n        assistant: Paris is lovely.\n  (3/5)\n"
    );
    let omp = sessiontree_testkit::fixture("c06-branch-basic/omp/session.jsonl");
    let open = tree(&omp, &[]);
    let branch = "  ├─ • user: Rome\n› │  • assistant: Rome is historic.\n  └─ user: Paris\n";
    assert_eq!(
        open,
        format!("  • user: Plan a trip\n  • assistant: Where to?\n{branch}     assistant: Paris is lovely.\n")
    );
    assert_eq!(
        tree(&omp, &["c498f61c"]),
        format!("  • user: Plan a trip\n  • assistant: Where to?\n{branch}")
    );
}
