//! The server-level figures: the real `sessiontree lsp` over stdio opening, answering and
//! writing to a session file.

use crate::figures::*;
use crate::lsp_client::*;
use crate::{AnyResult, NEXT_SYMBOL_QUERY, SEARCH};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Server-level figures on `file` (alone in its folder; lines get appended to it); the context
/// is asked at `context_leaf`, the leaf the engine's context figure builds at.
pub fn measure_server(
    file: &Path,
    runs: usize,
    home: &Path,
    context_leaf: &str,
) -> AnyResult<Vec<Figure>> {
    let root = file.parent().ok_or("no folder")?;
    let uri = format!("file://{}", file.display());
    let (mut open, mut rows, mut sym_cold, mut sym_warm, mut change, mut rss) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let (mut rows_again, mut context, mut label, mut append) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut window_rows = 0;
    let mut context_shape = (0, 0);
    let (mut context_messages, mut context_messages_bytes) = (Vec::new(), 0);
    for run in 0..runs {
        let mut server = Server::start(root, home)?;
        let (opened, t) = server.request("sessionTree/open", json!({"uri": uri}))?;
        open.push(t);
        let (r, t) = server.request(
            "sessionTree/rows",
            json!({"uri": uri, "height": 40, "width": 120}),
        )?;
        rows.push(t);
        window_rows = r["rows"].as_array().map_or(0, Vec::len);
        let (_, t) = server.request("workspace/symbol", json!({"query": SEARCH}))?;
        sym_cold.push(t);
        let (_, t) = server.request("workspace/symbol", json!({"query": NEXT_SYMBOL_QUERY}))?;
        sym_warm.push(t);
        // Another process appends one line; time until didChange reaches us.
        let leaf = opened["leaf"].as_str().unwrap_or("").to_owned();
        let line = format!(
            "{{\"type\":\"message\",\"id\":\"e{run:07x}\",\"parentId\":\"{leaf}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"appended by another process\",\"timestamp\":1767225600000}}}}\n"
        );
        std::thread::sleep(Duration::from_millis(200));
        let mut f = std::fs::OpenOptions::new().append(true).open(file)?;
        let written = Instant::now();
        f.write_all(line.as_bytes())?;
        drop(f);
        change.push(server.wait_for("sessionTree/didChange", written)?);
        let (_, t) = server.request(
            "sessionTree/rows",
            json!({"uri": uri, "height": 40, "width": 120}),
        )?;
        rows_again.push(t);
        // As an editor's chat view asks (without the text), then with the text, which finds
        // the first build's reads kept.
        let (answer, t) = server.request(
            "sessionTree/context",
            json!({"uri": uri, "leaf": context_leaf, "withText": false}),
        )?;
        context_messages.push(t);
        context_messages_bytes = answer.to_string().len();
        let (answer, t) = server.request(
            "sessionTree/context",
            json!({"uri": uri, "leaf": context_leaf}),
        )?;
        context.push(t);
        context_shape = (
            answer["messages"].as_array().map_or(0, Vec::len),
            answer.to_string().len(),
        );
        let (_, t) = server.request(
            "sessionTree/setLabel",
            json!({"uri": uri, "targetId": leaf, "label": format!("bench-{run}")}),
        )?;
        label.push(t);
        let (_, t) = server.request(
            "sessionTree/append",
            json!({"uri": uri, "kind": "user", "text": "benchmark append through the server"}),
        )?;
        append.push(t);
        rss.push(server.peak_rss_mb());
        server.stop();
    }
    Ok(vec![
        Figure::time("server: sessionTree/open (fresh server)", "", &open),
        Figure::time(
            "server: sessionTree/rows, first window",
            "first_window",
            &rows,
        )
        .with_note(format!(
            "{window_rows} rows in the window, found without a tree model"
        )),
        Figure::time(
            "server: workspace/symbol, first query (indexes the file)",
            "",
            &sym_cold,
        ),
        Figure::time(
            "server: workspace/symbol, next query (a different one)",
            "workspace_symbol",
            &sym_warm,
        )
        .with_note(format!("`{NEXT_SYMBOL_QUERY}` after `{SEARCH}`")),
        Figure::time(
            "live follow: file write → didChange received",
            "did_change",
            &change,
        ),
        Figure::time(
            "server: sessionTree/rows again (after one appended line)",
            "first_window",
            &rows_again,
        ),
        Figure::time(
            "server: sessionTree/context as the editors ask (no text; at buildSessionContext's leaf)",
            "build_context",
            &context_messages,
        )
        .with_note(format!(
            "to the answer's last byte: {} messages, {:.1} MB of JSON",
            context_shape.0,
            context_messages_bytes as f64 / 1e6
        )),
        Figure::time(
            "  with the text too, right after (the build's reads kept)",
            "",
            &context,
        )
        .with_note(format!(
            "to the answer's last byte: {:.1} MB of JSON (messages and their text)",
            context_shape.1 as f64 / 1e6
        )),
        Figure::time(
            "server: sessionTree/setLabel (with fdatasync)",
            "label",
            &label,
        ),
        Figure::time(
            "server: sessionTree/append (with fdatasync)",
            "append",
            &append,
        ),
        Figure::memory("server: peak RSS after the above", "", rss),
    ])
}
