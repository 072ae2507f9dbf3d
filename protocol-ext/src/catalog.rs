//! Every method with an example of its params and result, built from the Rust types. The doc test
//! (`tests/doc_drift.rs`) checks `docs/protocol.md` against this list, so a renamed field or a new
//! method cannot go undocumented. Examples fill every optional field so each key appears.

use crate::methods::*;
use crate::types::*;
use crate::{Direction, Notification, Request};
use serde::Serialize;
use serde_json::{json, Value};

/// Request or notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    /// Answered.
    Request,
    /// Not answered.
    Notification,
}

/// One method as documented.
#[derive(Debug, Clone)]
pub struct MethodDoc {
    /// `sessionTree/…`.
    pub method: &'static str,
    /// Who sends it.
    pub direction: Direction,
    /// Request or notification.
    pub kind: MethodKind,
    /// An example of the params.
    pub params: Value,
    /// An example of the result (requests only).
    pub result: Option<Value>,
}

fn to_value<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn req<R: Request>(params: R::Params, result: R::Result) -> MethodDoc {
    MethodDoc {
        method: R::METHOD,
        direction: R::DIRECTION,
        kind: MethodKind::Request,
        params: to_value(&params),
        result: Some(to_value(&result)),
    }
}

fn note<N: Notification>(params: N::Params) -> MethodDoc {
    MethodDoc {
        method: N::METHOD,
        direction: N::DIRECTION,
        kind: MethodKind::Notification,
        params: to_value(&params),
        result: None,
    }
}

const URI: &str =
    "file:///home/me/.omp/agent/sessions/-project/2025-01-01T00-00-00-000Z_01941f29.jsonl";

fn s(text: &str) -> String {
    text.to_owned()
}

fn mutation() -> MutationResult {
    MutationResult {
        revision: 8,
        leaf: Some(s("9b1c2d3e")),
        entry_id: Some(s("9b1c2d3e")),
    }
}

fn rewind_point(entry: &str, moment: RewindMoment) -> RewindPoint {
    RewindPoint {
        entry_id: s(entry),
        moment,
        exact: true,
        source: RewindSource::Sessiontree,
        by: s("bridge"),
        taken_at: Some(s("2025-01-01T00:00:03.120Z")),
        snapshot: s("4b1e2f0a9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f"),
        pruned: false,
    }
}

fn used_point() -> UsedRewindPoint {
    UsedRewindPoint {
        asked: s("7af3bc6f"),
        point: rewind_point("c498f61c", RewindMoment::Before),
    }
}

fn restore_result(point: Option<UsedRewindPoint>) -> RewindRestoreResult {
    RewindRestoreResult {
        workspace: s("/home/me/project"),
        point,
        dry_run: false,
        undo_snapshot: Some(s("9f8e7d6c5b4a39281706f5e4d3c2b1a098f7e6d5")),
        files: vec![
            RewindRestoredFile {
                path: s("src/new.rs"),
                action: RewindAction::Deleted,
            },
            RewindRestoredFile {
                path: s("src/lib.rs"),
                action: RewindAction::Changed,
            },
        ],
        skipped: vec![RewindSkippedFile {
            path: s(".sessions/s.jsonl"),
            reason: s("session file"),
        }],
    }
}

/// Every method of the protocol, in documentation order.
pub fn catalog() -> Vec<MethodDoc> {
    let mut methods = vec![
        req::<ListSessions>(
            ListSessionsParams { folders: vec![s("file:///home/me/project")] },
            ListSessionsResult {
                sessions: vec![SessionInfo {
                    uri: s(URI),
                    path: s("/home/me/.omp/agent/sessions/-project/2025-01-01T00-00-00-000Z_01941f29.jsonl"),
                    agent: Some(Dialect::Omp),
                    dialect: Dialect::Omp,
                    session_id: s("01941f29-7c00-7ed4-8931-786ba68ef677"),
                    cwd: s("/home/me/project"),
                    parent_session: Some(s(
                        "/home/me/.omp/agent/sessions/-project/2024-12-31T09-00-00-000Z_01941a00.jsonl",
                    )),
                    name: Some(s("Trip planning")),
                    first_user_message: Some(s("Plan a trip")),
                    entry_count: 6,
                    modified: s("2025-01-01T00:00:06.000Z"),
                    modified_ms: 1735689606000,
                    live_writer: false,
                }],
                unavailable: vec![UnavailableStore {
                    store: s("redis://cache.internal:6379/0"),
                    message: s("store redis://cache.internal:6379/0 is unreachable; trying again in 1000 ms"),
                }],
            },
        ),
        req::<Open>(
            OpenParams { uri: s(URI) },
            OpenResult {
                uri: s(URI),
                session_id: s("01941f29-7c00-7ed4-8931-786ba68ef677"),
                dialect: Dialect::Omp,
                name: Some(s("Trip planning")),
                cwd: s("/home/me/project"),
                leaf: Some(s("7af3bc6f")),
                revision: 0,
                entry_count: 6,
                diagnostics: vec![SessionDiagnostic {
                    kind: s("orphan"),
                    line: Some(9),
                    message: s("parent 0badf00d does not exist; the entry is shown as an extra root"),
                    severity: s("warning"),
                }],
            },
        ),
        req::<Close>(OpenParams { uri: s(URI) }, CloseResult { closed: true }),
        req::<Rows>(
            RowsParams {
                uri: s(URI),
                filter: FilterMode::Default,
                search: s("paris"),
                selection: Some(s("7af3bc6f")),
                width: 80,
                height: 20,
                folded: vec![s("9b1d0c55")],
                segment: Some(SegmentMove::Up),
            },
            RowsResult {
                revision: 7,
                leaf: Some(s("7af3bc6f")),
                rows: vec![Row {
                    id: Some(s("c498f61c")),
                    kind: s("message"),
                    role: Some(s("user")),
                    depth: 1,
                    prefix: s("│  ├─ "),
                    text: s("user: Paris"),
                    label: Some(s("dest")),
                    on_active_path: true,
                    is_leaf: false,
                    has_children: true,
                    foldable: true,
                    folded: false,
                    selected: true,
                    matches: vec![CharRange { start: 6, end: 11 }],
                }],
                lines: vec![s("│  ├─ • [dest] user: Paris")],
                selection: Some(s("c498f61c")),
                window_start: 0,
                total_rows: 1,
            },
        ),
        req::<Tree>(
            TreeParams { uri: s(URI), offset: 0, limit: 100 },
            TreeResult {
                revision: 7,
                leaf: Some(s("7af3bc6f")),
                total: 6,
                offset: 0,
                nodes: vec![TreeNode {
                    id: Some(s("2ececf0f")),
                    parent_id: None,
                    depth: 0,
                    kind: s("message"),
                    role: Some(s("user")),
                    preview: s("user: Plan a trip"),
                    label: Some(s("start")),
                    timestamp: Some(s("2025-01-01T00:00:01.000Z")),
                    line: 3,
                    child_count: 1,
                    on_active_path: true,
                    is_leaf: false,
                }],
            },
        ),
        req::<GetEntry>(
            EntryParams { uri: s(URI), id: s("c498f61c") },
            EntryResult {
                revision: 7,
                entry: json!({"type":"message","id":"c498f61c","parentId":"42864a3e","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"Paris","timestamp":1735689603000_u64}}),
                markdown: s("**user: Paris**\n\n*user* · `c498f61c` · 2025-01-01T00:00:03.000Z · [dest]\n\nParis\n"),
                label: Some(s("dest")),
                line: 5,
                children: vec![s("7af3bc6f")],
            },
        ),
        req::<Context>(
            ContextParams {
                uri: s(URI),
                leaf: Some(s("7af3bc6f")),
                with_text: Some(true),
            },
            ContextResult {
                revision: 7,
                leaf: Some(s("7af3bc6f")),
                state: json!({"thinkingLevel":"off","models":{"default":"anthropic/claude-test"},"mode":"none"}),
                messages: vec![json!({"role":"user","content":"Paris","timestamp":1735689603000_u64})],
                text: Some(s("user: Paris\n")),
            },
        ),
        req::<Navigate>(
            NavigateParams {
                uri: s(URI),
                target_id: s("c498f61c"),
                summarize: SummarizeChoice::Custom,
                custom_instructions: Some(s("Focus on the hotels")),
                label: Some(s("paris")),
                base_revision: Some(7),
                force: false,
            },
            NavigateResult {
                revision: 8,
                decision: NavigateDecision::Parent,
                old_leaf: Some(s("7af3bc6f")),
                // The summary entry is the new leaf (it hangs at the parent, 42864a3e).
                new_leaf: Some(s("5e6f7a8b")),
                editor_text: Some(s("Paris")),
                already_at_this_point: false,
                cancelled: false,
                summary_entry_id: Some(s("5e6f7a8b")),
                summary_skipped: false,
                tool_call_id: None,
            },
        ),
        req::<Branch>(
            BranchParams { uri: s(URI), entry_id: s("c498f61c"), base_revision: Some(7) },
            BranchResult {
                new_uri: Some(s("file:///home/me/.omp/agent/sessions/-project/2025-01-02T10-00-00-000Z_01942a00.jsonl")),
                new_path: Some(s("/home/me/.omp/agent/sessions/-project/2025-01-02T10-00-00-000Z_01942a00.jsonl")),
                session_id: Some(s("01942a00-0000-7000-8000-000000000000")),
                written: true,
                editor_text: s("Paris"),
                cancelled: false,
                revision: 7,
            },
        ),
        req::<SetLabel>(
            SetLabelParams { uri: s(URI), target_id: s("c498f61c"), label: Some(s("dest")), base_revision: Some(7), force: false },
            mutation(),
        ),
        req::<Append>(
            AppendParams {
                uri: s(URI),
                kind: AppendKind::Custom,
                text: s("Remember the budget"),
                custom_type: Some(s("note")),
                display: true,
                base_revision: Some(7),
                force: false,
            },
            mutation(),
        ),
        req::<SetName>(
            SetNameParams { uri: s(URI), name: s("Trip planning"), base_revision: Some(7), force: false },
            NameResult {
                revision: 8,
                leaf: Some(s("9b1c2d3e")),
                entry_id: Some(s("9b1c2d3e")),
                name: Some(s("Trip planning")),
                applied: true,
            },
        ),
        req::<NameFromPlanTitle>(
            NameFromPlanTitleParams { uri: s(URI), plan_title: s("plan-the_trip"), base_revision: Some(7), force: false },
            NameResult {
                revision: 8,
                leaf: Some(s("9b1c2d3e")),
                entry_id: Some(s("9b1c2d3e")),
                name: Some(s("Plan the trip")),
                applied: true,
            },
        ),
        note::<DidChange>(DidChangeParams {
            uri: s(URI),
            revision: 9,
            leaf: Some(s("aa11bb22")),
            reason: ChangeReason::Follow,
            new_entry_ids: vec![s("aa11bb22")],
        }),
        note::<DidNavigate>(DidNavigateParams {
            uri: s(URI),
            revision: 8,
            new_leaf: Some(s("5e6f7a8b")),
            old_leaf: Some(s("7af3bc6f")),
            summary_entry_id: Some(s("5e6f7a8b")),
            from_client: true,
        }),
        note::<DidBranch>(DidBranchParams {
            uri: s(URI),
            entry_id: s("c498f61c"),
            new_uri: s("file:///home/me/.omp/agent/sessions/-project/2025-01-02T10-00-00-000Z_01942a00.jsonl"),
            written: true,
        }),
        req::<BeforeTree>(
            BeforeTreeParams {
                uri: s(URI),
                target_id: s("42864a3e"),
                old_leaf: Some(s("7af3bc6f")),
                common_ancestor: Some(s("42864a3e")),
                entries_to_summarize: vec![s("c498f61c"), s("7af3bc6f")],
                entries: vec![
                    json!({"type":"message","id":"c498f61c","parentId":"42864a3e","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"user","content":"Paris","timestamp":1735689603000_u64}}),
                    json!({"type":"message","id":"7af3bc6f","parentId":"c498f61c","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Paris is lovely."}]}}),
                ],
                user_wants_summary: true,
                custom_instructions: Some(s("Focus on the hotels")),
            },
            BeforeTreeResult {
                cancel: false,
                summary: Some(SuppliedSummary { summary: s("Discussed Paris."), details: Some(json!({"by":"vscode"})) }),
            },
        ),
        req::<BeforeBranch>(
            BeforeBranchParams { uri: s(URI), entry_id: s("c498f61c") },
            BeforeBranchResult { cancel: false },
        ),
        req::<RewindPoints>(
            RewindPointsParams { uri: s(URI) },
            RewindPointsResult {
                available: true,
                workspace: Some(s("/home/me/project")),
                reason: Some(s("")),
                points: vec![rewind_point("c498f61c", RewindMoment::Before)],
            },
        ),
        req::<RewindCompare>(
            RewindCompareParams { uri: s(URI), entry_id: s("7af3bc6f"), to_entry_id: Some(s("9b1c2d3e")) },
            RewindCompareResult {
                workspace: s("/home/me/project"),
                point: used_point(),
                to: Some(UsedRewindPoint {
                    asked: s("9b1c2d3e"),
                    point: rewind_point("9b1c2d3e", RewindMoment::After),
                }),
                files: vec![
                    RewindChangedFile { path: s("src/lib.rs"), status: RewindFileStatus::Modified },
                    RewindChangedFile { path: s("src/new.rs"), status: RewindFileStatus::Added },
                ],
            },
        ),
        req::<RewindFile>(
            RewindFileParams { uri: s(URI), entry_id: s("7af3bc6f"), path: s("src/lib.rs") },
            RewindFileResult {
                point: used_point(),
                exists: true,
                mode: Some(s("100644")),
                text: Some(s("pub fn one() -> u32 { 1 }\n")),
                binary: false,
            },
        ),
        req::<RewindRestore>(
            RewindRestoreParams { uri: s(URI), entry_id: s("7af3bc6f"), dry_run: false },
            restore_result(Some(used_point())),
        ),
        req::<RewindUndo>(RewindUndoParams { uri: s(URI), dry_run: false }, restore_result(None)),
        note::<DidRecordRewindPoint>(DidRecordRewindPointParams {
            uri: s(URI),
            point: rewind_point("c498f61c", RewindMoment::Before),
        }),
    ];
    methods.extend(agent_catalog());
    methods
}

fn agent_status(state: AgentState) -> AgentStatus {
    AgentStatus {
        uri: s(URI),
        agent: AgentKind::Omp,
        state,
        source: Some(AgentSource::Spawned),
        pid: Some(41_022),
        model: Some(s("anthropic/claude-sonnet-4-5")),
        armed: true,
        executable: Some(s("/usr/local/bin/omp")),
        message: Some(s("started for this session")),
        stderr_tail: vec![s("omp: ready")],
    }
}

/// The live agent's methods.
fn agent_catalog() -> Vec<MethodDoc> {
    vec![
        req::<Transcript>(
            TranscriptParams {
                uri: s(URI),
                leaf: Some(s("7af3bc6f")),
                limit: Some(200),
            },
            TranscriptResult {
                revision: 7,
                leaf: Some(s("7af3bc6f")),
                items: vec![
                    TranscriptItem {
                        entry_id: Some(s("c498f61c")),
                        role: s("user"),
                        detail: None,
                        blocks: vec![DisplayBlock::Text {
                            text: s("Write hello.txt"),
                        }],
                    },
                    TranscriptItem {
                        entry_id: Some(s("7af3bc6f")),
                        role: s("assistant"),
                        detail: Some(s("")),
                        blocks: vec![
                            DisplayBlock::Thinking {
                                text: s("A one-line file."),
                            },
                            DisplayBlock::Markdown {
                                text: s("Writing **hello.txt**."),
                            },
                            DisplayBlock::ToolCall {
                                id: s("call_1"),
                                name: s("write"),
                                summary: s("write: hello.txt"),
                                arguments: s("{\n  \"path\": \"hello.txt\"\n}"),
                            },
                            DisplayBlock::ToolResult {
                                id: s("call_1"),
                                name: s("write"),
                                summary: s("Successfully wrote 6 bytes to hello.txt"),
                                text: s("Successfully wrote 6 bytes to hello.txt"),
                                is_error: false,
                            },
                            DisplayBlock::Image {
                                mime_type: s("image/png"),
                            },
                            DisplayBlock::Command {
                                command: s("ls"),
                                output: s("hello.txt\n"),
                                exit_code: Some(0),
                            },
                            DisplayBlock::Notice {
                                text: s("Aborted"),
                                is_error: false,
                            },
                        ],
                    },
                ],
                omitted: 3,
            },
        ),
        req::<Prompt>(
            PromptParams {
                uri: s(URI),
                text: s("Now in French"),
                deliver_as: Some(DeliverAs::FollowUp),
                base_revision: Some(7),
            },
            PromptResult {
                revision: 7,
                turn: 3,
                agent: agent_status(AgentState::Running),
            },
        ),
        req::<Abort>(AbortParams { uri: s(URI) }, AbortResult { aborted: true }),
        req::<GetAgent>(
            AgentParams {
                uri: s(URI),
                start: true,
            },
            agent_status(AgentState::Idle),
        ),
        req::<StopAgent>(
            AgentParams {
                uri: s(URI),
                start: false,
            },
            agent_status(AgentState::None),
        ),
        note::<AgentEvent>(AgentEventParams {
            uri: s(URI),
            seq: 42,
            turn: Some(3),
            event: AgentEventBody::Delta {
                message: 5,
                block: 0,
                delta: DeltaKind::Text,
                text: s("Bonjour"),
            },
        }),
        req::<AgentDialog>(
            AgentDialogParams {
                uri: s(URI),
                dialog: DialogKind::Select,
                title: s("Allow dangerous command?"),
                message: Some(s("rm -rf build")),
                options: vec![s("Allow"), s("Block")],
                placeholder: Some(s("")),
                prefill: Some(s("")),
                timeout_ms: Some(10_000),
            },
            AgentDialogResult {
                value: Some(s("Block")),
                confirmed: false,
                cancelled: false,
            },
        ),
        req::<InstallBridge>(
            InstallBridgeParams {
                agent: AgentKind::Pi,
            },
            InstallBridgeResult {
                path: s("/home/me/.pi/agent/extensions/sessiontree-bridge.ts"),
                written: true,
            },
        ),
    ]
}
