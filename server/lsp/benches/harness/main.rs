//! The performance harness (issue 8): generates realistic synthetic sessions once (cached in
//! `target/bench-data/`), then measures, per size and dialect, medians of several runs of every
//! operation the editor waits on, and reports each figure against `benches/budgets.json`.
//!
//! ```text
//! cargo bench -p sessiontree --bench harness -- [--sizes 1k,10k,100k] [--dialects pi,omp] [--runs 5]
//!                                                [--seed 1] [--json target/bench.json]
//! ```
//!
//! Opening is measured in fresh child processes (this binary re-executed with `--probe`), so the
//! peak RSS is the real one of a process that opened the file. Everything else runs in this
//! process on one opened session; writes go to a scratch copy, never to the cached file. Relative
//! `--json` paths are taken from the workspace root. Timing never goes into the test suite.

use serde_json::{json, Value};
use sessiontree_core::context::{build_context, session_context};
use sessiontree_core::ids::RandomIds;
use sessiontree_core::synth::{self, SynthOptions};
use sessiontree_core::tree::Tree;
use sessiontree_core::view::{
    compute_rows, first_window, FilterMode, SearchWarmUp, TreeModel, ViewState,
};
use sessiontree_core::{Dialect, OpenOptions, Session};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The same allocator as the `sessiontree` binary, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::time::{Duration, Instant};

/// The search query (2-3 tokens, words the generator uses).
const SEARCH: &str = "parse config";
/// A second workspace-symbol query, different from the first: the server answers a query it has
/// just answered over unchanged files from its last answer, which would not measure scoring.
const NEXT_SYMBOL_QUERY: &str = "writer client";

/// Bumped whenever the generator's output changes, so cached files are regenerated.
const DATA_VERSION: u32 = 1;

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(err) = real_main() {
        let _ = writeln!(std::io::stderr().lock(), "harness: {err}");
        std::process::exit(2);
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments

struct Args {
    sizes: Vec<usize>,
    dialects: Vec<Dialect>,
    runs: usize,
    seed: u64,
    json: Option<PathBuf>,
    probe: Option<PathBuf>,
    op: String,
    repeat: usize,
    keep_scratch: bool,
    data_dir: Option<PathBuf>,
    markdown: Option<PathBuf>,
}

fn parse_args() -> AnyResult<Args> {
    let mut args = Args {
        sizes: vec![1_000, 10_000, 100_000],
        dialects: vec![Dialect::Pi, Dialect::Omp],
        runs: 5,
        seed: 1,
        json: None,
        probe: None,
        op: "open".to_owned(),
        repeat: 5,
        keep_scratch: false,
        data_dir: None,
        markdown: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--sizes" => {
                args.sizes = value("--sizes")?
                    .split(',')
                    .map(|s| synth::parse_count(s).ok_or_else(|| format!("bad size `{s}`")))
                    .collect::<Result<_, _>>()?
            }
            "--dialects" => {
                args.dialects = value("--dialects")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?
            }
            "--runs" => args.runs = value("--runs")?.parse::<usize>()?.max(1),
            "--seed" => args.seed = value("--seed")?.parse()?,
            "--json" => args.json = Some(PathBuf::from(value("--json")?)),
            "--probe" => args.probe = Some(PathBuf::from(value("--probe")?)),
            "--op" => args.op = value("--op")?,
            "--repeat" => args.repeat = value("--repeat")?.parse()?,
            "--keep-scratch" => args.keep_scratch = true,
            "--markdown" => args.markdown = Some(PathBuf::from(value("--markdown")?)),
            "--data-dir" => args.data_dir = Some(PathBuf::from(value("--data-dir")?)),
            // `cargo bench` passes `--bench`; filters and libtest flags mean nothing here.
            "--bench" | "--nocapture" | "--quiet" | "-q" => {}
            "--help" | "-h" => {
                let mut out = std::io::stdout().lock();
                writeln!(
                    out,
                    "cargo bench -p sessiontree --bench harness -- [--sizes 1k,10k,100k] [--dialects pi,omp] [--runs 5] [--seed 1] [--json target/bench.json] [--markdown target/bench.md] [--data-dir DIR] [--keep-scratch]"
                )?;
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (try --help)").into()),
        }
    }
    Ok(args)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace_root().join(dir)
            }
        }
        None => workspace_root().join("target"),
    }
}

// ---------------------------------------------------------------------------------------------
// Figures and budgets

/// One measured (or not yet measurable) figure.
#[derive(Clone)]
struct Figure {
    op: &'static str,
    /// Budget key in budgets.json.
    budget_key: &'static str,
    /// Samples in ms (or MB for memory figures).
    samples: Vec<f64>,
    unit: &'static str,
    /// For "plus the write" budgets: the median write alone, in ms.
    write_ms: Option<f64>,
    note: String,
}

impl Figure {
    fn time(op: &'static str, budget_key: &'static str, samples: &[Duration]) -> Figure {
        Figure {
            op,
            budget_key,
            samples: samples.iter().map(|d| d.as_secs_f64() * 1e3).collect(),
            unit: "ms",
            write_ms: None,
            note: String::new(),
        }
    }

    fn memory(op: &'static str, budget_key: &'static str, mb: Vec<f64>) -> Figure {
        Figure {
            op,
            budget_key,
            samples: mb,
            unit: "MB",
            write_ms: None,
            note: String::new(),
        }
    }

    fn with_note(mut self, note: impl Into<String>) -> Figure {
        self.note = note.into();
        self
    }

    fn median(&self) -> Option<f64> {
        median(&self.samples)
    }

    fn spread(&self) -> Option<(f64, f64)> {
        let min = self.samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = self
            .samples
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (!self.samples.is_empty()).then_some((min, max))
    }
}

fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

struct Budgets(Value);

/// The budget that applies: (limit, unit, plus the write).
#[derive(Clone, Copy)]
struct Budget {
    limit: f64,
    plus_write: bool,
}

impl Budgets {
    fn load() -> AnyResult<Budgets> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/budgets.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(Budgets(serde_json::from_str(&text)?))
    }

    fn for_figure(&self, entries: usize, fig: &Figure) -> Option<Budget> {
        let key = fig.budget_key;
        if key.is_empty() {
            return None;
        }
        let read = |table: &Value, key: &str| -> Option<Budget> {
            let b = table.get(key)?;
            let limit = b.get("ms").or_else(|| b.get("mb"))?.as_f64()?;
            Some(Budget {
                limit,
                plus_write: b.get("plusWrite").and_then(Value::as_bool).unwrap_or(false),
            })
        };
        if entries <= 100_000 {
            read(&self.0["100k"], key)
        } else {
            let table = &self.0["1M"];
            read(table, key).or_else(|| match key {
                "open" | "peak_rss" | "create_branched" => None,
                _ => read(table, "interactive"),
            })
        }
    }
}

fn verdict(fig: &Figure, budget: Option<Budget>) -> &'static str {
    let (Some(b), Some(m)) = (budget, fig.median()) else {
        return if fig.samples.is_empty() && !fig.budget_key.is_empty() {
            "not measured yet"
        } else {
            "-"
        };
    };
    let value = if b.plus_write {
        m - fig.write_ms.unwrap_or(0.0)
    } else {
        m
    };
    if value <= b.limit {
        "ok"
    } else {
        "OVER"
    }
}

// ---------------------------------------------------------------------------------------------
// Probe: one fresh process opens the file

fn vm_kb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// The process's minor page faults so far (memory touched for the first time).
fn minor_faults() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which ends with the last `)`); minflt is the 10th field.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(7)?.parse().ok()
}

fn run_probe(file: &Path, op: &str, repeat: usize) -> AnyResult<()> {
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
fn typed_keys<'q>(
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

fn probe_open(file: &Path) -> AnyResult<Value> {
    let exe = std::env::current_exe()?;
    let output = Command::new(exe).arg("--probe").arg(file).output()?;
    if !output.status.success() {
        return Err(format!("probe failed: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

// ---------------------------------------------------------------------------------------------
// Data

struct DataFile {
    path: PathBuf,
    stats: Value,
}

fn data_file(dir: &Path, dialect: Dialect, entries: usize, seed: u64) -> AnyResult<DataFile> {
    std::fs::create_dir_all(dir)?;
    let stem = format!(
        "v{DATA_VERSION}-{}-{}-s{seed}",
        dialect.as_str(),
        synth::format_count(entries)
    );
    let path = dir.join(format!("{stem}.jsonl"));
    let stats_path = dir.join(format!("{stem}.stats.json"));
    if path.exists() {
        if let Ok(text) = std::fs::read_to_string(&stats_path) {
            if let Ok(stats) = serde_json::from_str::<Value>(&text) {
                if std::fs::metadata(&path)?.len() == stats["bytes"].as_u64().unwrap_or(u64::MAX) {
                    return Ok(DataFile { path, stats });
                }
            }
        }
    }
    let started = Instant::now();
    let tmp = dir.join(format!("{stem}.jsonl.tmp"));
    let s = synth::generate_file(
        SynthOptions {
            dialect,
            entries,
            seed,
        },
        &tmp,
    )?;
    std::fs::rename(&tmp, &path)?;
    let stats = json!({
        "entries": s.entries, "bytes": s.bytes, "branchPoints": s.branch_points,
        "branchSummaries": s.branch_summaries, "compactions": s.compactions, "labels": s.labels,
        "leafDepth": s.leaf_depth, "leafId": s.leaf_id, "generateSeconds": started.elapsed().as_secs_f64(),
    });
    std::fs::write(&stats_path, serde_json::to_string_pretty(&stats)?)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "  generated {} ({:.1} MB) in {:.2} s",
        path.display(),
        s.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    )?;
    Ok(DataFile { path, stats })
}

// ---------------------------------------------------------------------------------------------
// Measurements

fn time_runs<T>(runs: usize, mut f: impl FnMut(usize) -> T) -> (Vec<Duration>, Option<T>) {
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
fn measure(
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

fn rand_u8() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos & 0xff
}

// ---------------------------------------------------------------------------------------------
// Server level: the real `sessiontree lsp` over stdio

/// A running `sessiontree lsp`; a reader thread timestamps every message as it arrives.
struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    incoming: std::sync::mpsc::Receiver<(Instant, Value)>,
    next: i64,
}

impl Server {
    fn start(root: &Path, home: &Path) -> AnyResult<Server> {
        use std::process::Stdio;
        let mut child = Command::new(env!("CARGO_BIN_EXE_sessiontree"))
            .arg("lsp")
            .env("HOME", home)
            .env("SESSIONTREE_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = std::io::BufReader::with_capacity(1 << 20, stdout);
            while let Some((at, msg)) = read_frame(&mut r) {
                if tx.send((at, msg)).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin,
            incoming: rx,
            next: 1,
        };
        let empty = home.join("agents");
        std::fs::create_dir_all(&empty)?;
        server.request(
            "initialize",
            json!({
                "processId": null, "rootUri": null, "capabilities": {},
                "initializationOptions": {
                    "extraRoots": [root.display().to_string()],
                    "piAgentDir": empty.display().to_string(),
                    "ompAgentDir": empty.display().to_string(),
                    "home": home.display().to_string(),
                },
            }),
        )?;
        server.notify("initialized", json!({}))?;
        Ok(server)
    }

    fn send(&mut self, msg: &Value) -> AnyResult<()> {
        self.stdin
            .write_all(&sessiontree_testkit::lsp::frame(msg))?;
        self.stdin.flush()?;
        Ok(())
    }

    fn notify(&mut self, method: &str, params: Value) -> AnyResult<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request; returns the result and the time to its response. Requests from the
    /// server are answered with `null`; notifications are dropped.
    fn request(&mut self, method: &str, params: Value) -> AnyResult<(Value, Duration)> {
        let id = self.next;
        self.next += 1;
        let started = Instant::now();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        loop {
            let (at, msg) = self.incoming.recv_timeout(Duration::from_secs(120))?;
            if msg.get("method").is_some() {
                if let Some(req) = msg.get("id") {
                    let req = req.clone();
                    self.send(&json!({"jsonrpc": "2.0", "id": req, "result": null}))?;
                }
                continue;
            }
            if msg.get("id") == Some(&json!(id)) {
                if let Some(err) = msg.get("error") {
                    return Err(format!("{method}: {err}").into());
                }
                return Ok((msg["result"].clone(), at.duration_since(started)));
            }
        }
    }

    /// Waits for a notification `method` (answering server requests meanwhile).
    fn wait_for(&mut self, method: &str, since: Instant) -> AnyResult<Duration> {
        loop {
            let (at, msg) = self.incoming.recv_timeout(Duration::from_secs(30))?;
            if msg.get("method").and_then(Value::as_str) == Some(method) && msg.get("id").is_none()
            {
                return Ok(at.duration_since(since));
            }
            if msg.get("method").is_some() {
                if let Some(req) = msg.get("id") {
                    let req = req.clone();
                    self.send(&json!({"jsonrpc": "2.0", "id": req, "result": null}))?;
                }
            }
        }
    }

    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }

    fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null);
        let _ = self.notify("exit", Value::Null);
        for _ in 0..50 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The next message, and when its last byte arrived: an answer is timed to its arrival, not to
/// the end of this client's parse (which grows with the answer's size, megabytes for a context).
fn read_frame(r: &mut impl std::io::BufRead) -> Option<(Instant, Value)> {
    let len = sessiontree_testkit::lsp::read_header(r)?;
    let mut body = vec![0; len];
    std::io::Read::read_exact(r, &mut body).ok()?;
    let at = Instant::now();
    Some((at, serde_json::from_slice(&body).ok()?))
}

/// The first window as a server's first `sessionTree/rows` finds it: without a tree model when
/// the selector opens on the leaf, else from a fresh one.
fn opening_window(session: &Session) -> sessiontree_core::view::RowsView {
    let state = ViewState::default();
    first_window(session, None, &state)
        .unwrap_or_else(|| TreeModel::new(session, None).window(&state))
}

/// Server-level figures on `file` (alone in its folder; lines get appended to it); the context
/// is asked at `context_leaf`, the leaf the engine's context figure builds at.
fn measure_server(
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

// ---------------------------------------------------------------------------------------------
// Report

fn fmt_value(v: f64, unit: &str) -> String {
    if unit == "MB" {
        format!("{v:.0} MB")
    } else if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 1.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.3} ms")
    }
}

/// One table row per figure: op, one cell per dialect, the budget, the worst verdict.
fn table_rows<'a>(
    budgets: &Budgets,
    size: usize,
    cols: &'a [(Dialect, Value, Vec<Figure>)],
) -> Vec<(&'a str, Vec<String>, String, &'static str)> {
    let mut out = Vec::new();
    for row in 0..cols[0].2.len() {
        let mut verdicts = Vec::new();
        let mut budget_text = String::new();
        let mut cells = Vec::new();
        for (_, _, figs) in cols {
            let fig = &figs[row];
            let bare = |v: f64| {
                fmt_value(v, fig.unit)
                    .trim_end_matches(" ms")
                    .trim_end_matches(" MB")
                    .to_owned()
            };
            cells.push(match (fig.median(), fig.spread()) {
                (Some(m), Some((lo, hi))) => {
                    format!("{} [{}-{}]", fmt_value(m, fig.unit), bare(lo), bare(hi))
                }
                _ => "not measured yet".to_owned(),
            });
            let budget = budgets.for_figure(size, fig);
            if let Some(b) = budget {
                budget_text = format!(
                    "≤ {}{}",
                    fmt_value(b.limit, fig.unit),
                    if b.plus_write { " + write" } else { "" }
                );
            }
            verdicts.push(verdict(fig, budget));
        }
        let worst = if verdicts.contains(&"OVER") {
            "OVER"
        } else if verdicts.contains(&"not measured yet") {
            "not measured yet"
        } else if verdicts.iter().all(|v| *v == "ok") {
            "ok"
        } else {
            "-"
        };
        out.push((cols[0].2[row].op, cells, budget_text, worst));
    }
    out
}

fn real_main() -> AnyResult<()> {
    let args = parse_args()?;
    if let Some(file) = &args.probe {
        return run_probe(file, &args.op, args.repeat);
    }
    let budgets = Budgets::load()?;
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(|| target_dir().join("bench-data"));
    let scratch_dir = data_dir.join("scratch");
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "sessiontree harness: sizes {:?}, dialects {:?}, {} runs, seed {} (data in {})",
        args.sizes
            .iter()
            .map(|&s| synth::format_count(s))
            .collect::<Vec<_>>(),
        args.dialects.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
        args.runs,
        args.seed,
        data_dir.display()
    )?;
    drop(out);

    let mut results = Vec::new();
    let mut by_size: BTreeMap<usize, Vec<(Dialect, Value, Vec<Figure>)>> = BTreeMap::new();
    for &size in &args.sizes {
        for &dialect in &args.dialects {
            writeln!(
                std::io::stdout().lock(),
                "  {} {}…",
                synth::format_count(size),
                dialect
            )?;
            let file = data_file(&data_dir, dialect, size, args.seed)?;
            let figs = measure(&file, dialect, args.runs, &scratch_dir, args.keep_scratch)?;
            for fig in &figs {
                let budget = budgets.for_figure(size, fig);
                let (min, max) = fig.spread().unwrap_or((f64::NAN, f64::NAN));
                results.push(json!({
                    "size": synth::format_count(size),
                    "entries": size,
                    "bytes": file.stats["bytes"],
                    "dialect": dialect.as_str(),
                    "op": fig.op.trim(),
                    "unit": fig.unit,
                    "median": fig.median(),
                    "min": fig.median().map(|_| min),
                    "max": fig.median().map(|_| max),
                    "samples": fig.samples,
                    "writeMs": fig.write_ms,
                    "budget": budget.map(|b| b.limit),
                    "budgetPlusWrite": budget.map(|b| b.plus_write),
                    "verdict": verdict(fig, budget),
                    "note": fig.note,
                }));
            }
            by_size
                .entry(size)
                .or_default()
                .push((dialect, file.stats, figs));
        }
    }

    // The table: one block per size, one column per dialect (plain text, and markdown on request).
    let mut out = std::io::stdout().lock();
    let mut md = String::new();
    for (size, cols) in &by_size {
        let heads: Vec<String> = cols
            .iter()
            .map(|(dialect, stats, _)| {
                let mb = stats["bytes"].as_f64().unwrap_or(0.0) / 1e6;
                format!("{dialect} ({mb:.0} MB) median [min-max]")
            })
            .collect();
        let title = format!("{} entries", synth::format_count(*size));
        writeln!(out)?;
        let mut header = format!("{title:<72}");
        for h in &heads {
            header.push_str(&format!(" | {h:<30}"));
        }
        header.push_str(" | budget            | verdict");
        writeln!(out, "{header}")?;
        writeln!(out, "{}", "-".repeat(header.chars().count()))?;
        md.push_str(&format!(
            "\n| {title} | {} | budget | verdict |\n|---|{}---|---|\n",
            heads.join(" | "),
            "---|".repeat(heads.len())
        ));
        for (op, cells, budget_text, worst) in table_rows(&budgets, *size, cols) {
            let mut line = format!("{op:<72}");
            for cell in &cells {
                line.push_str(&format!(" | {cell:<30}"));
            }
            line.push_str(&format!(" | {budget_text:<17} | {worst}"));
            writeln!(out, "{line}")?;
            let op_md = match op.strip_prefix("  ") {
                Some(sub) => format!("&nbsp;&nbsp;{sub}"),
                None => op.to_owned(),
            };
            let worst_md = if worst == "OVER" { "**OVER**" } else { worst };
            md.push_str(&format!(
                "| {op_md} | {} | {budget_text} | {worst_md} |\n",
                cells.join(" | ")
            ));
        }
    }
    if let Some(md_path) = &args.markdown {
        let md_path = if md_path.is_absolute() {
            md_path.clone()
        } else {
            workspace_root().join(md_path)
        };
        std::fs::write(&md_path, md.trim_start())?;
        writeln!(out, "\nwrote {}", md_path.display())?;
    }

    if let Some(json_path) = &args.json {
        let json_path = if json_path.is_absolute() {
            json_path.clone()
        } else {
            workspace_root().join(json_path)
        };
        if let Some(dir) = json_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let doc = json!({
            "runs": args.runs,
            "seed": args.seed,
            "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "unixTime": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
            "results": results,
        });
        std::fs::write(&json_path, serde_json::to_string_pretty(&doc)?)?;
        writeln!(out, "\nwrote {}", json_path.display())?;
    }
    Ok(())
}
