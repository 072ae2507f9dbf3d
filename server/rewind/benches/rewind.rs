//! Rewind benchmarks (not tests): a snapshot of a 10k-file and a 100k-file repository through the
//! private index (median after the first; budgets 100 ms and 300 ms), and a compare of a point
//! with 1,000 changed files (budget 200 ms), as the server runs them (the work tree watched, see
//! `sessiontree_rewind::monitor`), and the compare also without a watcher (as the CLI runs it).
//! Repositories are generated once into `target/bench-data/rewind-<files>` and reused.
//!
//! ```text
//! cargo bench -p sessiontree-rewind --bench rewind -- [--sizes 10000,100000] [--runs 9]
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use sessiontree_rewind::{Moment, Rewind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const SID: &str = "0194ffff-0000-7000-8000-00000000bench";

fn main() {
    let mut sizes = vec![10_000usize, 100_000];
    let mut runs = 9usize;
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--sizes" => {
                sizes = args[i + 1]
                    .split(',')
                    .filter_map(|s| s.parse().ok())
                    .collect();
                i += 1;
            }
            "--runs" => {
                runs = args[i + 1].parse().unwrap_or(runs);
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    // As the server does: each work tree is watched, and git asks the watcher what changed.
    sessiontree_rewind::watch_work_trees(true);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-data");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average at the start: {}",
        load.split(' ').take(3).collect::<Vec<_>>().join(" ")
    );
    println!("| figure | files | first (wall) | median after the first (wall) | max (wall) | median CPU (git included) | budget |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for size in sizes {
        let repo = target.join(format!("rewind-{size}"));
        ensure_repo(&repo, size);
        bench(&repo, size, runs);
    }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=b", "-c", "user.email=b@b"])
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "git {args:?} in {}", dir.display());
}

/// A committed repository of `size` small files in nested folders, plus ignored build output.
fn ensure_repo(repo: &Path, size: usize) {
    if repo.join(".git").join("bench-ready").exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(repo);
    std::fs::create_dir_all(repo).expect("mkdir");
    git(repo, &["init", "-q"]);
    for n in 0..size {
        let dir = repo.join(format!("src/d{:03}/e{:02}", n / 1000, (n / 50) % 20));
        if n % 50 == 0 {
            std::fs::create_dir_all(&dir).expect("mkdir");
        }
        std::fs::write(
            dir.join(format!("f{n}.rs")),
            format!("// file {n}\n").repeat(20),
        )
        .expect("write");
    }
    std::fs::write(repo.join(".gitignore"), "target/\n").expect("write");
    std::fs::create_dir_all(repo.join("target")).expect("mkdir");
    std::fs::write(repo.join("target/out.bin"), "x").expect("write");
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "bench"]);
    std::fs::write(repo.join(".git").join("bench-ready"), "").expect("mark");
}

fn session(repo: &Path, dir: &Path) -> sessiontree_core::Session {
    let path = dir.join("bench.jsonl");
    let cwd = serde_json::to_string(&repo.to_string_lossy()).expect("json");
    let mut text = format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{SID}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":{cwd}}}\n");
    text.push_str("{\"type\":\"message\",\"id\":\"u0000001\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"go\",\"timestamp\":1}}\n");
    std::fs::write(&path, text).expect("session");
    sessiontree_core::Session::open(&path, Default::default()).expect("open")
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// CPU time (user + system) of this process and its reaped children, in ms, from
/// `/proc/self/stat` (clock ticks of 10 ms): on a machine shared with other work the wall time
/// also counts waiting for a core, the CPU time does not.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<f64> = after.split(' ').map(|f| f.parse().unwrap_or(0.0)).collect();
    // Fields 14-17 of the file (utime, stime, cutime, cstime) are 11-14 after the name.
    fields
        .get(11..15)
        .map(|f| f.iter().sum::<f64>() * 10.0)
        .unwrap_or(0.0)
}

/// Times `f` as (wall ms, cpu ms).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t, c) = (Instant::now(), cpu_ms());
    let out = f();
    (out, ms(t), cpu_ms() - c)
}

fn median_after_first(samples: &[f64]) -> (f64, f64) {
    let mut rest = samples[1..].to_vec();
    rest.sort_by(|a, b| a.total_cmp(b));
    (rest[rest.len() / 2], rest[rest.len() - 1])
}

/// One line of the table: wall and CPU (first, median after the first, max), against the budget.
fn report(figure: &str, size: usize, wall: &[f64], cpu: &[f64], budget: f64) {
    let (median, max) = median_after_first(wall);
    let (cpu_median, _) = median_after_first(cpu);
    let verdict = |v: f64| if v <= budget { "ok" } else { "over" };
    println!(
        "| {figure} | {size} | {:.0} ms | {median:.1} ms ({}) | {max:.1} ms | {cpu_median:.0} ms ({}) | ≤ {budget:.0} ms |",
        wall[0],
        verdict(median),
        verdict(cpu_median)
    );
}

fn bench(repo: &Path, size: usize, runs: usize) {
    // A fresh store each time, so "first" is the first snapshot of this repository.
    let _ = std::fs::remove_dir_all(repo.join(".git/sessiontree"));
    let _ = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["update-ref", "-d", "refs/sessiontree/snapshots"])
        .status();
    let scratch = tempfile::tempdir().expect("tempdir");
    let session = session(repo, scratch.path());
    let rewind = Rewind::for_session(&session).expect("store");
    // Snapshot: each run the agent changed five files and added one.
    let (mut samples, mut cpus) = (Vec::new(), Vec::new());
    for run in 0..runs {
        for f in 0..5 {
            let path = repo.join(format!("src/d000/e00/f{f}.rs"));
            std::fs::write(&path, format!("// run {run}\n")).expect("write");
        }
        std::fs::write(repo.join(format!("new{run}.rs")), "new\n").expect("write");
        let (_, wall, cpu) = timed(|| rewind.snapshot().expect("snapshot"));
        samples.push(wall);
        cpus.push(cpu);
    }
    let budget = if size <= 10_000 { 100.0 } else { 300.0 };
    report("snapshot (5 changed, 1 new)", size, &samples, &cpus, budget);
    // An unchanged work tree (no new snapshot is stored).
    let (mut samples, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (snap, wall, cpu) = timed(|| rewind.snapshot().expect("snapshot"));
        assert!(!snap.new);
        samples.push(wall);
        cpus.push(cpu);
    }
    report("snapshot (unchanged)", size, &samples, &cpus, budget);
    // Compare: a point, then 1,000 files changed since; with the server's watcher, then without
    // one (the CLI: git looks at every file).
    let point = rewind
        .record(&session, "u0000001", Moment::Before, true, "bench")
        .expect("record");
    compare(
        &rewind,
        &session,
        repo,
        size,
        runs,
        "compare (1,000 changed), watched",
    );
    sessiontree_rewind::watch_work_trees(false);
    compare(
        &rewind,
        &session,
        repo,
        size,
        runs,
        "compare (1,000 changed), no watcher",
    );
    sessiontree_rewind::watch_work_trees(true);
    restore_and_undo(&rewind, &session, size);
    let _ = point;
    // Put the repository back for the next run.
    git(repo, &["checkout", "-q", "--", "."]);
    git(repo, &["clean", "-qfd", "-e", "target"]);
}

fn compare(
    rewind: &Rewind,
    session: &sessiontree_core::Session,
    repo: &Path,
    size: usize,
    runs: usize,
    figure: &str,
) {
    let (mut samples, mut cpus) = (Vec::new(), Vec::new());
    for run in 0..runs {
        for f in 0..1000 {
            let n = f * (size / 1000);
            let path = repo.join(format!(
                "src/d{:03}/e{:02}/f{n}.rs",
                n / 1000,
                (n / 50) % 20
            ));
            std::fs::write(&path, format!("// {figure} run {run}\n")).expect("write");
        }
        let (cmp, wall, cpu) =
            timed(|| rewind.compare(session, "u0000001", None).expect("compare"));
        samples.push(wall);
        cpus.push(cpu);
        assert!(cmp.changes.len() >= 1000, "{} changes", cmp.changes.len());
    }
    report(figure, size, &samples, &cpus, 200.0);
}

fn restore_and_undo(rewind: &Rewind, session: &sessiontree_core::Session, size: usize) {
    // Restore of those 1,000 files and its undo (no budget; for reference).
    let (mut samples, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let (_, wall, cpu) = timed(|| rewind.restore(session, "u0000001", false).expect("restore"));
        samples.push(wall);
        cpus.push(cpu);
        let (_, wall, cpu) = timed(|| rewind.undo(false).expect("undo"));
        samples.push(wall);
        cpus.push(cpu);
    }
    report(
        "restore / undo (1,000 files)",
        size,
        &samples,
        &cpus,
        f64::INFINITY,
    );
}
