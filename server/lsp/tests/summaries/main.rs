//! Branch summaries end to end: the server in-process, a real HTTP server on 127.0.0.1 started
//! by each test (just enough HTTP/1.1 and server-sent events, over plain TCP or over TLS with a
//! CA and certificate made by the test), real child processes for the command provider, hooks,
//! the no-model paths, progress and cancellation.

#[path = "../support/mod.rs"]
mod support;

mod model_server;
mod steps;

use model_server::{ModelServer, Reply};
use serde_json::{json, Value};
use sessiontree_core::summary::{OMP_PREAMBLE, PI_PREAMBLE};
use std::sync::Arc;
use std::time::Duration;
use steps::*;
use support::inproc::{Answer, Client};
use support::kind;

const OMP: &str = "c06-branch-basic/omp/session.jsonl";
const PI: &str = "c06-branch-basic/pi/session.jsonl";
// c06 omp ids: u1 2ececf0f → a1 42864a3e → (u2 c498f61c → a2 7af3bc6f | u3 6c055220 → a3 662d009f)
const A1: &str = "42864a3e";
const U2: &str = "c498f61c";
const A3: &str = "662d009f";
// c06 pi ids: a1 b07b5c59, u2 0b579824.
const PI_A1: &str = "b07b5c59";
const PI_U2: &str = "0b579824";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_announces_summaries_only_when_enabled() {
    let dir = tempfile::tempdir().expect("tmp");
    let announced = |init: &Value| init["capabilities"]["experimental"]["sessionTree"].clone();
    let has = |exp: &Value, feature: &str| {
        exp["features"]
            .as_array()
            .is_some_and(|f| f.contains(&json!(feature)))
    };
    let (_c, init) = client(isolated(json!({}), dir.path()), None).await;
    let exp = announced(&init);
    assert_eq!(
        exp["branchSummary"],
        json!({"enabled": false, "provider": null})
    );
    assert!(!has(&exp, "summaries"));
    let options = openai_options("http://127.0.0.1:9/v1", None);
    let (_c, init) = client(isolated(options, dir.path()), None).await;
    let exp = announced(&init);
    assert_eq!(
        exp["branchSummary"],
        json!({"enabled": true, "provider": "openai"})
    );
    assert!(has(&exp, "summaries"));
    assert!(has(&exp, "navigate"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_streams_a_summary_written_at_the_new_position() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(
        vec!["## Goal\n", "Pick a city.", "\n## Next Steps\n1. Book."],
        Duration::from_millis(20),
    ))
    .await;
    std::env::set_var("SESSIONTREE_TEST_KEY_STREAM", "sk-test-stream-1234");
    let options = isolated(
        openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_STREAM")),
        dir.path(),
    );
    let (c, _) = client(options, None).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let nav = c.summarize(&s, U2).await;
    let summary_id = nav["summaryEntryId"]
        .as_str()
        .expect("summary id")
        .to_owned();
    assert_eq!(nav["newLeaf"], json!(summary_id));
    assert_eq!(nav["editorText"], json!("Paris"));
    let line = check_summary_line(
        &s.file,
        &s.original,
        &summary_id,
        (A1, "fromExtension", false),
    );
    assert_eq!(
        line["summary"],
        json!(format!(
            "{OMP_PREAMBLE}## Goal\nPick a city.\n## Next Steps\n1. Book."
        ))
    );
    assert_eq!(
        line["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    // The request: streamed, the key as a bearer token, the history as data.
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert!(
        req.head.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{}",
        req.head
    );
    assert!(
        req.head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-test-stream-1234"),
        "{}",
        req.head
    );
    assert_eq!(req.body["model"], json!("test-model"));
    assert_eq!(req.body["stream"], json!(true));
    assert_eq!(req.body["messages"][0]["role"], json!("system"));
    assert!(req.body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("untrusted")));
    let prompt = req.body["messages"][1]["content"].as_str().unwrap_or("");
    assert!(
        prompt.starts_with("<conversation>\n[User]: Rome"),
        "{prompt}"
    );
    assert!(prompt.contains("## Goal"), "default instructions: {prompt}");
    // didNavigate carries the summary entry; progress began, reported tokens, ended.
    let mut notes = c.notifications_until("sessionTree/didNavigate", 20).await;
    while !progress_kinds(&notes).iter().any(|k| k == "end") {
        notes.extend(c.notifications_until("$/progress", 20).await);
    }
    let ev = notes
        .iter()
        .find(|n| n["method"] == json!("sessionTree/didNavigate"))
        .map(|n| n["params"].clone())
        .expect("didNavigate");
    assert_eq!(ev["summaryEntryId"], json!(summary_id));
    assert_eq!(
        ev["newLeaf"],
        json!(summary_id),
        "the summary entry is the new leaf"
    );
    assert_eq!(ev["fromClient"], json!(false));
    let kinds = progress_kinds(&notes);
    let messages = progress_messages(&notes);
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("begin"),
        "{kinds:?}"
    );
    assert_eq!(kinds.last().map(String::as_str), Some("end"), "{kinds:?}");
    assert!(kinds.iter().any(|k| k == "report"), "{kinds:?}");
    assert!(
        messages.iter().any(|m| m.ends_with(" tokens")),
        "{messages:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_instructions_replace_the_default_ones() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["Hotels only."], Duration::ZERO)).await;
    let c = openai_client(&server.base_url, dir.path()).await;
    let s = c.open_copy(dir.path(), OMP).await;
    c.ok(
        "sessionTree/navigate",
        json!({"uri": s.uri, "targetId": U2, "summarize": "custom", "customInstructions": "List the hotels."}),
    )
    .await;
    let seen = server.seen();
    let prompt = seen[0].body["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        prompt.ends_with("</conversation>\n\nList the hotels."),
        "{prompt}"
    );
    assert!(!seen[0].head.to_ascii_lowercase().contains("authorization"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_mid_stream_aborts_the_model_call_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Hang).await;
    let c = openai_client(&server.base_url, dir.path()).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let (id, nav) = c
        .send_id("sessionTree/navigate", summary_move(&s, U2))
        .await;
    server.asked().await;
    // Reads are answered while the model writes.
    assert_eq!(c.leaf(&s).await, json!(A3));
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let nav = answer(nav).await;
    assert_eq!(nav["error"]["code"], json!(-32800), "{nav}");
    assert_eq!(c.leaf(&s).await, json!(A3), "the leaf stays");
    s.assert_unwritten("byte-identical");
    assert!(
        server.closed_early().await,
        "the connection to the model was closed"
    );
    // Progress ends too (its end may still be on its way when the answer is in).
    let kinds = progress_kinds(&c.drain().await);
    if !kinds.iter().any(|k| k == "end") {
        c.progress("end").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_progress_report_stops_the_summary_and_moves_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Hang).await;
    let c = openai_client(&server.base_url, dir.path()).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let (_, nav) = c
        .send_id("sessionTree/navigate", summary_move(&s, U2))
        .await;
    // The report begins with a cancel button.
    let begin = c.progress("begin").await;
    assert_eq!(begin["value"]["title"], json!("Summarizing branch"));
    assert_eq!(begin["value"]["cancellable"], json!(true), "{begin}");
    server.asked().await;
    // A cancel for a token that is not the report's changes nothing.
    c.notify(
        "window/workDoneProgress/cancel",
        json!({"token": "sessiontree/unknown"}),
    )
    .await;
    assert_eq!(c.leaf(&s).await, json!(A3));
    c.notify(
        "window/workDoneProgress/cancel",
        json!({"token": begin["token"]}),
    )
    .await;
    let nav = answer(nav).await;
    assert_eq!(nav["result"]["cancelled"], json!(true), "{nav}");
    assert_eq!(nav["result"]["decision"], json!("stay"), "{nav}");
    assert_eq!(nav["result"]["newLeaf"], json!(A3), "{nav}");
    assert_eq!(nav["result"]["summaryEntryId"], Value::Null, "{nav}");
    assert_eq!(c.leaf(&s).await, json!(A3), "the leaf stays");
    s.assert_unwritten("byte-identical");
    assert!(
        server.closed_early().await,
        "the model call was dropped: its connection was closed"
    );
    // The report ended; the session still answers.
    let end = c.progress("end").await;
    assert_eq!(end["token"], begin["token"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_statuses_are_clear_and_never_show_the_key() {
    let dir = tempfile::tempdir().expect("tmp");
    std::env::set_var("SESSIONTREE_TEST_KEY_STATUS", "sk-very-secret-9876");
    for (status, message, expect) in [
        (
            401,
            "Incorrect API key provided: sk-very-secret-9876",
            "refused the API key from SESSIONTREE_TEST_KEY_STATUS",
        ),
        (404, "model not found", "no model `test-model`"),
        (429, "quota exceeded", "rate-limiting"),
        (500, "boom", "failed (HTTP 500)"),
    ] {
        let server = ModelServer::start(Reply::Status(status, message)).await;
        let options = isolated(
            openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_STATUS")),
            dir.path(),
        );
        let (c, _) = client(options, None).await;
        let s = c.open_copy(dir.path(), OMP).await;
        let err = c.summarize_fails(&s, U2).await;
        assert_eq!(kind(&err), "provider", "{err}");
        let text = err["message"].as_str().unwrap_or("");
        assert!(text.contains(expect), "{status}: {text}");
        assert!(text.contains(&format!("HTTP {status}")), "{text}");
        assert!(!text.contains("sk-very-secret"), "the key leaked: {text}");
        assert!(text.contains("nothing moved"), "{text}");
        s.assert_unwritten(format!("{status}: nothing written"));
        assert_eq!(c.leaf(&s).await, json!(A3));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_stream_a_refused_connection_and_an_unset_key_fail_cleanly() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Malformed).await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!(
            "http://127.0.0.1:{}/v1",
            l.local_addr().expect("addr").port()
        )
    };
    let cases = [
        (
            openai_options(&server.base_url, None),
            "malformed stream",
            "provider",
        ),
        (
            openai_options(&closed, None),
            "connection refused",
            "provider",
        ),
        (
            openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_UNSET")),
            "SESSIONTREE_TEST_KEY_UNSET",
            "noModel",
        ),
        (
            openai_options("ftp://api.example.invalid/v1", None),
            "is not an http:// or https:// URL",
            "noModel",
        ),
    ];
    for (options, expect, expected_kind) in cases {
        let (c, _) = client(isolated(options, dir.path()), None).await;
        let s = c.open_copy(dir.path(), OMP).await;
        let err = c.summarize_fails(&s, U2).await;
        assert_eq!(kind(&err), expected_kind, "{err}");
        assert!(
            err["message"].as_str().is_some_and(|m| m.contains(expect)),
            "{err}"
        );
        s.assert_unwritten("nothing written");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_provider_reads_the_prompt_and_writes_the_summary() {
    let dir = tempfile::tempdir().expect("tmp");
    let prompt_file = dir.path().join("prompt.txt");
    let script = format!("cat > '{}'; echo summary text", prompt_file.display());
    let c = command_client(json!(["sh", "-c", script]), dir.path()).await;
    let s = c.open_copy(dir.path(), PI).await;
    let nav = c.summarize(&s, PI_U2).await;
    let summary_id = nav["summaryEntryId"].as_str().expect("summary").to_owned();
    let line = check_summary_line(
        &s.file,
        &s.original,
        &summary_id,
        (PI_A1, "fromHook", false),
    );
    assert_eq!(line["summary"], json!(format!("{PI_PREAMBLE}summary text")));
    assert_eq!(
        line["details"],
        json!({"readFiles": [], "modifiedFiles": []})
    );
    let prompt = std::fs::read_to_string(&prompt_file).unwrap_or_default();
    assert!(
        prompt.contains("untrusted") && prompt.contains("<conversation>\n[User]: Rome"),
        "{prompt}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_command_is_reported_and_a_cancelled_one_is_killed() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = command_client(
        json!(["sh", "-c", "cat >/dev/null; echo no model here >&2; exit 3"]),
        dir.path(),
    )
    .await;
    let s = c.open_copy(dir.path(), OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "provider");
    let m = err["message"].as_str().unwrap_or("");
    assert!(
        m.contains("exited with code 3") && m.contains("no model here"),
        "{m}"
    );
    s.assert_unwritten("nothing written");

    let pid_file = dir.path().join("pid");
    let script = format!(
        "cat >/dev/null; echo $$ > '{}'; exec sleep 30",
        pid_file.display()
    );
    let c = command_client(json!(["sh", "-c", script]), dir.path()).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let (id, nav) = c
        .send_id("sessionTree/navigate", summary_move(&s, U2))
        .await;
    let mut pid = String::new();
    let started = eventually(|| {
        pid = std::fs::read_to_string(&pid_file)
            .unwrap_or_default()
            .trim()
            .to_owned();
        !pid.is_empty()
    });
    assert!(started.await, "the command started");
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let nav = answer(nav).await;
    assert_eq!(nav["error"]["code"], json!(-32800), "{nav}");
    s.assert_unwritten("nothing written");
    let gone = eventually(|| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie waiting to be reaped.
        stat.is_empty() || stat.split(' ').nth(2) == Some("Z")
    });
    assert!(gone.await, "the command was killed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_from_workspace_configuration_is_never_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("ran");
    let (c, _) = client(isolated(json!({}), dir.path()), None).await;
    c.configure(
        json!({"branchSummary": {"enabled": true, "provider": "command",
            "command": ["sh", "-c", format!("touch '{}'; echo pwned", marker.display())]}}),
    )
    .await;
    let s = c.open_copy(dir.path(), OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "noModel", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("never from workspace")),
        "{err}"
    );
    assert!(!marker.exists(), "the workspace's command ran");
    s.assert_unwritten("nothing written");
    // Workspace configuration may still switch an openai model on.
    let server = ModelServer::start(Reply::Stream(vec!["From settings."], Duration::ZERO)).await;
    c.configure(
        json!({"branchSummary": {"enabled": true, "provider": "openai",
            "openai": {"baseUrl": server.base_url, "model": "m"}, "prompt": "auto"}}),
    )
    .await;
    let nav = c.summarize(&s, U2).await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        last_summary(&s),
        json!(format!("{OMP_PREAMBLE}From settings."))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_summary_wins_over_the_model_and_a_hook_may_cancel() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["unused"], Duration::ZERO)).await;
    let answer: Answer = Arc::new(|method: &str, params: &Value| {
        if method != "sessionTree/beforeTree" {
            return Value::Null;
        }
        if params["customInstructions"] == json!("cancel") {
            json!({"cancel": true})
        } else {
            json!({"summary": {"summary": "From the editor.", "details": {"by": "test"}}})
        }
    });
    let (c, _) = client(
        isolated(openai_options(&server.base_url, None), dir.path()),
        Some(answer),
    )
    .await;
    let s = c.open_copy(dir.path(), OMP).await;
    let cancelled = c
        .ok(
            "sessionTree/navigate",
            json!({"uri": s.uri, "targetId": U2, "summarize": "custom", "customInstructions": "cancel"}),
        )
        .await;
    assert_eq!(cancelled["cancelled"], json!(true));
    assert_eq!(cancelled["newLeaf"], json!(A3));
    s.assert_unwritten("nothing written");
    let nav = c.summarize(&s, U2).await;
    let summary_id = nav["summaryEntryId"].as_str().expect("summary").to_owned();
    let line = check_summary_line(
        &s.file,
        &s.original,
        &summary_id,
        (A1, "fromExtension", true),
    );
    assert_eq!(line["summary"], json!("From the editor."));
    assert_eq!(line["details"], json!({"by": "test"}));
    assert!(server.seen().is_empty(), "the model was not asked");
    let ev = c
        .notification("sessionTree/didNavigate", 5)
        .await
        .expect("didNavigate");
    assert_eq!(ev["summaryEntryId"], json!(summary_id));
    assert_eq!(ev["fromClient"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_model_fails_fast_and_nothing_to_summarize_just_moves() {
    let dir = tempfile::tempdir().expect("tmp");
    for options in [
        json!({}),
        json!({"branchSummary": true}),
        json!({"branchSummary": {"enabled": false, "provider": "openai", "openai": {"model": "m"}}}),
        json!({"branchSummary": {"enabled": true, "provider": "client"}}),
        json!({"branchSummary": {"enabled": true, "provider": "openai"}}),
    ] {
        let (c, _) = client(isolated(options.clone(), dir.path()), None).await;
        let s = c.open_copy(dir.path(), OMP).await;
        let err = c.summarize_fails(&s, U2).await;
        assert_eq!(kind(&err), "noModel", "{options}: {err}");
        s.assert_unwritten(&options);
        assert_eq!(c.leaf(&s).await, json!(A3));
        // Nothing abandoned (forward to a descendant): the move goes ahead without a summary.
        c.ok(
            "sessionTree/navigate",
            json!({"uri": s.uri, "targetId": A1}),
        )
        .await;
        let nav = c.summarize(&s, A3).await;
        assert_eq!(nav["summarySkipped"], json!(true), "{nav}");
        assert_eq!(nav["newLeaf"], json!(A3));
        assert_eq!(nav["summaryEntryId"], Value::Null);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_own_settings_files_are_read() {
    let dir = tempfile::tempdir().expect("tmp");
    // omp: `branchSummary.enabled` in the agent folder's config.yml; the editor names the model.
    let omp_dir = dir.path().join("omp-agent");
    write_settings(
        &omp_dir.join("config.yml"),
        "theme: dark\nbranchSummary:\n  enabled: true\n",
    );
    let server = ModelServer::start(Reply::Stream(vec!["Via omp settings."], Duration::ZERO)).await;
    let mut options = agent_dirs(dir.path(), Some(&omp_dir), None);
    options["branchSummary"] =
        json!({"provider": "openai", "openai": {"baseUrl": server.base_url, "model": "m"}});
    let (c, init) = client(options, None).await;
    assert_eq!(
        init["capabilities"]["experimental"]["sessionTree"]["branchSummary"],
        json!({"enabled": true, "provider": "openai"})
    );
    let s = c.open_copy(dir.path(), OMP).await;
    c.summarize(&s, U2).await;
    assert_eq!(
        last_summary(&s),
        json!(format!("{OMP_PREAMBLE}Via omp settings."))
    );

    // pi: settings.json is user-level, so a command there runs.
    let pi_dir = dir.path().join("pi-agent");
    write_settings(
        &pi_dir.join("settings.json"),
        json!({"branchSummary": {"reserveTokens": 8000, "enabled": true, "provider": "command",
            "command": ["sh", "-c", "cat >/dev/null; echo from pi settings"]}})
        .to_string(),
    );
    let options = agent_dirs(dir.path(), None, Some(&pi_dir));
    let (c, _) = client(options, None).await;
    let s = open_copy_in(&c, dir.path(), "pi", PI).await;
    c.summarize(&s, PI_U2).await;
    assert_eq!(
        last_summary(&s),
        json!(format!("{PI_PREAMBLE}from pi settings"))
    );
    // pi's own `skipPrompt: true` reads as off.
    write_settings(
        &pi_dir.join("settings.json"),
        r#"{"branchSummary": {"skipPrompt": true}}"#,
    );
    let options = agent_dirs(dir.path(), None, Some(&pi_dir));
    let (_c, init) = client(options, None).await;
    assert_eq!(
        init["capabilities"]["experimental"]["sessionTree"]["branchSummary"]["enabled"],
        json!(false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_is_not_streamed_is_accepted() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Whole("One piece.")).await;
    let c = openai_client(&server.base_url, dir.path()).await;
    let s = c.open_copy(dir.path(), OMP).await;
    c.summarize(&s, U2).await;
    assert_eq!(last_summary(&s), json!(format!("{OMP_PREAMBLE}One piece.")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_slower_than_the_timeout_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Hang).await;
    let mut options = openai_options(&server.base_url, None);
    options["branchSummary"]["openai"]["timeoutSeconds"] = json!(1);
    let (c, _) = client(isolated(options, dir.path()), None).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "provider", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("did not finish within 1 s")),
        "{err}"
    );
    s.assert_unwritten("nothing written");
    assert_eq!(c.leaf(&s).await, json!(A3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_ca_file_streams_a_summary_and_an_unknown_certificate_fails_clearly() {
    let dir = tempfile::tempdir().expect("tmp");
    let (server, ca_pem) =
        ModelServer::start_tls(Reply::Stream(vec!["Over ", "TLS."], Duration::ZERO)).await;
    let ca_file = dir.path().join("corporate-ca.pem");
    std::fs::write(&ca_file, &ca_pem).expect("write ca");
    std::env::set_var("SESSIONTREE_TEST_KEY_TLS", "sk-tls-secret-1234");

    // Trusted through branchSummary.openai.caFile: the summary arrives over https, key included.
    let mut options = openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_TLS"));
    options["branchSummary"]["openai"]["caFile"] = json!(ca_file.display().to_string());
    let (c, _) = client(isolated(options, dir.path()), None).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let nav = c.summarize(&s, U2).await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(last_summary(&s), json!(format!("{OMP_PREAMBLE}Over TLS.")));
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert!(
        seen[0]
            .head
            .starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{}",
        seen[0].head
    );
    assert!(
        seen[0]
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-tls-secret-1234"),
        "the key went over TLS"
    );

    // Not trusted (no caFile): a clear `provider` error naming the host; nothing moves.
    let (c, _) = client(
        isolated(
            openai_options(&server.base_url, Some("SESSIONTREE_TEST_KEY_TLS")),
            dir.path(),
        ),
        None,
    )
    .await;
    let s = open_copy_in(&c, dir.path(), "untrusted", OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "provider", "{err}");
    let text = err["message"].as_str().unwrap_or("");
    assert!(
        text.contains("TLS handshake with 127.0.0.1 failed")
            && text.contains("unknown issuer")
            && text.contains("caFile"),
        "{text}"
    );
    assert!(!text.contains("sk-tls-secret"), "{text}");
    s.assert_unwritten("nothing written");
    assert_eq!(c.leaf(&s).await, json!(A3), "the leaf stays");
    assert_eq!(
        server.seen().len(),
        1,
        "no request without a trusted handshake"
    );

    // A caFile that cannot be read is a settings problem (`noModel`); from workspace
    // configuration a caFile is ignored (a repository must not choose whom the server trusts).
    let mut options = openai_options(&server.base_url, None);
    options["branchSummary"]["openai"]["caFile"] =
        json!(dir.path().join("missing.pem").display().to_string());
    let (c, _) = client(isolated(options, dir.path()), None).await;
    let s = open_copy_in(&c, dir.path(), "missing", OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "noModel", "{err}");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("caFile") && m.contains("missing.pem")),
        "{err}"
    );
    c.configure(json!({"branchSummary": {"openai": {"caFile": ca_file.display().to_string()}}}))
        .await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(
        kind(&err),
        "noModel",
        "still the user's missing file: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omp_default_model_from_config_and_models_yml_writes_the_summary() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["With omp's model."], Duration::ZERO)).await;
    std::env::set_var("SESSIONTREE_TEST_OMP_KEY", "sk-omp-secret-5555");
    let omp_dir = dir.path().join("omp-agent");
    // omp's own layout: the switch in config.yml, the model role, the provider in models.yml.
    write_settings(&omp_dir.join("config.yml"), "modelRoles:\n  default: lab/qwen2.5-7b-instruct:high\n  smol: openai/gpt-4o-mini\nbranchSummary:\n  enabled: true\n  reserveTokens: 4000\n");
    write_settings(&omp_dir.join("models.yml"), format!(
            "providers:\n  lab:\n    baseUrl: {}\n    api: openai-completions\n    apiKey: SESSIONTREE_TEST_OMP_KEY\n    models:\n      - id: qwen2.5-7b-instruct\n        contextWindow: 32768\n",
            server.base_url
        ));
    let options = agent_dirs(dir.path(), Some(&omp_dir), None);
    let (c, init) = client(options, None).await;
    assert_eq!(
        init["capabilities"]["experimental"]["sessionTree"]["branchSummary"],
        json!({"enabled": true, "provider": "openai"})
    );
    let s = c.open_copy(dir.path(), OMP).await;
    let nav = c.summarize(&s, U2).await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(
        last_summary(&s),
        json!(format!("{OMP_PREAMBLE}With omp's model."))
    );
    let seen = server.seen();
    assert_eq!(seen[0].body["model"], json!("qwen2.5-7b-instruct"));
    assert!(
        seen[0]
            .head
            .to_ascii_lowercase()
            .contains("authorization: bearer sk-omp-secret-5555"),
        "the key named in models.yml was sent"
    );

    // A literal key in models.yml is never read: the settings say so, without the key.
    write_settings(&omp_dir.join("models.yml"), format!(
            "providers:\n  lab:\n    baseUrl: {}\n    api: openai-completions\n    apiKey: sk-literal-in-file-777\n    models: [{{id: qwen2.5-7b-instruct}}]\n",
            server.base_url
        ));
    let options = agent_dirs(dir.path(), Some(&omp_dir), None);
    let (c, _) = client(options, None).await;
    let s = open_copy_in(&c, dir.path(), "literal", OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "noModel", "{err}");
    let text = err["message"].as_str().unwrap_or("");
    assert!(text.contains("literal or a command"), "{text}");
    assert!(!text.contains("sk-literal"), "{text}");
    s.assert_unwritten("nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changed_settings_are_read_again_the_agents_files_included() {
    let dir = tempfile::tempdir().expect("tmp");
    let server = ModelServer::start(Reply::Stream(vec!["Now on."], Duration::ZERO)).await;
    let omp_dir = dir.path().join("omp-agent");
    write_settings(
        &omp_dir.join("config.yml"),
        "branchSummary:\n  enabled: false\n",
    );
    let mut options = agent_dirs(dir.path(), Some(&omp_dir), None);
    options["branchSummary"] =
        json!({"provider": "openai", "openai": {"baseUrl": server.base_url, "model": "m"}});
    let (c, _) = client(options, None).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "noModel", "{err}");
    // The user turns omp's setting on; the next configuration change reads the file again.
    write_settings(
        &omp_dir.join("config.yml"),
        "branchSummary:\n  enabled: true\n",
    );
    c.configure(json!({})).await;
    let nav = c.summarize(&s, U2).await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
    assert_eq!(last_summary(&s), json!(format!("{OMP_PREAMBLE}Now on.")));
    // The workspace layer is replaced, not merged: a change that drops a key drops its effect.
    c.configure(json!({"branchSummary": {"enabled": false}}))
        .await;
    let err = c.summarize_fails(&s, A3).await;
    assert_eq!(kind(&err), "noModel", "{err}");
    c.configure(json!({})).await;
    let nav = c.summarize(&s, A3).await;
    assert!(nav["summaryEntryId"].is_string(), "{nav}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_only_signals_a_change_is_asked_for_its_settings() {
    let dir = tempfile::tempdir().expect("tmp");
    // Starts on, with a model that always fails (a `provider` error moves nothing).
    let server = ModelServer::start(Reply::Status(500, "down")).await;
    let answer: Answer = Arc::new(|method: &str, params: &Value| {
        if method == "workspace/configuration"
            && params["items"][0]["section"] == json!("sessiontree")
        {
            json!([{"branchSummary": {"enabled": false}}])
        } else {
            Value::Null
        }
    });
    let c = Client::start(Some(answer));
    let options = isolated(openai_options(&server.base_url, None), dir.path());
    c.ok(
        "initialize",
        json!({"processId": null, "rootUri": null, "initializationOptions": options,
            "capabilities": {"workspace": {"configuration": true, "didChangeConfiguration": {"dynamicRegistration": false}}}}),
    )
    .await;
    c.notify("initialized", json!({})).await;
    let s = c.open_copy(dir.path(), OMP).await;
    let navigate = || {
        c.err(
            "sessionTree/navigate",
            json!({"uri": s.uri, "targetId": U2, "summarize": "summarize"}),
        )
    };
    assert_eq!(kind(&navigate().await), "provider");
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": null}),
    )
    .await;
    let mut last = Value::Null;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        last = navigate().await;
        if kind(&last) == "noModel" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        kind(&last),
        "noModel",
        "the pulled settings turned summaries off: {last}"
    );
    assert!(
        c.asked
            .lock()
            .expect("asked")
            .iter()
            .any(|(m, p)| m == "workspace/configuration"
                && p["items"][0]["section"] == json!("sessiontree")),
        "the server asked for the sessiontree section"
    );
    s.assert_unwritten("nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_configuration_cannot_send_the_key_elsewhere() {
    let dir = tempfile::tempdir().expect("tmp");
    let user_server = ModelServer::start(Reply::Stream(vec!["Mine."], Duration::ZERO)).await;
    let other_server = ModelServer::start(Reply::Stream(vec!["Theirs."], Duration::ZERO)).await;
    std::env::set_var("SESSIONTREE_TEST_KEY_WS", "sk-user-ws-4242");
    std::env::set_var("SESSIONTREE_TEST_OTHER_SECRET", "other-secret-1313");
    let (c, _) = client(
        isolated(
            openai_options(&user_server.base_url, Some("SESSIONTREE_TEST_KEY_WS")),
            dir.path(),
        ),
        None,
    )
    .await;
    let s = c.open_copy(dir.path(), OMP).await;
    // A repository's settings point the model elsewhere: the user's key is not sent there.
    c.configure(json!({"branchSummary": {"openai": {"baseUrl": other_server.base_url}}}))
        .await;
    let err = c.summarize_fails(&s, U2).await;
    assert_eq!(kind(&err), "noModel", "{err}");
    assert!(
        err["message"].as_str().is_some_and(
            |m| m.contains("only sent to the user's own baseUrl") && !m.contains("sk-user-ws")
        ),
        "{err}"
    );
    assert!(
        other_server.seen().is_empty(),
        "nothing went to the other server"
    );
    s.assert_unwritten("nothing written");
    // Nor may it choose which variable is sent: the user's apiKeyEnv stays.
    c.configure(
        json!({"branchSummary": {"openai": {"apiKeyEnv": "SESSIONTREE_TEST_OTHER_SECRET"}}}),
    )
    .await;
    c.summarize(&s, U2).await;
    assert_eq!(last_summary(&s), json!(format!("{OMP_PREAMBLE}Mine.")));
    let head = user_server.seen()[0].head.to_ascii_lowercase();
    assert!(
        head.contains("authorization: bearer sk-user-ws-4242"),
        "the user's key"
    );
    assert!(
        !head.contains("other-secret"),
        "not the workspace's variable"
    );
}
