//! Sessions kept in Redis against sessions in files, on loopback (a `redis-server` of the bench's
//! own, as the tests start it):
//!
//! cargo bench -p sessiontree-redis --bench store -- [--entries 100000] [--runs 5] [--samples 40]
//!
//! - **open**: a synthetic omp session (`sessiontree_core::synth`, seed 7) opened from its file and
//!   from Redis (put there as omp's full write leaves it; opened as the engine opens it, bodies
//!   left in the store, and read whole into memory first, for comparison), each in a fresh child
//!   process (this binary re-executed with `--probe`), with the child's peak resident memory
//!   (`VmHWM`);
//! - **follow latency**: another connection appends one whole line; the time until the session
//!   holds it, woken by the store's watch (polling, then keyspace notifications);
//! - **listing** (`--listing` runs only these): what a list of sessions shows of that session
//!   (`sessiontree_core::listing`) from its file, from Redis as the server lists a store (the
//!   store's listing, the session's head in one pipeline, the rest scanned by range), from Redis
//!   read whole first (how it was listed before), and listed again while unchanged (the server
//!   keeps a summary until the session's length, `meta` time or title change: only the store's
//!   listing is read), each in a fresh child, with the bytes of the value read.
//!
//! Timing never goes into the test suite; the figures are in `docs/performance.md`.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use sessiontree_core::session::{SessionStore, Written};
use sessiontree_core::title_slot::TitleSlot;
use sessiontree_core::{OpenOptions, Session};
use sessiontree_redis::follow::{Mode, Watch};
use sessiontree_redis::testing::RedisServer;
use sessiontree_redis::{Link, RedisStore, StoreAddress};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const PATH: &str = "/home/me/.omp/agent/sessions/-proj/2026-01-01T00-00-00-000Z_bench.jsonl";

type AnyResult<T> = Result<T, Box<dyn std::error::Error>>;

struct Args {
    entries: usize,
    runs: usize,
    samples: usize,
    probe: Option<(String, String)>,
    listing: bool,
}

fn parse_args() -> AnyResult<Args> {
    let mut args = Args {
        entries: 100_000,
        runs: 5,
        samples: 40,
        probe: None,
        listing: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.as_str() {
            "--entries" => args.entries = value("--entries")?.parse()?,
            "--runs" => args.runs = value("--runs")?.parse::<usize>()?.max(1),
            "--samples" => args.samples = value("--samples")?.parse::<usize>()?.max(1),
            "--listing" => args.listing = true,
            "--probe" => {
                let what = value("--probe")?;
                let target = value("--probe")?;
                args.probe = Some((what, target));
            }
            "--bench" | "--nocapture" | "--quiet" | "-q" => {}
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    Ok(args)
}

/// The peak resident memory of this process, in KiB (Linux).
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// In a child: what a listing shows of the session (`list-file PATH`, `list-redis URL`,
/// `list-redis-whole URL`, `list-redis-kept URL`); prints `ms entries peak_kib value_bytes_read`.
fn probe_listing(what: &str, target: &str) -> AnyResult<()> {
    use sessiontree_core::listing;
    let started = Instant::now();
    let (entries, bytes) = match what {
        "list-file" => {
            let l = listing::read(Path::new(target)).ok_or("not a session")?;
            (l.entry_count, 0)
        }
        "list-redis" => {
            let link = Link::new(StoreAddress::parse(target)?)?;
            let listed = sessiontree_redis::listing::list(&link)?;
            let paths: Vec<PathBuf> = listed.iter().map(|l| l.path.clone()).collect();
            let heads = sessiontree_redis::listing::heads(&link, &paths, 16 << 10)?;
            let (size, head) = heads
                .into_iter()
                .next()
                .flatten()
                .ok_or("no such session")?;
            let store = Arc::new(RedisStore::new(Arc::clone(&link), Path::new(PATH)));
            let l = listing::from_store(store, size, head, 0).ok_or("not a session")?;
            (l.entry_count, link.value_bytes_read())
        }
        "list-redis-whole" => {
            let link = Link::new(StoreAddress::parse(target)?)?;
            let _ = sessiontree_redis::listing::list(&link)?;
            let bytes = RedisStore::new(Arc::clone(&link), Path::new(PATH))
                .read_all()?
                .ok_or("no such session")?;
            let l = listing::from_bytes(Path::new(PATH), bytes, 0).ok_or("not a session")?;
            (l.entry_count, link.value_bytes_read())
        }
        "list-redis-kept" => {
            // The summary is kept: only the store's listing is read, to see nothing changed.
            let link = Link::new(StoreAddress::parse(target)?)?;
            let listed = sessiontree_redis::listing::list(&link)?;
            (listed.len(), link.value_bytes_read())
        }
        other => return Err(format!("unknown probe {other}").into()),
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    println!("{ms:.1} {entries} {} {bytes}", peak_kib());
    Ok(())
}

/// In a child: opens the session (`file PATH` or `redis URL`) and prints `ms entries peak_kib`.
fn probe(what: &str, target: &str) -> AnyResult<()> {
    if what.starts_with("list-") {
        return probe_listing(what, target);
    }
    let started = Instant::now();
    let session = match what {
        "file" => Session::open(Path::new(target), OpenOptions::default())?,
        "redis" => {
            let link = Link::new(StoreAddress::parse(target)?)?;
            Session::open_store(
                Arc::new(RedisStore::new(link, Path::new(PATH))),
                OpenOptions::default(),
            )?
        }
        "redis-whole" => {
            // The value read whole into memory and opened from there (how a store's session was
            // opened before its bodies were read on demand), for comparison.
            let link = Link::new(StoreAddress::parse(target)?)?;
            let store = RedisStore::new(link, Path::new(PATH));
            let bytes = store.read_all()?.ok_or("no such session")?;
            Session::open_bytes(Path::new(PATH), bytes, OpenOptions::default())?
        }
        other => return Err(format!("unknown probe {other}").into()),
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    println!("{ms:.1} {} {}", session.entries().len(), peak_kib());
    Ok(())
}

fn run_probe(what: &str, target: &str) -> AnyResult<(f64, usize, u64)> {
    run_probe_counting(what, target).map(|(ms, entries, kib, _)| (ms, entries, kib))
}

/// [`run_probe`] with the bytes of the value the child read (listing probes).
fn run_probe_counting(what: &str, target: &str) -> AnyResult<(f64, usize, u64, u64)> {
    let exe = std::env::current_exe()?;
    let out = Command::new(exe).args(["--probe", what, target]).output()?;
    if !out.status.success() {
        return Err(format!("probe failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let ms: f64 = parts.next().unwrap_or("0").parse()?;
    let entries: usize = parts.next().unwrap_or("0").parse()?;
    let kib: u64 = parts.next().unwrap_or("0").parse()?;
    let bytes: u64 = parts.next().unwrap_or("0").parse()?;
    Ok((ms, entries, kib, bytes))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let at = ((values.len() - 1) as f64 * p).round() as usize;
    values[at]
}

fn put(server: &RedisServer, bytes: &[u8]) -> AnyResult<()> {
    let link = Link::new(server.address())?;
    let store = RedisStore::new(link, Path::new(PATH));
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    let slot = std::str::from_utf8(first).ok().and_then(TitleSlot::parse);
    match store.create(bytes, slot.as_ref())? {
        Written::Done { .. } => Ok(()),
        Written::Conflict { .. } => Err("the bench's key exists".into()),
    }
}

/// Appends `samples` lines from another connection, one at a time, and times each until the
/// session (woken by the watch) holds it. Returns the latencies in ms.
fn follow_latencies(server: &RedisServer, samples: usize, want: Mode) -> AnyResult<Vec<f64>> {
    let link = Link::new(server.address())?;
    let store: Arc<dyn SessionStore> =
        Arc::new(RedisStore::new(Arc::clone(&link), Path::new(PATH)));
    let mut session = Session::open_store(store, OpenOptions::default())?;
    let (tx, rx) = mpsc::channel();
    let watch = Watch::start(Arc::clone(&link), move |_: &Path| {
        let _ = tx.send(Instant::now());
    });
    watch.add(Path::new(PATH));
    let deadline = Instant::now() + Duration::from_secs(20);
    while watch.mode() != want {
        if Instant::now() > deadline {
            return Err(format!("the watch did not turn to {want:?}").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // The watch's first look only records the length.
    std::thread::sleep(Duration::from_millis(500));
    let mut writer = server.connection();
    let key = format!("omp:sessions:file:{PATH}");
    let mut out = Vec::with_capacity(samples);
    for n in 0..samples {
        while rx.try_recv().is_ok() {}
        let id = format!("bench{n:04}");
        let line = format!("{{\"type\":\"label\",\"id\":\"{id}\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"targetId\":\"{id}\",\"label\":\"x\"}}\n");
        let appended = Instant::now();
        let _: i64 = redis::cmd("APPEND")
            .arg(&key)
            .arg(&line)
            .query(&mut writer)?;
        loop {
            rx.recv_timeout(Duration::from_secs(10))
                .map_err(|_| "no wake-up within 10 s")?;
            session.follow()?;
            if session.entries().last().and_then(|e| e.id()) == Some(id.as_str()) {
                break;
            }
        }
        out.push(appended.elapsed().as_secs_f64() * 1000.0);
        // Spread the appends over the polling period.
        std::thread::sleep(Duration::from_millis(37));
    }
    Ok(out)
}

fn main() -> AnyResult<()> {
    let args = parse_args()?;
    if let Some((what, target)) = &args.probe {
        return probe(what, target);
    }
    let dir = tempfile::tempdir()?;
    let file: PathBuf = dir.path().join("bench.jsonl");
    let stats = sessiontree_core::synth::generate_file(
        sessiontree_core::synth::SynthOptions {
            dialect: sessiontree_core::Dialect::Omp,
            entries: args.entries,
            seed: 7,
        },
        &file,
    )?;
    let bytes = std::fs::read(&file)?;
    println!(
        "session: {} entries, {:.1} MB (omp, synth seed 7)",
        stats.entries,
        bytes.len() as f64 / 1e6
    );
    let server = RedisServer::start();
    put(&server, &bytes)?;
    drop(bytes);
    let url = server.url();
    let file_arg = file.to_string_lossy().into_owned();
    if args.listing {
        for (name, what, target) in [
            ("its file", "list-file", &file_arg),
            ("Redis, ranged", "list-redis", &url),
            ("Redis, whole", "list-redis-whole", &url),
            ("Redis, kept", "list-redis-kept", &url),
        ] {
            let mut times = Vec::new();
            let mut peaks = Vec::new();
            let mut read = 0;
            for _ in 0..args.runs {
                let (ms, _, kib, bytes) = run_probe_counting(what, target)?;
                times.push(ms);
                peaks.push(kib as f64 / 1024.0);
                read = bytes;
            }
            println!(
                "listing from {name:13}: median {:.0} ms (min {:.0}), peak RSS median {:.0} MB, {:.1} MB of the value read  [{} runs]",
                median(&mut times.clone()),
                times.iter().copied().fold(f64::MAX, f64::min),
                median(&mut peaks),
                read as f64 / 1e6,
                args.runs
            );
        }
        return Ok(());
    }
    for (name, what, target) in [
        ("file", "file", &file_arg),
        ("Redis, ranged", "redis", &url),
        ("Redis, whole", "redis-whole", &url),
    ] {
        let mut times = Vec::new();
        let mut peaks = Vec::new();
        for _ in 0..args.runs {
            let (ms, entries, kib) = run_probe(what, target)?;
            assert_eq!(entries, stats.entries, "{name}: entries");
            times.push(ms);
            peaks.push(kib as f64 / 1024.0);
        }
        println!(
            "open from {name:13}: median {:.0} ms (min {:.0}), peak RSS median {:.0} MB  [{} runs]",
            median(&mut times.clone()),
            times.iter().copied().fold(f64::MAX, f64::min),
            median(&mut peaks),
            args.runs
        );
    }
    let mut polled = follow_latencies(&server, args.samples, Mode::Polling)?;
    drop(server);
    let notifying = RedisServer::start_with(&["--notify-keyspace-events", "K$"]);
    put(&notifying, &std::fs::read(&file)?)?;
    let mut notified = follow_latencies(&notifying, args.samples, Mode::Notifications)?;
    for (name, values) in [("polling", &mut polled), ("notifications", &mut notified)] {
        println!(
            "follow by {name:13}: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms  [{} appends]",
            percentile(values, 0.5),
            percentile(values, 0.95),
            percentile(values, 1.0),
            values.len()
        );
    }
    Ok(())
}
