//! The probe: this binary re-executed with `--probe FILE`, so that opening a file is measured in
//! a fresh process whose peak RSS is the real one; also loops for profilers (`--op`).

use crate::measure::*;
use crate::{AnyResult, SEARCH};
use serde_json::{json, Value};
use sessiontree_core::context::session_context;
use sessiontree_core::ids::RandomIds;
use sessiontree_core::tree::Tree;
use sessiontree_core::view::{
    compute_rows, first_window, FilterMode, SearchWarmUp, TreeModel, ViewState,
};
use sessiontree_core::{OpenOptions, Session};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

pub fn vm_kb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// The process's minor page faults so far (memory touched for the first time).
pub fn minor_faults() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which ends with the last `)`); minflt is the 10th field.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(7)?.parse().ok()
}

pub fn run_probe(file: &Path, op: &str, repeat: usize) -> AnyResult<()> {
    let base_hwm = vm_kb("VmHWM:").unwrap_or(0.0);
    let started = Instant::now();
    let mut session = Session::open(file, OpenOptions::default())?;
    let opened = started.elapsed();
    let hwm_open = vm_kb("VmHWM:");
    let rss_open = vm_kb("VmRSS:");
    let mut out = json!({
        "openMs": opened.as_secs_f64() * 1e3,
        "peakRssOpenKb": hwm_open,
        "rssAfterOpenKb": rss_open,
        "baseRssKb": base_hwm,
        "entries": session.entries().len(),
    });
    match op {
        // The first answer an editor waits for: the first window of the /tree rows, found as
        // the server finds it for its first `sessionTree/rows` (without a tree model when the
        // selector opens on the leaf).
        "open" => {
            let t = Instant::now();
            let view = opening_window(&session);
            out["firstWindowMs"] = json!(t.elapsed().as_secs_f64() * 1e3);
            out["firstAnswerMs"] = json!(started.elapsed().as_secs_f64() * 1e3);
            out["peakRssKb"] = json!(vm_kb("VmHWM:"));
            out["rows"] = json!(view.rows.len());
        }
        // Loops for profilers (`perf record … --probe FILE --op rows`).
        // `window`: a fresh tree model and its first window; `model`: the model alone;
        // `rows:<filter>`: every row in a filter mode.
        "rows" | "search" | "context" | "tree" | "branch" | "window" | "model" | "first"
        | "create_branched" => {
            let leaf = session.leaf_id().map(str::to_owned).unwrap_or_default();
            let (mut times, mut faults) = (Vec::new(), Vec::new());
            for _ in 0..repeat {
                let before = minor_faults();
                let t = Instant::now();
                let n = match op {
                    "rows" => compute_rows(&session, &ViewState::default(), None)
                        .rows
                        .len(),
                    "search" => compute_rows(
                        &session,
                        &ViewState {
                            search: SEARCH.to_owned(),
                            ..ViewState::default()
                        },
                        None,
                    )
                    .rows
                    .len(),
                    "window" => TreeModel::new(&session, None)
                        .window(&ViewState::default())
                        .rows
                        .len(),
                    "model" => TreeModel::new(&session, None).len(),
                    "first" => first_window(&session, None, &ViewState::default())
                        .map_or(0, |v| v.rows.len()),
                    // As the budget line measures it: from the file, nothing kept.
                    "context" => {
                        session.forget_context_reads();
                        session_context(&session, None).messages.len()
                    }
                    "tree" => Tree::build(&session).roots.len(),
                    // Writes a new file next to FILE (use a scratch copy), removed again.
                    "create_branched" => {
                        let fork = session.create_branched_session(&leaf, Box::new(RandomIds))?;
                        if let Some(p) = fork.path() {
                            std::fs::remove_file(p)?;
                        }
                        fork.entries().len()
                    }
                    _ => session.branch_path(None).len(),
                };
                std::hint::black_box(n);
                times.push(t.elapsed().as_secs_f64() * 1e3);
                faults.push(minor_faults().zip(before).map_or(f64::NAN, |(a, b)| a - b));
            }
            out["opMs"] = json!(times);
            out["opFaults"] = json!(faults);
            out["peakRssKb"] = json!(vm_kb("VmHWM:"));
        }
        // What an editor waits for when it changes the filter or types a search: a window of
        // the new layout, from the tree model it already has (built once, untimed).
        "layouts" => {
            let model = TreeModel::new(&session, None);
            let mut out_times = serde_json::Map::new();
            for (name, filter, search) in [
                ("default", FilterMode::Default, ""),
                ("no-tools", FilterMode::NoTools, ""),
                ("user-only", FilterMode::UserOnly, ""),
                ("labeled-only", FilterMode::LabeledOnly, ""),
                ("all", FilterMode::All, ""),
                ("search", FilterMode::Default, SEARCH),
            ] {
                let mut times = Vec::new();
                for _ in 0..repeat {
                    // Another layout in between, so that each timed window lays out anew.
                    let other = ViewState {
                        filter: if filter == FilterMode::All {
                            FilterMode::Default
                        } else {
                            FilterMode::All
                        },
                        ..ViewState::default()
                    };
                    // A search on a model of its own, which has kept no search's answers (the
                    // session keeps the laid-out strings: the first search lays them out).
                    let fresh;
                    let model = if search.is_empty() {
                        &model
                    } else {
                        fresh = TreeModel::new(&session, None);
                        &fresh
                    };
                    std::hint::black_box(model.window(&other).rows.len());
                    let state = ViewState {
                        filter,
                        search: search.to_owned(),
                        ..ViewState::default()
                    };
                    let t = Instant::now();
                    std::hint::black_box(model.window(&state).rows.len());
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
                out_times.insert(name.to_owned(), json!(times));
            }
            out["layoutMs"] = Value::Object(out_times);
            out["peakRssKb"] = json!(vm_kb("VmHWM:"));
        }
        // What an editor waits for on each key as the user types a search: a window of the
        // default filter for every prefix of the query in turn, from one tree model (built
        // untimed, anew for each repeat, its search strings laid out ahead as the server lays
        // them out).
        other if other.starts_with("typing:") => {
            let query = &other["typing:".len()..];
            SearchWarmUp::new(&session).run();
            let keys = typed_keys(&session, query, repeat);
            let mut out_times = serde_json::Map::new();
            for (prefix, times, rows) in keys {
                out_times.insert(prefix.to_owned(), json!({"ms": times, "rows": rows}));
            }
            out["typingMs"] = Value::Object(out_times);
            out["peakRssKb"] = json!(vm_kb("VmHWM:"));
        }
        other if other.starts_with("rows:") => {
            let filter: FilterMode = other["rows:".len()..].parse()?;
            let mut times = Vec::new();
            for _ in 0..repeat {
                let t = Instant::now();
                let state = ViewState {
                    filter,
                    ..ViewState::default()
                };
                std::hint::black_box(compute_rows(&session, &state, None).rows.len());
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            out["opMs"] = json!(times);
        }
        other => return Err(format!("unknown probe op `{other}`").into()),
    }
    writeln!(std::io::stdout().lock(), "{out}")?;
    Ok(())
}

/// Types `query` key by key, `runs` times, each time into a fresh tree model (built untimed):
/// for each prefix, the milliseconds of its default-filter window in each run, and how many rows
/// it shows.
pub fn typed_keys<'q>(
    session: &Session,
    query: &'q str,
    runs: usize,
) -> Vec<(&'q str, Vec<f64>, usize)> {
    let prefixes: Vec<&str> = query
        .char_indices()
        .map(|(i, c)| &query[..i + c.len_utf8()])
        .collect();
    let mut keys: Vec<(&str, Vec<f64>, usize)> =
        prefixes.iter().map(|&p| (p, Vec::new(), 0)).collect();
    for _ in 0..runs {
        let model = TreeModel::new(session, None);
        std::hint::black_box(model.window(&ViewState::default()).rows.len());
        for (prefix, times, rows) in &mut keys {
            let state = ViewState {
                search: (*prefix).to_owned(),
                ..ViewState::default()
            };
            let started = Instant::now();
            *rows = model.window(&state).visible_count;
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    keys
}

pub fn probe_open(file: &Path) -> AnyResult<Value> {
    let exe = std::env::current_exe()?;
    let output = Command::new(exe).arg("--probe").arg(file).output()?;
    if !output.status.success() {
        return Err(format!("probe failed: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}
