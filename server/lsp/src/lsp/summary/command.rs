//! The `command` provider: a program run with the prompt on stdin, whose stdout is the summary.
//! Configured only in user-level settings (initialization options, the agent's own settings
//! file), never from a workspace. The child is killed when the navigation is cancelled or times
//! out.

use super::{CommandConfig, Failure, Tokens};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Runs the command; `input` goes to stdin, the trimmed stdout is the summary.
pub(crate) async fn generate(
    config: &CommandConfig,
    input: &str,
    tokens: &Tokens,
) -> Result<String, Failure> {
    let Some((program, args)) = config.argv.split_first() else {
        return Err(Failure::Config("branchSummary.command is empty".to_owned()));
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Failure::Command(format!("cannot start `{program}`: {e}")))?;
    let timeout = Duration::from_secs(config.timeout_seconds.max(1));
    let run = async {
        let mut stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let input = input.as_bytes().to_vec();
        let write = async move {
            if let Some(mut stdin) = stdin.take() {
                // A command that does not read its input is fine.
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            }
        };
        let read_out = async {
            let mut out = Vec::new();
            let mut buf = [0u8; 4096];
            if let Some(stdout) = stdout.as_mut() {
                loop {
                    match stdout.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            out.extend_from_slice(&buf[..n]);
                            tokens.report(out.len().div_ceil(4));
                        }
                    }
                }
            }
            out
        };
        let read_err = async {
            let mut err = Vec::new();
            if let Some(stderr) = stderr.as_mut() {
                let _ = stderr.read_to_end(&mut err).await;
            }
            err
        };
        let ((), out, err) = tokio::join!(write, read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    let (status, out, err) = tokio::time::timeout(timeout, run).await.map_err(|_| {
        Failure::Timeout(format!(
            "`{program}` did not finish within {} s (branchSummary.command.timeoutSeconds)",
            config.timeout_seconds
        ))
    })?;
    let status = status.map_err(|e| Failure::Command(format!("waiting for `{program}`: {e}")))?;
    let stderr = String::from_utf8_lossy(&err);
    let stderr: String = stderr
        .trim()
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_owned(), |c| format!("code {c}"));
        let sep = if stderr.is_empty() { "" } else { ": " };
        return Err(Failure::Command(format!(
            "`{program}` exited with {code}{sep}{stderr}"
        )));
    }
    let text = String::from_utf8_lossy(&out).trim().to_owned();
    if text.is_empty() {
        return Err(Failure::Command(format!(
            "`{program}` printed no summary on stdout"
        )));
    }
    Ok(text)
}
