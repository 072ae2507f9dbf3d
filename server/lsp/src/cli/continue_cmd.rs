//! `sessiontree continue FILE --at ENTRY --message TEXT`: starts the session's agent (omp for omp
//! files, pi for pi files, or `--agent`) in its RPC mode with the bridge, moves its leaf to ENTRY
//! by the agent's own `/tree` rule, sends TEXT, prints the answer as it streams (`--json`: one
//! protocol `agentEvent` per line) and exits 0 when the turn ends. The agent writes the session
//! itself; this command writes nothing to it. Exit 1 when the agent fails or exits mid-turn, 2
//! when it cannot start (not installed) or ENTRY is not in the file.

use super::anyhow_like::Error;
use super::CliResult;
use sessiontree_core::Dialect;
use sessiontree_lsp::agent::driver::{Driver, DriverEvent};
use sessiontree_lsp::agent::process::SpawnSpec;
use sessiontree_lsp::agent::stream::Translator;
use sessiontree_lsp::agent::{locate, manager, paths, AgentKind};
use sessiontree_protocol::{AgentEventBody, DeltaKind};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `sessiontree continue`.
#[derive(Debug, clap::Args)]
pub struct ContinueArgs {
    /// The session file.
    pub file: PathBuf,
    /// Continue from this entry (a user message is re-asked from its parent, as in the agent's
    /// `/tree`).
    #[arg(long)]
    pub at: String,
    /// The prompt.
    #[arg(long)]
    pub message: String,
    /// The agent to run (default: the file's own, omp for omp files, pi for pi files).
    #[arg(long, value_parser = ["pi", "omp"])]
    pub agent: Option<String>,
    /// The agent's executable (default: `pi` / `omp` on PATH, or SESSIONTREE_PI_PATH /
    /// SESSIONTREE_OMP_PATH).
    #[arg(long)]
    pub executable: Option<String>,
    /// Print one JSON event per line instead of the answer's text.
    #[arg(long)]
    pub json: bool,
    /// Refused: a session kept in a store cannot be continued (the agent's RPC mode keeps its
    /// session in files); taken so that the refusal says why.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

/// Why `--store` is refused. omp's CLI, whose RPC mode this command starts, creates its
/// `SessionManager` with the file storage only (no option or setting chooses another): its Redis
/// storage is for programs built on its SDK. An agent started here would write the session's
/// continuation into a new local file, not into the store.
fn store_refused(url: &str) -> Error {
    let store = match sessiontree_redis::StoreAddress::parse(url) {
        Ok(address) => address.to_string(),
        Err(err) => return Error::Usage(err),
    };
    Error::Usage(format!(
        "cannot continue a session kept in a store ({store}): the agent's RPC mode, which `continue` starts, keeps its session in local files (omp's Redis storage is only for programs built on its SDK), so its answer would not reach the store; nothing was read or written"
    ))
}

/// Runs the subcommand.
pub fn run(args: ContinueArgs) -> CliResult {
    if let Some(url) = &args.store {
        return Err(store_refused(url));
    }
    let session = super::inspect::open(&args.file, None, &super::store::StoreArgs::default())?;
    let Some(entry) = session.entry(&args.at) else {
        return Err(Error::Usage(format!(
            "entry {} is not in {}",
            args.at,
            args.file.display()
        )));
    };
    if args.message.trim().is_empty() {
        return Err(Error::Usage("--message needs some text".to_owned()));
    }
    let is_user =
        entry.kind() == "message" && entry.json()["message"]["role"].as_str() == Some("user");
    let kind = match args.agent.as_deref() {
        Some("pi") => AgentKind::Pi,
        Some("omp") => AgentKind::Omp,
        _ => manager::kind_of(session.dialect()),
    };
    let executable = locate::executable(kind, args.executable.as_deref()).map_err(Error::Usage)?;
    let cwd = PathBuf::from(session.cwd());
    if !cwd.is_dir() {
        return Err(Error::Usage(format!(
            "the session's working folder {} does not exist",
            cwd.display()
        )));
    }
    let file = std::fs::canonicalize(&args.file).unwrap_or_else(|_| args.file.clone());
    let dialect = session.dialect();
    drop(session);
    if is_user {
        let mut stderr = std::io::stderr();
        let _ = writeln!(
            stderr,
            "sessiontree: {} is a user message: as in the agent's /tree, the prompt continues from its parent",
            args.at
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(drive(Drive {
        kind,
        executable,
        file,
        cwd,
        dialect,
        at: args.at,
        message: args.message,
        json: args.json,
    }))
}

struct Drive {
    kind: AgentKind,
    executable: PathBuf,
    file: PathBuf,
    cwd: PathBuf,
    dialect: Dialect,
    at: String,
    message: String,
    json: bool,
}

async fn drive(d: Drive) -> CliResult {
    let dir = paths::runtime_dir()?;
    let spec = SpawnSpec {
        kind: d.kind,
        executable: d.executable,
        extra_args: Vec::new(),
        session_file: d.file,
        cwd: d.cwd,
        bridge: paths::bridge_file(&dir)?,
        socket: paths::spawn_socket(&dir, 0),
        token: uuid::Uuid::new_v4().simple().to_string(),
    };
    let (driver, mut events) = Driver::spawn(spec, Duration::from_secs(60))
        .await
        .map_err(|e| Error::Usage(e.message))?;
    let failed = |message: String| -> CliResult {
        let mut stderr = std::io::stderr();
        let _ = writeln!(stderr, "sessiontree: {message}");
        Ok(ExitCode::from(1))
    };
    if let Err(e) = driver.navigate(&d.at, false, None, None).await {
        driver.stop(Duration::from_secs(5)).await;
        return failed(e.message);
    }
    let mut translator = Translator::new(d.dialect, std::env::var("HOME").ok());
    translator.expect_turn(1);
    if let Err(e) = driver.prompt(&d.message, None).await {
        driver.stop(Duration::from_secs(5)).await;
        return failed(e.message);
    }
    let mut out = std::io::stdout().lock();
    let mut seq = 0u64;
    let mut error = None;
    while let Some(event) = events.recv().await {
        let body = match event {
            DriverEvent::Bridge(event, _) => match translator.translate(&event) {
                Some((_, body)) => body,
                None => continue,
            },
            DriverEvent::Ui(_) => continue,
            DriverEvent::Exited(exit) => {
                error = Some(format!(
                    "the agent exited mid-turn (code {}){}",
                    exit.code
                        .map_or_else(|| "none".to_owned(), |c| c.to_string()),
                    if exit.stderr_tail.is_empty() {
                        String::new()
                    } else {
                        format!("; its last output:\n{}", exit.stderr_tail.join("\n"))
                    }
                ));
                break;
            }
        };
        seq += 1;
        let end = matches!(body, AgentEventBody::AgentEnd);
        if let AgentEventBody::Error { message } = &body {
            error = Some(message.clone());
        }
        if d.json {
            let line = serde_json::json!({"seq": seq, "turn": 1, "event": body});
            writeln!(out, "{line}")?;
        } else {
            print_text(&mut out, &body)?;
        }
        out.flush()?;
        if end {
            break;
        }
    }
    driver.stop(Duration::from_secs(10)).await;
    match error {
        Some(message) => failed(message),
        None => Ok(ExitCode::SUCCESS),
    }
}

/// The answer as a person reads it: the text as it streams, tool calls and results on lines of
/// their own.
fn print_text(out: &mut impl Write, body: &AgentEventBody) -> std::io::Result<()> {
    match body {
        AgentEventBody::Delta {
            delta: DeltaKind::Text,
            text,
            ..
        } => write!(out, "{text}"),
        AgentEventBody::MessageEnd { item, .. } if item.role == "assistant" => writeln!(out),
        AgentEventBody::ToolStart { name, .. } => writeln!(out, "[{name} …]"),
        AgentEventBody::MessageEnd { item, .. } if item.role == "toolResult" => {
            for block in &item.blocks {
                if let sessiontree_protocol::DisplayBlock::ToolResult {
                    name,
                    summary,
                    is_error,
                    ..
                } = block
                {
                    let mark = if *is_error { "failed" } else { "done" };
                    writeln!(out, "[{name} {mark}: {summary}]")?;
                }
            }
            Ok(())
        }
        AgentEventBody::Notice { text, .. } => writeln!(out, "[{text}]"),
        _ => Ok(()),
    }
}
