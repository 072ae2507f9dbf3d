//! The server in-process over a duplex pipe: every `sessionTree/*` method, every error kind a
//! client can provoke, the hooks, and the plain LSP features on a session document.

mod support;

use serde_json::{json, Value};
use support::inproc::{Answer, Client};
use support::*;

const OMP: &str = "c06-branch-basic/omp/session.jsonl";
// c06 omp ids: u1 2ececf0f → a1 42864a3e → (u2 c498f61c → a2 7af3bc6f | u3 6c055220 → a3 662d009f)
const U1: &str = "2ececf0f";
const A1: &str = "42864a3e";
const U2: &str = "c498f61c";
const A2: &str = "7af3bc6f";
const A3: &str = "662d009f";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_advertises_the_protocol() {
    let c = Client::start(None);
    let init = c
        .ok(
            "initialize",
            json!({"processId":null,"rootUri":null,"capabilities":{}}),
        )
        .await;
    let exp = &init["capabilities"]["experimental"]["sessionTree"];
    assert_eq!(
        exp["version"],
        json!(sessiontree_protocol::PROTOCOL_VERSION)
    );
    assert!(exp["features"]
        .as_array()
        .is_some_and(|f| f.contains(&json!("navigate"))));
    assert_eq!(init["capabilities"]["documentSymbolProvider"], json!(true));
    assert!(init["capabilities"]["executeCommandProvider"]["commands"]
        .as_array()
        .is_some_and(|c| c.len() == 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_close_and_their_errors() {
    let (dir, c, s) = Client::plain_on_copy(OMP).await;
    let u = &s.uri;
    let open = &s.open;
    assert_eq!(open["dialect"], json!("omp"));
    assert_eq!(open["leaf"], json!(A3));
    assert_eq!(open["entryCount"], json!(6));
    assert_eq!(open["diagnostics"], json!([]));
    // Opening again is idempotent.
    assert_eq!(
        c.ok("sessionTree/open", json!({"uri": u})).await["revision"],
        open["revision"]
    );

    let missing = c
        .err(
            "sessionTree/open",
            json!({"uri": uri(&dir.path().join("nope.jsonl"))}),
        )
        .await;
    assert_eq!(kind(&missing), "fileNotFound", "{missing}");
    assert!(missing["message"]
        .as_str()
        .is_some_and(|m| m.contains("nope.jsonl")));

    let bad = copy_fixture("M03-invalid-header/input.jsonl", dir.path(), "bad.jsonl");
    let invalid = c.err("sessionTree/open", json!({"uri": uri(&bad)})).await;
    assert_eq!(kind(&invalid), "invalidHeader", "{invalid}");
    assert_eq!(invalid["code"], json!(-32803));

    let not_uri = c.err("sessionTree/open", json!({"uri": "not a uri"})).await;
    assert_eq!(kind(&not_uri), "invalidParams");
    assert_eq!(not_uri["code"], json!(-32602));
    let malformed = c.err("sessionTree/open", json!({"path": "/x"})).await;
    assert_eq!(kind(&malformed), "invalidParams", "{malformed}");
    assert!(malformed["message"]
        .as_str()
        .is_some_and(|m| m.contains("uri")));

    assert_eq!(
        c.ok("sessionTree/close", json!({"uri": u})).await,
        json!({"closed": true})
    );
    assert_eq!(
        c.ok("sessionTree/close", json!({"uri": u})).await,
        json!({"closed": false})
    );
    let gone = c.err("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(kind(&gone), "sessionNotFound", "{gone}");

    let unknown = c.request("sessionTree/nope", json!({})).await;
    assert_eq!(unknown["error"]["code"], json!(-32601));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_sessions_finds_both_agents_folders_and_extra_roots() {
    let home = tempfile::tempdir().expect("tmp");
    let h = home.path();
    let project = h.join("project");
    std::fs::create_dir_all(&project).expect("mkdir");
    let omp_dir = h
        .join(".omp/agent/sessions")
        .join(sessiontree_lsp::omp_dir_name(
            &project,
            Some(h),
            &std::env::temp_dir(),
        ));
    let pi_dir = h
        .join(".pi/agent/sessions")
        .join(sessiontree_lsp::pi_dir_name(&project));
    let extra = h.join("extra");
    for d in [&omp_dir, &pi_dir, &extra] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    copy_fixture(OMP, &omp_dir, "a.jsonl");
    copy_fixture("c16-session-name/pi/session.jsonl", &pi_dir, "b.jsonl");
    copy_fixture("c01-linear-basic/pi/session.jsonl", &extra, "c.jsonl");
    std::fs::write(pi_dir.join("notes.txt"), "not a session").expect("write");
    let options = json!({
        "home": h, "ompAgentDir": h.join(".omp/agent"), "piAgentDir": h.join(".pi/agent"),
        "extraRoots": [extra], "liveWriterSeconds": 3600
    });
    let c = Client::initialized(false, options, None).await;
    let list = c
        .ok(
            "sessionTree/listSessions",
            json!({"folders": [uri(&project)]}),
        )
        .await;
    let sessions = list["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(sessions.len(), 3, "{list}");
    let by_name = |n: &str| {
        sessions
            .iter()
            .find(|s| s["path"].as_str().is_some_and(|p| p.ends_with(n)))
            .cloned()
    };
    let a = by_name("a.jsonl").expect("omp session");
    assert_eq!(
        (a["agent"].clone(), a["dialect"].clone()),
        (json!("omp"), json!("omp"))
    );
    assert_eq!(a["firstUserMessage"], json!("Plan a trip"));
    assert_eq!(a["entryCount"], json!(6));
    assert_eq!(a["liveWriter"], json!(true));
    let b = by_name("b.jsonl").expect("pi session");
    assert_eq!(b["agent"], json!("pi"));
    assert!(b["name"].is_string(), "{b}");
    let extra_one = by_name("c.jsonl").expect("extra root");
    assert_eq!(extra_one["agent"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_tree_entry_context() {
    let (_dir, c, s) = Client::plain_on_copy(OMP).await;
    let u = &s.uri;

    let rows = c
        .ok(
            "sessionTree/rows",
            json!({"uri": u, "width": 60, "height": 10}),
        )
        .await;
    assert_eq!(rows["selection"], json!(A3), "{rows}");
    assert_eq!(
        rows["lines"].as_array().map(Vec::len),
        rows["rows"].as_array().map(Vec::len)
    );
    assert_eq!(rows["totalRows"], json!(6));
    let users = c
        .ok("sessionTree/rows", json!({"uri": u, "filter": "userOnly"}))
        .await;
    assert!(
        users["rows"]
            .as_array()
            .is_some_and(|r| r.len() == 3 && r.iter().all(|r| r["role"] == json!("user"))),
        "{users}"
    );
    let found = c
        .ok(
            "sessionTree/rows",
            json!({"uri": u, "search": "paris", "filter": "all"}),
        )
        .await;
    assert!(
        found["rows"].as_array().is_some_and(|r| !r.is_empty()
            && r.iter()
                .all(|r| !r["matches"].as_array().is_some_and(Vec::is_empty))),
        "{found}"
    );
    let bad_filter = c
        .err(
            "sessionTree/rows",
            json!({"uri": u, "filter": "everything"}),
        )
        .await;
    assert_eq!(kind(&bad_filter), "invalidParams");

    let tree = c
        .ok(
            "sessionTree/tree",
            json!({"uri": u, "offset": 2, "limit": 2}),
        )
        .await;
    assert_eq!(tree["total"], json!(6));
    assert_eq!(tree["nodes"].as_array().map(Vec::len), Some(2));
    let all = c.ok("sessionTree/tree", json!({"uri": u})).await;
    let a1 = all["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["id"] == json!(A1)).cloned())
        .expect("a1");
    assert_eq!(a1["childCount"], json!(2));

    let entry = c.ok("sessionTree/entry", json!({"uri": u, "id": U2})).await;
    assert_eq!(entry["entry"]["message"]["content"], json!("Paris"));
    assert!(entry["markdown"]
        .as_str()
        .is_some_and(|m| m.contains("Paris") && m.contains(U2)));
    assert_eq!(entry["children"], json!([A2]));
    let missing = c
        .err("sessionTree/entry", json!({"uri": u, "id": "ffffffff"}))
        .await;
    assert_eq!(kind(&missing), "entryNotFound");
    assert!(missing["message"]
        .as_str()
        .is_some_and(|m| m.contains("ffffffff")));

    let ctx = c.ok("sessionTree/context", json!({"uri": u})).await;
    assert_eq!(ctx["messages"].as_array().map(Vec::len), Some(4), "{ctx}");
    assert!(ctx["text"].as_str().is_some_and(|t| t.contains("Rome")));
    // A view that shows only the messages leaves the text out; the rest is the same.
    let messages_only = c
        .ok("sessionTree/context", json!({"uri": u, "withText": false}))
        .await;
    let mut without_text = ctx.clone();
    if let Some(fields) = without_text.as_object_mut() {
        fields.remove("text");
    }
    assert_eq!(messages_only, without_text);
    let with_text = c
        .ok("sessionTree/context", json!({"uri": u, "withText": true}))
        .await;
    assert_eq!(with_text, ctx);
    let at = c
        .ok("sessionTree/context", json!({"uri": u, "leaf": A2}))
        .await;
    assert!(
        at["text"]
            .as_str()
            .is_some_and(|t| t.contains("Paris") && !t.contains("Rome")),
        "{at}"
    );
    let bad = c
        .err("sessionTree/context", json!({"uri": u, "leaf": "ffffffff"}))
        .await;
    assert_eq!(kind(&bad), "entryNotFound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigate_without_hooks() {
    let (dir, c, s) = Client::plain_on_copy(OMP).await;
    let u = &s.uri;
    let open = &s.open;
    let rev = open["revision"].as_u64().unwrap_or_default();

    let here = c
        .ok("sessionTree/navigate", json!({"uri": u, "targetId": A3}))
        .await;
    assert_eq!(here["alreadyAtThisPoint"], json!(true));
    assert_eq!(here["decision"], json!("stay"));

    let no_model = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    assert_eq!(kind(&no_model), "noModel", "{no_model}");
    let same = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(
        same["leaf"],
        json!(A3),
        "a refused navigation must not move the leaf"
    );

    let stale = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "baseRevision": rev + 5}),
        )
        .await;
    assert_eq!(kind(&stale), "staleRevision");
    assert_eq!(stale["code"], json!(-32801));

    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "baseRevision": rev}),
        )
        .await;
    assert_eq!(nav["decision"], json!("parent"), "{nav}");
    assert_eq!(nav["newLeaf"], json!(A1));
    assert_eq!(nav["oldLeaf"], json!(A3));
    assert_eq!(nav["editorText"], json!("Paris"));
    assert!(nav["revision"].as_u64() > Some(rev));
    let ev = c
        .notification("sessionTree/didNavigate", 5)
        .await
        .expect("didNavigate");
    assert_eq!(
        (
            ev["newLeaf"].clone(),
            ev["oldLeaf"].clone(),
            ev["fromClient"].clone()
        ),
        (json!(A1), json!(A3), json!(false))
    );

    let to_assistant = c
        .ok("sessionTree/navigate", json!({"uri": u, "targetId": A2}))
        .await;
    assert_eq!(to_assistant["decision"], json!("target"));
    let root = c
        .ok("sessionTree/navigate", json!({"uri": u, "targetId": U1}))
        .await;
    assert_eq!(
        (root["decision"].clone(), root["newLeaf"].clone()),
        (json!("root"), Value::Null)
    );
    assert_eq!(root["editorText"], json!("Plan a trip"));

    let missing = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": "ffffffff"}),
        )
        .await;
    assert_eq!(kind(&missing), "entryNotFound");
    let bad = c
        .err(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "maybe"}),
        )
        .await;
    assert_eq!(kind(&bad), "invalidParams");
    // Nothing of that was written.
    assert_eq!(
        std::fs::read(dir.path().join("s.jsonl")).ok(),
        std::fs::read(fixture(OMP)).ok()
    );
    // A client that did not declare hooks is never asked.
    assert!(
        c.asked.lock().map(|a| a.is_empty()).unwrap_or(false),
        "hooks sent to a client without them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigate_hooks_supply_a_summary_or_cancel() {
    let dir = tempfile::tempdir().expect("tmp");
    let answer: Answer = std::sync::Arc::new(|method: &str, params: &Value| match method {
        "sessionTree/beforeTree" if params["targetId"] == json!(A2) => json!({"cancel": true}),
        "sessionTree/beforeTree" => {
            json!({"summary": {"summary": "We talked about Rome.", "details": {"by": "test"}}})
        }
        _ => json!({"cancel": false}),
    });
    let c = Client::initialized(true, Value::Null, Some(answer)).await;
    let u = c.open_copy(dir.path(), OMP).await.uri;

    let nav = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": u, "targetId": U2, "summarize": "summarize"}),
        )
        .await;
    let summary_id = nav["summaryEntryId"]
        .as_str()
        .expect("a summary entry")
        .to_owned();
    assert_eq!(nav["newLeaf"], json!(summary_id));
    let asked = c.asked.lock().map(|a| a.clone()).unwrap_or_default();
    let (_, prep) = asked
        .iter()
        .find(|(m, _)| m == "sessionTree/beforeTree")
        .cloned()
        .expect("beforeTree asked");
    assert_eq!(prep["oldLeaf"], json!(A3));
    assert_eq!(prep["commonAncestor"], json!(A1));
    assert_eq!(prep["entriesToSummarize"], json!(["6c055220", A3]));
    assert_eq!(prep["userWantsSummary"], json!(true));
    let ev = c
        .notification("sessionTree/didNavigate", 5)
        .await
        .expect("didNavigate");
    assert_eq!(ev["fromClient"], json!(true));
    assert_eq!(ev["summaryEntryId"], json!(summary_id));
    let entry = c
        .ok("sessionTree/entry", json!({"uri": u, "id": summary_id}))
        .await;
    assert_eq!(entry["entry"]["type"], json!("branch_summary"));
    assert_eq!(entry["entry"]["parentId"], json!(A1));
    assert_eq!(entry["entry"]["fromExtension"], json!(true));

    let cancelled = c
        .ok("sessionTree/navigate", json!({"uri": u, "targetId": A2}))
        .await;
    assert_eq!(cancelled["cancelled"], json!(true));
    assert_eq!(cancelled["newLeaf"], json!(summary_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn branch_makes_a_new_file() {
    let (dir, c, s) = Client::plain_on_copy(OMP).await;
    let u = &s.uri;
    let b = c
        .ok("sessionTree/branch", json!({"uri": u, "entryId": U2}))
        .await;
    assert_eq!(b["editorText"], json!("Paris"));
    assert_eq!(b["written"], json!(true));
    let path = b["newPath"].as_str().expect("new path").to_owned();
    let text = std::fs::read_to_string(&path).expect("new file");
    assert!(
        text.contains(U1) && text.contains(A1) && !text.contains(U2),
        "{text}"
    );
    let ev = c
        .notification("sessionTree/didBranch", 5)
        .await
        .expect("didBranch");
    assert_eq!(ev["newUri"], b["newUri"]);
    // The new session is open already.
    let opened = c.ok("sessionTree/tree", json!({"uri": b["newUri"]})).await;
    assert_eq!(opened["leaf"], json!(A1));

    let root = c
        .ok("sessionTree/branch", json!({"uri": u, "entryId": U1}))
        .await;
    assert_eq!(root["editorText"], json!("Plan a trip"));

    let not_user = c
        .err("sessionTree/branch", json!({"uri": u, "entryId": A1}))
        .await;
    assert_eq!(kind(&not_user), "notUserMessage");
    assert!(not_user["message"].as_str().is_some_and(|m| m.contains(A1)));
    let missing = c
        .err(
            "sessionTree/branch",
            json!({"uri": u, "entryId": "ffffffff"}),
        )
        .await;
    assert_eq!(kind(&missing), "entryNotFound");
    // The source file is untouched.
    assert_eq!(
        std::fs::read(dir.path().join("s.jsonl")).ok(),
        std::fs::read(fixture(OMP)).ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn branch_hook_can_cancel() {
    let dir = tempfile::tempdir().expect("tmp");
    let answer: Answer = std::sync::Arc::new(|_: &str, _: &Value| json!({"cancel": true}));
    let c = Client::initialized(true, Value::Null, Some(answer)).await;
    let u = c.open_copy(dir.path(), OMP).await.uri;
    let b = c
        .ok("sessionTree/branch", json!({"uri": u, "entryId": U2}))
        .await;
    assert_eq!(
        (b["cancelled"].clone(), b["newUri"].clone()),
        (json!(true), Value::Null)
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).map(Iterator::count).ok(),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_appends_and_names() {
    let (dir, c, s) = Client::plain_on_copy(OMP).await;
    let u = &s.uri;
    let open = &s.open;
    let rev = open["revision"].as_u64().unwrap_or_default();

    let set = c
        .ok(
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": U1, "label": "start", "baseRevision": rev}),
        )
        .await;
    assert_eq!(set["leaf"], set["entryId"]);
    let change = c
        .notification("sessionTree/didChange", 5)
        .await
        .expect("didChange");
    assert_eq!(
        (change["reason"].clone(), change["newEntryIds"].clone()),
        (json!("label"), json!([set["entryId"]]))
    );
    assert_eq!(change["revision"], set["revision"]);
    let e = c.ok("sessionTree/entry", json!({"uri": u, "id": U1})).await;
    assert_eq!(e["label"], json!("start"));
    c.ok(
        "sessionTree/setLabel",
        json!({"uri": u, "targetId": U1, "label": null}),
    )
    .await;
    assert_eq!(
        c.ok("sessionTree/entry", json!({"uri": u, "id": U1})).await["label"],
        Value::Null
    );

    let stale = c
        .err(
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": U1, "label": "x", "baseRevision": rev}),
        )
        .await;
    assert_eq!(kind(&stale), "staleRevision");
    assert!(stale["data"]["revision"].as_u64() > Some(rev));
    let missing = c
        .err(
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": "ffffffff", "label": "x"}),
        )
        .await;
    assert_eq!(kind(&missing), "entryNotFound");

    let user = c
        .ok(
            "sessionTree/append",
            json!({"uri": u, "text": "And Berlin?"}),
        )
        .await;
    let custom = c.ok("sessionTree/append", json!({"uri": u, "kind": "custom", "text": "note", "customType": "memo", "display": true})).await;
    let text = std::fs::read_to_string(dir.path().join("s.jsonl")).expect("read");
    let last: Vec<Value> = text
        .lines()
        .rev()
        .take(2)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(last[0]["customType"], json!("memo"));
    assert_eq!(last[0]["parentId"], user["entryId"]);
    assert_eq!(last[1]["message"]["content"], json!("And Berlin?"));
    assert_eq!(custom["leaf"], custom["entryId"]);
    let empty = c
        .err("sessionTree/append", json!({"uri": u, "text": "  "}))
        .await;
    assert_eq!(kind(&empty), "invalidParams");

    let named = c
        .ok(
            "sessionTree/setName",
            json!({"uri": u, "name": "Trip planning"}),
        )
        .await;
    assert_eq!(
        (named["applied"].clone(), named["name"].clone()),
        (json!(true), json!("Trip planning"))
    );
    let head = text_first_line(&dir.path().join("s.jsonl"));
    assert!(
        head.contains("Trip planning") && head.len() == 255,
        "title slot rewritten in place: {head}"
    );
    let plan = c
        .ok(
            "sessionTree/nameFromPlanTitle",
            json!({"uri": u, "planTitle": "fix-the_login"}),
        )
        .await;
    assert_eq!(
        (plan["applied"].clone(), plan["name"].clone()),
        (json!(false), json!("Trip planning"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn name_from_plan_title_names_an_unnamed_session() {
    let (_dir, c, s) = Client::plain_on_copy("c06-branch-basic/pi/session.jsonl").await;
    let u = &s.uri;
    let plan = c
        .ok(
            "sessionTree/nameFromPlanTitle",
            json!({"uri": u, "planTitle": "fix-the_login"}),
        )
        .await;
    assert_eq!(
        (plan["applied"].clone(), plan["name"].clone()),
        (json!(true), json!("Fix the login"))
    );
}

fn text_first_line(path: &std::path::Path) -> String {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| t.lines().next().map(str::to_owned))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_lsp_on_a_session_document() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    let file = copy_fixture(OMP, dir.path(), "s.jsonl");
    let u = uri(&file);
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "jsonl", "version": 1, "text": ""}}),
    )
    .await;
    let diags = c
        .notification("textDocument/publishDiagnostics", 5)
        .await
        .expect("diagnostics");
    assert_eq!(diags["diagnostics"], json!([]));

    let symbols = c
        .ok(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": u}}),
        )
        .await;
    // u1, a1 flat; a1 is a branch point with two branches (u2 → a2, u3 → a3).
    let top = symbols.as_array().cloned().unwrap_or_default();
    assert_eq!(top.len(), 2, "{symbols}");
    assert_eq!(top[0]["detail"], json!(U1));
    let branches = top[1]["children"].as_array().cloned().unwrap_or_default();
    assert_eq!(branches.len(), 2);
    assert_eq!(branches[0]["detail"], json!(U2));
    assert_eq!(branches[0]["children"][0]["detail"], json!(A2));
    assert_eq!(top[0]["range"]["start"]["line"], json!(2));

    let hover = c
        .ok(
            "textDocument/hover",
            json!({"textDocument": {"uri": u}, "position": {"line": 4, "character": 3}}),
        )
        .await;
    assert!(
        hover["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("Paris")),
        "{hover}"
    );
    let head = c
        .ok(
            "textDocument/hover",
            json!({"textDocument": {"uri": u}, "position": {"line": 1, "character": 3}}),
        )
        .await;
    assert!(
        head["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("01941f29") && v.contains("omp")),
        "{head}"
    );
    let def = c
        .ok(
            "textDocument/definition",
            json!({"textDocument": {"uri": u}, "position": {"line": 4, "character": 0}}),
        )
        .await;
    assert_eq!(def["range"]["start"]["line"], json!(3), "{def}");
    let lenses = c
        .ok("textDocument/codeLens", json!({"textDocument": {"uri": u}}))
        .await;
    assert!(lenses.as_array().is_some_and(|l| l
        .iter()
        .any(|l| l["command"]["command"] == json!("sessionTree.branch"))));
    let actions = c
        .ok("textDocument/codeAction", json!({"textDocument": {"uri": u}, "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 0}}, "context": {"diagnostics": []}}))
        .await;
    let titles: Vec<String> = actions
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|a| a["title"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        titles.iter().any(|t| t == "Navigate here")
            && titles.iter().any(|t| t == "Branch from here"),
        "{titles:?}"
    );

    let label = c
        .ok(
            "workspace/executeCommand",
            json!({"command": "sessionTree.label", "arguments": [u, U2, "dest"]}),
        )
        .await;
    assert!(label["entryId"].is_string(), "{label}");
    let nav = c
        .ok(
            "workspace/executeCommand",
            json!({"command": "sessionTree.navigate", "arguments": [u, A2]}),
        )
        .await;
    assert_eq!(nav["newLeaf"], json!(A2));
    let bad = c
        .err(
            "workspace/executeCommand",
            json!({"command": "sessionTree.navigate", "arguments": []}),
        )
        .await;
    assert_eq!(kind(&bad), "invalidParams");

    let sym = c.ok("workspace/symbol", json!({"query": "paris"})).await;
    let first = sym
        .as_array()
        .and_then(|s| s.first())
        .cloned()
        .expect("a match");
    assert!(
        first["name"]
            .as_str()
            .is_some_and(|n| n.to_lowercase().contains("paris")),
        "{sym}"
    );
    // Closing the document stops following a session no client opened through the protocol.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}))
        .await;
    let gone = c.err("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(kind(&gone), "sessionNotFound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_report_orphans_duplicates_and_dangling_labels() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    let file = copy_fixture(
        "M02-orphans-and-duplicates/input.jsonl",
        dir.path(),
        "m.jsonl",
    );
    let u = uri(&file);
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": u, "languageId": "jsonl", "version": 1, "text": ""}}),
    )
    .await;
    let diags = c
        .notification("textDocument/publishDiagnostics", 5)
        .await
        .expect("diagnostics");
    let codes: Vec<String> = diags["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|d| d["code"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for want in ["orphan", "duplicateId", "labelOnUnknownEntry"] {
        assert!(
            codes.iter().any(|c| c == want),
            "{want} missing in {codes:?}"
        );
    }
    let open = c.ok("sessionTree/open", json!({"uri": u})).await;
    assert!(open["diagnostics"].as_array().is_some_and(|d| d.len() >= 3));
    // Opened through the protocol too: closing the document keeps it.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}))
        .await;
    assert!(
        c.ok("sessionTree/tree", json!({"uri": open["uri"]})).await["total"].as_u64() > Some(0)
    );

    let garbage = dir.path().join("g.jsonl");
    std::fs::write(&garbage, "not json\n").expect("write");
    c.notify("textDocument/didOpen", json!({"textDocument": {"uri": uri(&garbage), "languageId": "jsonl", "version": 1, "text": ""}})).await;
    let d = loop {
        let d = c
            .notification("textDocument/publishDiagnostics", 5)
            .await
            .expect("diagnostics");
        if d["uri"] == json!(uri(&garbage)) {
            break d;
        }
    };
    assert_eq!(d["diagnostics"][0]["code"], json!("invalidHeader"), "{d}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_the_agents_tree_render() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    for scenario in ["c06-branch-basic", "c05-labels", "c22-label-moves-leaf"] {
        for dialect in ["omp", "pi"] {
            let rel = format!("{scenario}/{dialect}/session.jsonl");
            let file = copy_fixture(&rel, dir.path(), &format!("{scenario}-{dialect}.jsonl"));
            let expected: Value =
                std::fs::read_to_string(fixture(&format!("{scenario}/{dialect}/expected.json")))
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .expect("expected.json");
            let render = &expected["reloaded"]["treeRender"];
            let u = c.ok("sessionTree/open", json!({"uri": uri(&file)})).await["uri"].clone();
            for (name, filter) in [
                ("default", "default"),
                ("no-tools", "noTools"),
                ("user-only", "userOnly"),
                ("labeled-only", "labeledOnly"),
                ("all", "all"),
            ] {
                let rows = c
                    .ok("sessionTree/rows", json!({"uri": u, "filter": filter, "width": render["width"], "height": render["terminalHeight"]}))
                    .await;
                assert_eq!(rows["lines"], render["filters"][name], "{rel} {name}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_are_answered_while_a_hook_is_pending_and_changes_wait() {
    let dir = tempfile::tempdir().expect("tmp");
    let answer: Answer = std::sync::Arc::new(|method: &str, params: &Value| {
        assert_eq!(method, "sessionTree/beforeTree");
        // The abandoned entries come with the request, so a client can summarize without asking.
        assert_eq!(params["entries"][0]["message"]["content"], json!("Rome"));
        json!({"summary": {"summary": "Rome was discussed."}})
    });
    let c = Client::initialized_holding_hooks(true, Value::Null, Some(answer)).await;
    let u = c.open_copy(dir.path(), OMP).await.uri;
    let nav = c
        .send("sessionTree/navigate", json!({"uri": u, "targetId": U2}))
        .await;
    c.hooks_asked(1).await;
    let label = c
        .send(
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": U1, "label": "later"}),
        )
        .await;
    // A read during the hook is answered while the hook is still held (were it to wait for the
    // hook, it would never be answered), with the state before the move.
    let tree = c
        .ok("sessionTree/tree", json!({"uri": u, "limit": 1}))
        .await;
    c.release_hooks();
    assert_eq!(tree["leaf"], json!(A3), "{tree}");
    let nav = nav.await.expect("navigate")["result"].clone();
    let label = label.await.expect("label")["result"].clone();
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    // The label came after the navigation: it hangs under the summary entry.
    assert!(label["revision"].as_u64() > nav["revision"].as_u64());
    let entry = c
        .ok(
            "sessionTree/entry",
            json!({"uri": u, "id": label["entryId"]}),
        )
        .await;
    assert_eq!(entry["entry"]["parentId"], nav["summaryEntryId"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_file_refuses_writes_until_migrated() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    let file = copy_fixture(
        "L01-v1-linear-with-compaction/input.jsonl",
        dir.path(),
        "old.jsonl",
    );
    let before = std::fs::read(&file).ok();
    let open = c.ok("sessionTree/open", json!({"uri": uri(&file)})).await;
    assert!(
        open["diagnostics"]
            .as_array()
            .is_some_and(|d| d.iter().any(|d| d["kind"] == json!("legacyVersion"))),
        "{open}"
    );
    let err = c
        .err(
            "sessionTree/append",
            json!({"uri": open["uri"], "text": "hi"}),
        )
        .await;
    assert_eq!(kind(&err), "needsMigration", "{err}");
    assert!(err["message"]
        .as_str()
        .is_some_and(|m| m.contains("migrate")));
    assert_eq!(std::fs::read(&file).ok(), before, "nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_right_behind_open_are_answered_in_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = Client::plain().await;
    let file = copy_fixture(OMP, dir.path(), "s.jsonl");
    let u = uri(&file);
    let open = c.send("sessionTree/open", json!({"uri": u})).await;
    let rows = c.send("sessionTree/rows", json!({"uri": u})).await;
    let label = c
        .send(
            "sessionTree/setLabel",
            json!({"uri": u, "targetId": U1, "label": "x"}),
        )
        .await;
    assert!(open.await.expect("open").get("result").is_some());
    assert!(rows.await.expect("rows").get("result").is_some());
    assert!(label.await.expect("label").get("result").is_some());

    let missing = uri(&dir.path().join("missing.jsonl"));
    let open = c.send("sessionTree/open", json!({"uri": missing})).await;
    let tree = c.send("sessionTree/tree", json!({"uri": missing})).await;
    assert_eq!(kind(&open.await.expect("open")["error"]), "fileNotFound");
    let tree = tree.await.expect("tree");
    assert!(
        matches!(kind(&tree["error"]), "fileNotFound" | "sessionNotFound"),
        "{tree}"
    );
    // The failed session is forgotten.
    let later = c.err("sessionTree/tree", json!({"uri": missing})).await;
    assert_eq!(kind(&later), "sessionNotFound");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_answer_of_the_wrong_shape_counts_as_no_answer() {
    let dir = tempfile::tempdir().expect("tmp");
    let answer: Answer = std::sync::Arc::new(|_: &str, _: &Value| json!({"cancel": "perhaps"}));
    let c = Client::initialized(true, Value::Null, Some(answer)).await;
    let u = c.open_copy(dir.path(), OMP).await.uri;
    let nav = c
        .ok("sessionTree/navigate", json!({"uri": u, "targetId": A2}))
        .await;
    assert_eq!(
        (nav["decision"].clone(), nav["cancelled"].clone()),
        (json!("target"), json!(false))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_sessions_follows_the_workspace_folders() {
    let home = tempfile::tempdir().expect("tmp");
    let h = home.path();
    let (one, two) = (h.join("one"), h.join("two"));
    let tmp = std::env::temp_dir();
    for (cwd, name) in [(&one, "a.jsonl"), (&two, "b.jsonl")] {
        let dir = h
            .join(".omp/agent/sessions")
            .join(sessiontree_lsp::omp_dir_name(cwd, Some(h), &tmp));
        std::fs::create_dir_all(&dir).expect("mkdir");
        copy_fixture(OMP, &dir, name);
    }
    let c = Client::start(None);
    let options =
        json!({"home": h, "ompAgentDir": h.join(".omp/agent"), "piAgentDir": h.join(".pi/agent")});
    c.ok(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": options,
               "workspaceFolders": [{"uri": uri(&one), "name": "one"}]}),
    )
    .await;
    c.notify("initialized", json!({})).await;
    let names = |v: &Value| -> Vec<String> {
        v["sessions"]
            .as_array()
            .map(|s| {
                s.iter()
                    .filter_map(|s| {
                        s["path"]
                            .as_str()
                            .map(|p| p.rsplit('/').next().unwrap_or("").to_owned())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        names(&c.ok("sessionTree/listSessions", json!({})).await),
        vec!["a.jsonl"]
    );
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri(&two), "name": "two"}], "removed": [{"uri": uri(&one), "name": "one"}]}}),
    )
    .await;
    assert_eq!(
        names(&c.ok("sessionTree/listSessions", json!({})).await),
        vec!["b.jsonl"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_with_spaces_and_unicode_round_trip() {
    let dir = tempfile::tempdir().expect("tmp");
    let sub = dir.path().join("my sessions é");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let file = copy_fixture(OMP, &sub, "s.jsonl");
    let c = Client::plain().await;
    let encoded = format!("file://{}", file.display())
        .replace(' ', "%20")
        .replace('é', "%C3%A9");
    let open = c.ok("sessionTree/open", json!({"uri": encoded})).await;
    let u = open["uri"].as_str().expect("uri").to_owned();
    assert!(!u.contains(' '), "{u}");
    c.ok(
        "sessionTree/setLabel",
        json!({"uri": u, "targetId": U1, "label": "x"}),
    )
    .await;
    let change = c
        .notification("sessionTree/didChange", 5)
        .await
        .expect("didChange");
    assert_eq!(change["uri"], json!(u));
    // The encoded form the client used works too.
    assert!(c.ok("sessionTree/tree", json!({"uri": encoded})).await["total"].as_u64() > Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_navigation_during_its_hook_leaves_the_leaf() {
    let dir = tempfile::tempdir().expect("tmp");
    let answer: Answer =
        std::sync::Arc::new(|_: &str, _: &Value| json!({"summary": {"summary": "too late"}}));
    let c = Client::initialized_holding_hooks(true, Value::Null, Some(answer)).await;
    let u = c.open_copy(dir.path(), OMP).await.uri;
    let (id, nav) = c
        .send_id("sessionTree/navigate", json!({"uri": u, "targetId": U2}))
        .await;
    c.hooks_asked(1).await;
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let nav = nav.await.expect("navigate");
    assert_eq!(nav["error"]["code"], json!(-32800), "{nav}");
    // The hook's answer arrives after the cancel, and changes nothing.
    c.release_hooks();
    c.hooks_answered(1).await;
    let tree = c.ok("sessionTree/tree", json!({"uri": u})).await;
    assert_eq!(tree["leaf"], json!(A3), "the leaf stays where it was");
    assert_eq!(
        std::fs::read(dir.path().join("s.jsonl")).ok(),
        std::fs::read(fixture(OMP)).ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outline_of_a_deeply_branching_session_stays_shallow() {
    // 300 branch points in a row: each entry has a short side branch and the main line goes on.
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("deep.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"deep","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_owned();
    for i in 0..300 {
        let main = format!("m{i:07}");
        let side = format!("s{i:07}");
        for (id, content) in [(&main, "main"), (&side, "side")] {
            text.push_str(&format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{content} {i}"}}}}"#
            ));
            text.push('\n');
        }
        parent = format!("\"{main}\"");
    }
    std::fs::write(&file, text).expect("write");
    let c = Client::plain().await;
    let symbols = c
        .ok(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri(&file)}}),
        )
        .await;
    fn depth(v: &Value) -> usize {
        v.as_array().map_or(0, |a| {
            1 + a.iter().map(|s| depth(&s["children"])).max().unwrap_or(0)
        })
    }
    fn count(v: &Value) -> usize {
        v.as_array()
            .map_or(0, |a| a.iter().map(|s| 1 + count(&s["children"])).sum())
    }
    assert!(depth(&symbols) <= 60, "outline depth {}", depth(&symbols));
    assert_eq!(count(&symbols), 600, "every entry is in the outline once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_big_session_reports_progress() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("big.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"big","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
    );
    text.push('\n');
    let filler = "x".repeat(1000);
    let mut parent = "null".to_owned();
    for i in 0..17_500 {
        text.push_str(&format!(
            r#"{{"type":"message","id":"b{i:07}","parentId":{parent},"timestamp":"2025-01-01T00:00:01.000Z","message":{{"role":"user","content":"{filler}"}}}}"#
        ));
        text.push('\n');
        parent = format!("\"b{i:07}\"");
    }
    std::fs::write(&file, text).expect("write");
    let c = Client::start(None);
    c.ok("initialize", json!({"processId": null, "rootUri": null, "capabilities": {"window": {"workDoneProgress": true}}})).await;
    c.notify("initialized", json!({})).await;
    let open = c.ok("sessionTree/open", json!({"uri": uri(&file)})).await;
    assert_eq!(open["entryCount"], json!(17_500));
    let asked = c.asked.lock().map(|a| a.clone()).unwrap_or_default();
    assert!(
        asked
            .iter()
            .any(|(m, _)| m == "window/workDoneProgress/create"),
        "{asked:?}"
    );
    let mut kinds = Vec::new();
    while kinds.len() < 2 {
        let p = c.notification("$/progress", 5).await.expect("progress");
        kinds.push(p["value"]["kind"].as_str().unwrap_or("").to_owned());
    }
    assert_eq!(kinds, ["begin", "end"]);
}

/// Folding over the wire, on an omp and a pi session: `folded` hides the branch's rows (the leaf
/// inside selects the folded row) and drawing them back needs only the set without it; `segment`
/// moves the selection as pi's fold keys do on rows they do not fold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_fold_and_move_by_branch_segments() {
    let (dir, c, s) = Client::plain_on_copy(OMP).await;
    let u = &s.uri;
    let ids = |rows: &Value| -> Vec<String> {
        rows["rows"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|r| r["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    const U3: &str = "6c055220";
    let open = c.ok("sessionTree/rows", json!({"uri": u})).await;
    assert_eq!(ids(&open), [U1, A1, U3, A3, U2, A2], "{open}");
    let foldable: Vec<bool> = open["rows"]
        .as_array()
        .map(|r| r.iter().map(|r| r["foldable"] == json!(true)).collect())
        .unwrap_or_default();
    assert_eq!(foldable, [true, false, true, false, true, false]);
    let folded = c
        .ok("sessionTree/rows", json!({"uri": u, "folded": [U3]}))
        .await;
    assert_eq!(ids(&folded), [U1, A1, U3, U2, A2], "{folded}");
    assert_eq!(
        folded["selection"],
        json!(U3),
        "the leaf inside selects the folded row"
    );
    assert_eq!(folded["rows"][2]["folded"], json!(true));
    assert_eq!(folded["rows"][2]["foldable"], json!(false));
    // omp draws the folded row as before (no marker), the cursor now on it.
    let before = open["lines"][2].as_str().unwrap_or_default();
    assert_eq!(folded["lines"][2], json!(before.replacen("  ", "› ", 1)));
    // Up from the leaf: the first row of its branch; down from the root: the first child of the
    // branch point.
    let up = c
        .ok("sessionTree/rows", json!({"uri": u, "segment": "up"}))
        .await;
    assert_eq!(up["selection"], json!(U3), "{up}");
    let down = c
        .ok(
            "sessionTree/rows",
            json!({"uri": u, "selection": U1, "segment": "down"}),
        )
        .await;
    assert_eq!(down["selection"], json!(U3), "{down}");
    let bad = c
        .err("sessionTree/rows", json!({"uri": u, "segment": "left"}))
        .await;
    assert_eq!(kind(&bad), "invalidParams");

    // pi: the same, drawn with pi's markers.
    let p = c
        .open_copy(dir.path(), "c06-branch-basic/pi/session.jsonl")
        .await
        .uri;
    let up = c
        .ok("sessionTree/rows", json!({"uri": p, "segment": "up"}))
        .await;
    let start = up["selection"].as_str().unwrap_or_default().to_owned();
    assert!(
        up["lines"].as_array().is_some_and(|l| l
            .iter()
            .any(|l| l.as_str().is_some_and(|l| l.starts_with("› ├⊟")))),
        "{up}"
    );
    let folded = c
        .ok("sessionTree/rows", json!({"uri": p, "folded": [start]}))
        .await;
    assert_eq!(folded["selection"], json!(start));
    assert_eq!(folded["lines"][2], json!("› ├⊞ • user: Rome"), "{folded}");
}
