//! The engine's figures on one opened session: reads, views, searches and writes (writes to a
//! scratch copy), then the server's figures on that copy.

use crate::data::*;
use crate::figures::*;
use crate::probe::*;
use crate::server::*;
use crate::{AnyResult, SEARCH};
use serde_json::{json, Value};
use sessiontree_core::context::{build_context, session_context};
use sessiontree_core::ids::RandomIds;
use sessiontree_core::tree::Tree;
use sessiontree_core::view::{
    compute_rows, first_window, FilterMode, SearchWarmUp, TreeModel, ViewState,
};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::cmp::Ordering;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

pub fn time_runs<T>(runs: usize, mut f: impl FnMut(usize) -> T) -> (Vec<Duration>, Option<T>) {
    let mut samples = Vec::with_capacity(runs);
    let mut last = None;
    for i in 0..runs {
        let started = Instant::now();
        let out = f(i);
        samples.push(started.elapsed());
        last = Some(std::hint::black_box(out));
    }
    (samples, last)
}

/// Every figure for one file.
pub fn measure(
    file: &DataFile,
    dialect: Dialect,
    runs: usize,
    scratch_dir: &Path,
    keep: bool,
) -> AnyResult<Vec<Figure>> {
    let mut figs = Vec::new();
    let mut log = std::io::stdout().lock();

    // Open, in fresh processes: Session::open, then the first window of rows.
    let mut open = Vec::new();
    let mut first = Vec::new();
    let mut peak_open = Vec::new();
    let mut peak = Vec::new();
    let mut after = Vec::new();
    for _ in 0..runs {
        let p = probe_open(&file.path)?;
        let num = |key: &str| p[key].as_f64().unwrap_or(f64::NAN);
        open.push(num("openMs"));
        first.push(num("firstWindowMs"));
        peak_open.push(num("peakRssOpenKb") / 1024.0);
        peak.push(num("peakRssKb") / 1024.0);
        after.push(num("rssAfterOpenKb") / 1024.0);
    }
    figs.push(Figure {
        samples: open,
        ..Figure::time("open: Session::open (fresh process)", "open", &[])
    });
    figs.push(Figure::memory(
        "peak RSS: open (fresh process)",
        "peak_rss",
        peak_open,
    ));
    figs.push(Figure::memory("  RSS held after open", "", after));
    figs.push(Figure {
        samples: first,
        ..Figure::time(
            "first window right after open (same fresh process)",
            "first_window",
            &[],
        )
    });
    figs.push(Figure::memory(
        "peak RSS: open + first window (fresh process)",
        "peak_rss",
        peak,
    ));
    // Breakdown of open, in this process (page cache warm).
    let (t, _) = time_runs(runs, |_| {
        std::fs::read(&file.path).map(|b| b.len()).unwrap_or(0)
    });
    figs.push(Figure::time(
        "  breakdown: read the file (fs::read)",
        "",
        &t,
    ));
    let _ = writeln!(log, "    open measured");
    let session = Session::open(&file.path, OpenOptions::default())?;
    let n = session.entries().len();
    let leaf = session.leaf_id().map(str::to_owned).unwrap_or_default();

    // Tree, branch, context.
    // Built anew each time (the session keeps the one it builds until an entry is added).
    let (t, _) = time_runs(runs, |_| Tree::build(&session).roots.len());
    figs.push(Figure::time(
        "getTree (info; agents 77 / 106 ms at 100k)",
        "",
        &t,
    ));
    let (t, _) = time_runs(runs.max(9), |_| session.branch_path(None).len());
    figs.push(Figure::time("getBranch (leaf)", "get_branch", &t));
    let path = session.branch_path(None);
    // Each build reads the file (the entries a build read are kept for the next one: that is the
    // line after).
    let mut t = Vec::new();
    for _ in 0..runs.max(9) {
        session.forget_context_reads();
        let started = Instant::now();
        std::hint::black_box(session_context(&session, None).messages.len());
        t.push(started.elapsed());
    }
    figs.push(
        Figure::time("buildSessionContext (leaf)", "build_context", &t).with_note(format!(
            "session_context: branch of {} entries, only the state entries before the last \
             compaction's kept range parsed",
            path.len()
        )),
    );
    let (t, _) = time_runs(runs.max(9), |_| {
        session_context(&session, None).messages.len()
    });
    figs.push(Figure::time(
        "  again, with the entries the last build read kept (a view refreshed)",
        "",
        &t,
    ));
    let (t, values) = time_runs(runs, |_| {
        path.iter()
            .map(|&i| session.entries()[i].json())
            .collect::<Vec<Value>>()
    });
    figs.push(Figure::time(
        "  breakdown: parse the branch's entries",
        "",
        &t,
    ));
    let values = values.unwrap_or_default();
    let (t, _) = time_runs(runs, |_| build_context(dialect, &values).messages.len());
    figs.push(Figure::time(
        "  breakdown: build_context on parsed values",
        "",
        &t,
    ));
    drop(values);
    let (t, _) = time_runs(runs, |_| {
        let entries = session.entries();
        let from = path
            .iter()
            .rposition(|&i| entries[i].kind() == "compaction")
            .unwrap_or(0);
        let first_kept = entries[path[from]].json()["firstKeptEntryId"]
            .as_str()
            .map(str::to_owned);
        let start = first_kept
            .and_then(|id| {
                path[..from]
                    .iter()
                    .rposition(|&i| entries[i].id() == Some(id.as_str()))
            })
            .unwrap_or(from);
        let values: Vec<Value> = path[start..].iter().map(|&i| entries[i].json()).collect();
        build_context(dialect, &values).messages.len()
    });
    figs.push(Figure::time(
        "  experiment: parse + build from the last compaction's first kept entry",
        "",
        &t,
    ));

    // View: the tree model (flattened once per revision, from the facts kept at open), then
    // windows from it; full row lists and searches build a fresh model each time.
    let state = |filter: FilterMode, search: &str| ViewState {
        filter,
        search: search.to_owned(),
        ..ViewState::default()
    };
    let (t, _) = time_runs(runs, |_| TreeModel::new(&session, None).len());
    figs.push(Figure::time(
        "  tree model (flatten the session; once per revision)",
        "",
        &t,
    ));
    let (t, view) = time_runs(runs, |_| opening_window(&session));
    let window_rows = view.as_ref().map_or(0, |v| v.rows.len());
    let visible_rows = view.as_ref().map_or(0, |v| v.visible_count);
    drop(view);
    figs.push(
        Figure::time(
            "first window of rows (as the selector opens: no tree model)",
            "first_window",
            &t,
        )
        .with_note(format!(
            "{window_rows} rows built of {visible_rows} visible, from the leaf's path and the rows after it"
        )),
    );
    let (t, _) = time_runs(runs, |_| {
        TreeModel::new(&session, None).window(&state(FilterMode::Default, ""))
    });
    figs.push(Figure::time(
        "  a fresh tree model + its window (what a search or another selection first costs)",
        "",
        &t,
    ));
    let model = TreeModel::new(&session, None);
    let _ = model.window(&state(FilterMode::Default, ""));
    let leaf_id = session.leaf_id().map(str::to_owned);
    let (t, _) = time_runs(runs.max(9), |i| {
        let mut s = state(FilterMode::Default, "");
        s.selected = if i % 2 == 0 {
            session
                .branch_path(None)
                .get(10)
                .and_then(|&e| session.entries()[e].id().map(str::to_owned))
        } else {
            leaf_id.clone()
        };
        model.window(&s).rows.len()
    });
    figs.push(Figure::time(
        "  window again on the kept model (selection moved)",
        "",
        &t,
    ));
    drop(model);
    for (op, mode) in [
        ("full rows, default filter", FilterMode::Default),
        ("full rows, no-tools filter", FilterMode::NoTools),
        ("full rows, user-only filter", FilterMode::UserOnly),
        ("full rows, labeled-only filter", FilterMode::LabeledOnly),
        ("full rows, all filter", FilterMode::All),
    ] {
        let (t, view) = time_runs(runs, |_| {
            compute_rows(&session, &state(mode, ""), None).rows.len()
        });
        figs.push(
            Figure::time(op, "rows_full", &t).with_note(format!("{} rows", view.unwrap_or(0))),
        );
    }
    let (t, hits) = time_runs(runs, |_| {
        compute_rows(&session, &state(FilterMode::Default, SEARCH), None)
            .rows
            .len()
    });
    figs.push(
        Figure::time("search, 2-3 tokens", "search", &t)
            .with_note(format!("`{SEARCH}`: {} rows", hits.unwrap_or(0))),
    );
    // As the user types the query, key by key: each prefix's window from the tree model the
    // server keeps (its search strings laid out ahead, as the server does after the first
    // window); the slowest key is the figure.
    SearchWarmUp::new(&session).run();
    let slowest = typed_keys(&session, SEARCH, runs)
        .into_iter()
        .max_by(|a, b| {
            median(&a.1)
                .partial_cmp(&median(&b.1))
                .unwrap_or(Ordering::Equal)
        });
    if let Some((prefix, ms, shown)) = slowest {
        let samples: Vec<Duration> = ms
            .iter()
            .map(|&m| Duration::from_secs_f64(m / 1e3))
            .collect();
        figs.push(
            Figure::time(
                "search typed key by key, the slowest key (window from the kept model)",
                "search",
                &samples,
            )
            .with_note(format!("`{prefix}` of `{SEARCH}`: {shown} rows")),
        );
    }

    // Navigate (in memory): alternate between an entry off the active path and the leaf.
    let on_path: std::collections::HashSet<usize> = path.iter().copied().collect();
    let off_path = (0..n)
        .rev()
        .step_by(7)
        .filter(|i| !on_path.contains(i))
        .find_map(|i| session.entries()[i].id().map(str::to_owned))
        .unwrap_or_else(|| leaf.clone());
    drop(on_path);
    let mut session = session;
    let (t, _) = time_runs(runs.max(9), |i| {
        let target = if i % 2 == 0 { &off_path } else { &leaf };
        session.branch(target).is_ok()
    });
    figs.push(Figure::time("navigate: branch(id)", "navigate", &t));
    session.branch(&leaf)?;

    drop(session);
    let _ = writeln!(log, "    reads measured");

    // Writes, on a scratch copy.
    std::fs::create_dir_all(scratch_dir)?;
    let scratch = scratch_dir.join(file.path.file_name().unwrap_or_default());
    std::fs::copy(&file.path, &scratch)?;
    // Flush the copy now, or the first fdatasync below pays for writing back 300 MB.
    std::fs::File::open(&scratch)?.sync_all()?;
    let mut s = Session::open(&scratch, OpenOptions::default())?;
    let write = {
        let line = format!(
            "{{\"type\":\"custom\",\"customType\":\"bench\",\"data\":{{\"pad\":\"{}\"}}}}\n",
            "x".repeat(150)
        );
        let probe_path = scratch_dir.join("write-probe.jsonl");
        std::fs::write(&probe_path, b"")?;
        let (t, _) = time_runs(runs.max(9), |_| {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&probe_path)
                .ok()?;
            let _ = f.metadata().ok()?.len();
            f.write_all(line.as_bytes()).ok()?;
            f.sync_data().ok()
        });
        let _ = std::fs::remove_file(&probe_path);
        t
    };
    let write_fig = Figure::time(
        "  the write alone (open O_APPEND + write + fdatasync)",
        "",
        &write,
    );
    let write_ms = write_fig.median();
    let (t, _) = time_runs(runs.max(9), |_| {
        s.append_message(
            json!({"role":"user","content":"benchmark append","timestamp":1_735_689_600_000_i64}),
        )
        .is_ok()
    });
    figs.push(Figure {
        write_ms,
        ..Figure::time("append (message)", "append", &t)
    });
    let (t, _) = time_runs(runs.max(9), |i| {
        s.append_label_change(&leaf, Some(&format!("bench-{i}")))
            .is_ok()
    });
    figs.push(Figure {
        write_ms,
        ..Figure::time("label", "label", &t)
    });
    let (t, _) = time_runs(runs.max(9), |i| {
        let target = if i % 2 == 0 {
            off_path.as_str()
        } else {
            leaf.as_str()
        };
        s.branch_with_summary(
            Some(target),
            "Benchmark summary of the abandoned branch.",
            None,
            None,
        )
        .is_ok()
    });
    figs.push(Figure {
        write_ms,
        ..Figure::time("navigate: branch_with_summary", "branch_with_summary", &t)
    });
    figs.push(write_fig);

    // Live follow: another process appends one line; Session::follow picks it up.
    let mut follow = Vec::new();
    for i in 0..runs.max(9) {
        let parent = s.leaf_id().unwrap_or("").to_owned();
        let id = loop {
            let candidate = format!(
                "{:08x}",
                (0xf0_00_00_00_u32)
                    .wrapping_add((i as u32) << 8)
                    .wrapping_add(rand_u8())
            );
            if !s.contains(&candidate) {
                break candidate;
            }
        };
        let line = format!(
            "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"appended by another process\",\"timestamp\":1767225600000}}}}\n"
        );
        let mut f = std::fs::OpenOptions::new().append(true).open(&scratch)?;
        f.write_all(line.as_bytes())?;
        drop(f);
        let started = Instant::now();
        let outcome = s.follow()?;
        follow.push(started.elapsed());
        if outcome.new_entries.len() != 1 {
            return Err(format!(
                "follow saw {} new entries, expected 1",
                outcome.new_entries.len()
            )
            .into());
        }
    }
    figs.push(Figure::time(
        "live follow of one appended line (Session::follow)",
        "follow",
        &follow,
    ));

    // createBranchedSession of the (original) leaf path: writes a new file next to the scratch copy.
    let (t, _) = time_runs(runs, |_| {
        let fork = s.create_branched_session(&leaf, Box::new(RandomIds));
        match fork {
            Ok(fork) => {
                let len = fork.entries().len();
                if let Some(p) = fork.path() {
                    let _ = std::fs::remove_file(p);
                }
                len
            }
            Err(_) => 0,
        }
    });
    figs.push(
        Figure::time(
            "createBranchedSession (leaf path, file written)",
            "create_branched",
            &t,
        )
        .with_note(format!("{} entries on the path", path.len())),
    );
    drop(s);
    let _ = writeln!(log, "    writes measured");

    // The server over stdio, on the scratch copy (alone in its folder).
    let home = scratch_dir.parent().unwrap_or(scratch_dir).join("lsp-home");
    std::fs::create_dir_all(&home)?;
    for mut fig in measure_server(&scratch, runs, &home, &leaf)? {
        if matches!(fig.budget_key, "label" | "append") {
            fig.write_ms = write_ms;
        }
        figs.push(fig);
    }
    if !keep {
        let _ = std::fs::remove_file(&scratch);
    }
    let _ = writeln!(log, "    server measured");
    Ok(figs)
}

pub fn rand_u8() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos & 0xff
}

/// The first window as a server's first `sessionTree/rows` finds it: without a tree model when
/// the selector opens on the leaf, else from a fresh one.
pub fn opening_window(session: &Session) -> sessiontree_core::view::RowsView {
    let state = ViewState::default();
    first_window(session, None, &state)
        .unwrap_or_else(|| TreeModel::new(session, None).window(&state))
}
