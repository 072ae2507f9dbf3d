//! The harness's command line, and where the workspace and its `target/` folder are.

use crate::AnyResult;
use sessiontree_core::synth;
use sessiontree_core::Dialect;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Args {
    pub sizes: Vec<usize>,
    pub dialects: Vec<Dialect>,
    pub runs: usize,
    pub seed: u64,
    pub json: Option<PathBuf>,
    pub probe: Option<PathBuf>,
    pub op: String,
    pub repeat: usize,
    pub keep_scratch: bool,
    pub data_dir: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
}

pub fn parse_args() -> AnyResult<Args> {
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

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn target_dir() -> PathBuf {
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
