//! Replays a scripted scenario's ops through the engine with the fixture's clock and ids, the way
//! the fixtures' harness drove the agents' SessionManager, and compares the written files.
//!
//! How the harness turned ops into messages was read off the fixtures' `session.jsonl` files:
//! - `user`: `{role:"user", content:<text>, timestamp}`.
//! - `assistant`: `content` = `[thinking block if any, text block if the text is non-empty, one
//!   toolCall block per call]`, then `api:"fake-api"`, `provider` (default `anthropic`), `model`
//!   (default `claude-test`), a fixed `usage` with a zero `cost`, `stopReason` (default `stop`),
//!   `timestamp`, and `errorMessage` (the op's, or `"error"`) only for `error`/`aborted` turns.
//! - `toolResult`: `{role, toolCallId, toolName, content:[text block], isError (default false), timestamp}`.
//! - `bash`: `{role:"bashExecution", command, output, exitCode, cancelled:false, truncated:false,
//!   excludeFromContext?, timestamp}`.
//! - `customRoleMessage`: `{role:"custom", customType, content, display, timestamp}`.
//! - The clock moves `tickMs` before every op except `tick`, which moves it by `ms` alone.

use serde_json::{json, Map, Value};
use sessiontree_core::ids::ScriptedIds;
use sessiontree_core::session::{CompactionArgs, CustomMessageArgs, NameSource, SyncPolicy};
use sessiontree_core::time::{parse_iso_ms, ManualClock};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use super::diff::first_line_diff;

fn s<'a>(op: &'a Value, key: &str) -> Option<&'a str> {
    op.get(key).and_then(Value::as_str)
}

/// The session id inside a `<timestamp>_<id>.jsonl` file name.
fn id_from_basename(basename: &str) -> Option<String> {
    basename
        .strip_suffix(".jsonl")?
        .split_once('_')
        .map(|(_, id)| id.to_owned())
}

fn read_opt(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn ids_in(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let id = v.get("id")?.as_str()?.to_owned();
            let kind = v.get("type")?.as_str()?.to_owned();
            Some((id, kind))
        })
        .collect()
}

/// Replays `scenario` for `dialect`; `Err` names the first difference, `Ok` carries the manager's
/// session after the last op (the new one after `createBranchedSession`) for the `live` check.
pub fn replay(
    dialect: Dialect,
    scenario: &Value,
    expected: &Value,
    fixture_dir: &Path,
) -> Result<Session, String> {
    let ops = scenario
        .get("ops")
        .and_then(Value::as_array)
        .ok_or("no ops")?;
    let tick_ms = scenario
        .get("tickMs")
        .and_then(Value::as_i64)
        .unwrap_or(1000);
    let start = expected
        .get("clockStart")
        .and_then(Value::as_str)
        .and_then(parse_iso_ms)
        .ok_or("no clockStart")? as i64;
    let refs = expected
        .get("refs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let cwd = expected.get("cwd").and_then(Value::as_str).unwrap_or("");
    let fixture_session_dir = expected
        .get("sessionDir")
        .and_then(Value::as_str)
        .unwrap_or("");
    let session_file = expected.get("sessionFile").ok_or("no sessionFile")?;
    let basename = session_file
        .get("basename")
        .and_then(Value::as_str)
        .ok_or("no sessionFile.basename")?;
    let session_exists = session_file
        .get("exists")
        .and_then(Value::as_bool)
        .unwrap_or(false);

    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = tmp.path().join("sessions");
    let clock = ManualClock::new(start);
    let ids = ScriptedIds::new();
    ids.push_session(id_from_basename(basename).ok_or("bad basename")?);
    let options = || OpenOptions {
        dialect: Some(dialect),
        clock: Arc::new(clock.clone()),
        ids: Box::new(ids.clone()),
        sync: SyncPolicy::None,
        view_facts: true,
    };
    let mut session = Session::create(dialect, cwd, Some(&dir), options());
    let reference = |name: &str| -> Result<String, String> {
        if let Some(literal) = name.strip_prefix('=') {
            return Ok(literal.to_owned());
        }
        refs.get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("unknown ref {name}"))
    };
    let fixture_branched = read_opt(&fixture_dir.join("branched.jsonl"));
    let fixture_session = read_opt(&fixture_dir.join("session.jsonl"));
    let mut branched_path = None;

    for (n, op) in ops.iter().enumerate() {
        let kind = s(op, "op").unwrap_or("");
        if kind == "tick" {
            clock.advance(op.get("ms").and_then(Value::as_i64).unwrap_or(0));
            continue;
        }
        clock.advance(tick_ms);
        let now = clock.now_ms_value();
        if let Some(r) = s(op, "ref") {
            ids.push_entry(reference(r)?);
        }
        let fail = |e: sessiontree_core::Error| format!("op {n} ({kind}): {e}");
        match kind {
            "user" => {
                session
                    .append_message(
                        json!({"role":"user","content":s(op,"text").unwrap_or(""),"timestamp":now}),
                    )
                    .map_err(fail)?;
            }
            "assistant" => {
                let mut content = Vec::new();
                if let Some(thinking) = s(op, "thinking") {
                    content.push(json!({"type":"thinking","thinking":thinking}));
                }
                if let Some(text) = s(op, "text").filter(|t| !t.is_empty()) {
                    content.push(json!({"type":"text","text":text}));
                }
                for call in op
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    content.push(json!({"type":"toolCall","id":call.get("id"),"name":call.get("name"),"arguments":call.get("args")}));
                }
                let stop = s(op, "stopReason").unwrap_or("stop");
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert("content".into(), Value::Array(content));
                m.insert("api".into(), "fake-api".into());
                m.insert(
                    "provider".into(),
                    s(op, "provider").unwrap_or("anthropic").into(),
                );
                m.insert(
                    "model".into(),
                    s(op, "model").unwrap_or("claude-test").into(),
                );
                m.insert(
                    "usage".into(),
                    json!({"input":100,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":120,
                           "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}),
                );
                m.insert("stopReason".into(), stop.into());
                m.insert("timestamp".into(), now.clone());
                if stop == "error" || stop == "aborted" {
                    m.insert(
                        "errorMessage".into(),
                        s(op, "errorMessage").unwrap_or("error").into(),
                    );
                }
                session.append_message(Value::Object(m)).map_err(fail)?;
            }
            "toolResult" => {
                let msg = json!({"role":"toolResult","toolCallId":s(op,"toolCallId"),"toolName":s(op,"toolName"),
                    "content":[{"type":"text","text":s(op,"text").unwrap_or("")}],
                    "isError":op.get("isError").and_then(Value::as_bool).unwrap_or(false),"timestamp":now});
                session.append_message(msg).map_err(fail)?;
            }
            "bash" => {
                let mut m = Map::new();
                m.insert("role".into(), "bashExecution".into());
                m.insert(
                    "command".into(),
                    op.get("command").cloned().unwrap_or(Value::Null),
                );
                m.insert(
                    "output".into(),
                    op.get("output").cloned().unwrap_or_else(|| "".into()),
                );
                m.insert(
                    "exitCode".into(),
                    op.get("exitCode").cloned().unwrap_or(Value::Null),
                );
                m.insert("cancelled".into(), false.into());
                m.insert("truncated".into(), false.into());
                if let Some(x) = op.get("excludeFromContext") {
                    m.insert("excludeFromContext".into(), x.clone());
                }
                m.insert("timestamp".into(), now.clone());
                session.append_message(Value::Object(m)).map_err(fail)?;
            }
            "customRoleMessage" => {
                let mut m = Map::new();
                m.insert("role".into(), "custom".into());
                for key in ["customType", "content", "display", "details"] {
                    if let Some(v) = op.get(key) {
                        m.insert(key.into(), v.clone());
                    }
                }
                m.insert("timestamp".into(), now.clone());
                session.append_message(Value::Object(m)).map_err(fail)?;
            }
            "model" => {
                session
                    .append_model_change(
                        s(op, "provider").unwrap_or(""),
                        s(op, "modelId").unwrap_or(""),
                        s(op, "role"),
                        false,
                    )
                    .map_err(fail)?;
            }
            "thinking" => {
                session
                    .append_thinking_level_change(s(op, "level"), None)
                    .map_err(fail)?;
            }
            "label" => {
                let target = reference(s(op, "target").ok_or("label without target")?)?;
                session
                    .append_label_change(&target, s(op, "label"))
                    .map_err(fail)?;
            }
            "branch" => {
                let target = reference(s(op, "target").ok_or("branch without target")?)?;
                session.branch(&target).map_err(fail)?;
            }
            "resetLeaf" => session.reset_leaf(),
            "branchWithSummary" => {
                let target = match s(op, "target") {
                    Some(t) => Some(reference(t)?),
                    None => None,
                };
                session
                    .branch_with_summary(
                        target.as_deref(),
                        s(op, "summary").unwrap_or(""),
                        None,
                        None,
                    )
                    .map_err(fail)?;
            }
            "compaction" => {
                let first_kept =
                    reference(s(op, "firstKept").ok_or("compaction without firstKept")?)?;
                session
                    .append_compaction(CompactionArgs {
                        summary: s(op, "summary").unwrap_or("").to_owned(),
                        first_kept_entry_id: first_kept,
                        tokens_before: op.get("tokensBefore").cloned().unwrap_or(Value::Null),
                        ..Default::default()
                    })
                    .map_err(fail)?;
            }
            "custom" => {
                session
                    .append_custom(s(op, "customType").unwrap_or(""), op.get("data").cloned())
                    .map_err(fail)?;
            }
            "customMessage" => {
                session
                    .append_custom_message(CustomMessageArgs {
                        custom_type: op.get("customType").cloned(),
                        content: op.get("content").cloned(),
                        display: op.get("display").cloned(),
                        details: op.get("details").cloned(),
                        ..Default::default()
                    })
                    .map_err(fail)?;
            }
            "name" => {
                let name = s(op, "name").unwrap_or("");
                match dialect {
                    Dialect::Pi => {
                        session.append_session_info(name).map_err(fail)?;
                    }
                    Dialect::Omp => {
                        session
                            .set_session_name(name, NameSource::User, None)
                            .map_err(fail)?;
                    }
                }
            }
            "serviceTier" => {
                session
                    .append_service_tier_change(op.get("tier").cloned().unwrap_or(Value::Null))
                    .map_err(fail)?;
            }
            "mode" => {
                session
                    .append_mode_change(s(op, "mode").unwrap_or(""), op.get("data").cloned())
                    .map_err(fail)?;
            }
            "ttsr" => {
                let rules = op
                    .get("rules")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                session.append_ttsr_injection(rules).map_err(fail)?;
            }
            "resetBoundary" => {
                session.append_reset_boundary().map_err(fail)?;
            }
            "createBranchedSession" => {
                let target =
                    reference(s(op, "target").ok_or("createBranchedSession without target")?)?;
                let info = expected
                    .get("branchedSessionFile")
                    .ok_or("no branchedSessionFile")?;
                let new_base = info
                    .get("basename")
                    .and_then(Value::as_str)
                    .ok_or("no branchedSessionFile.basename")?;
                ids.push_session(id_from_basename(new_base).ok_or("bad branched basename")?);
                // The label ids it re-creates: label entries of branched.jsonl that neither the
                // source file nor a later op's ref accounts for.
                if let Some(text) = &fixture_branched {
                    let source: HashSet<String> = fixture_session
                        .as_deref()
                        .map(ids_in)
                        .unwrap_or_default()
                        .into_iter()
                        .map(|(id, _)| id)
                        .collect();
                    let referenced: HashSet<&str> =
                        refs.values().filter_map(Value::as_str).collect();
                    for (id, kind) in ids_in(text) {
                        if kind == "label"
                            && !source.contains(&id)
                            && !referenced.contains(id.as_str())
                        {
                            ids.push_entry(id);
                        }
                    }
                }
                let fork = session
                    .create_branched_session(&target, Box::new(ids.clone()))
                    .map_err(fail)?;
                branched_path = Some(dir.join(new_base));
                session = fork;
            }
            other => return Err(format!("op {n}: unsupported op `{other}`")),
        }
    }

    // The files: existence, names, bytes.
    let ours_session = dir.join(basename);
    check_file(
        &ours_session,
        session_exists,
        fixture_session.as_deref(),
        tmp.path(),
        fixture_session_dir,
        "session.jsonl",
    )?;
    if let Some(info) = expected.get("branchedSessionFile") {
        let exists = info.get("exists").and_then(Value::as_bool).unwrap_or(false);
        let path =
            branched_path.ok_or("branchedSessionFile expected but no createBranchedSession ran")?;
        check_file(
            &path,
            exists,
            fixture_branched.as_deref(),
            tmp.path(),
            fixture_session_dir,
            "branched.jsonl",
        )?;
    }
    // No stray files.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut want: Vec<String> = Vec::new();
    if session_exists {
        want.push(basename.to_owned());
    }
    if let Some(info) = expected.get("branchedSessionFile") {
        if info.get("exists").and_then(Value::as_bool) == Some(true) {
            if let Some(b) = info.get("basename").and_then(Value::as_str) {
                want.push(b.to_owned());
            }
        }
    }
    want.sort();
    if names != want {
        return Err(format!("files written: {names:?}, expected {want:?}"));
    }
    Ok(session)
}

fn check_file(
    ours: &Path,
    exists: bool,
    fixture: Option<&str>,
    tmp_root: &Path,
    fixture_dir: &str,
    what: &str,
) -> Result<(), String> {
    let ours_text = read_opt(ours);
    match (exists, ours_text) {
        (false, None) => Ok(()),
        (false, Some(_)) => Err(format!(
            "{what}: we wrote {} but the agent did not",
            ours.display()
        )),
        (true, None) => Err(format!(
            "{what}: the agent wrote it, we did not ({})",
            ours.display()
        )),
        (true, Some(text)) => {
            let ours_dir = tmp_root.join("sessions");
            let text = text.replace(&*ours_dir.to_string_lossy(), fixture_dir);
            let fixture = fixture.ok_or_else(|| format!("{what}: fixture file missing"))?;
            match first_line_diff(&text, fixture) {
                None => Ok(()),
                Some(d) => Err(format!("{what} differs at {d}")),
            }
        }
    }
}

/// `ManualClock` reads as a JSON number of epoch milliseconds.
trait NowValue {
    fn now_ms_value(&self) -> Value;
}

impl NowValue for ManualClock {
    fn now_ms_value(&self) -> Value {
        use sessiontree_core::time::Clock;
        Value::from(self.now_ms())
    }
}
