//! What the read benchmarks share: timing by medians, and wfdb-python in a process of its
//! own whose passes alternate with ours (`wfdb_read.rs` says why).
// Each bench compiles this module by itself and uses part of it.
#![allow(dead_code)]

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use formats::wfdb::Record;

/// glibc's malloc settings from the environment (`mallopt` parameters, tunables).
pub const MALLOC_SETTINGS: [&str; 5] = [
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_ARENA_MAX",
    "GLIBC_TUNABLES",
];

pub const REPEATS: usize = 7;
/// Pairs of passes (ours, then wfdb-python's, or the other way round) per comparison.
pub const PAIRS: usize = 15;

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn time<T>(mut f: impl FnMut() -> T) -> Duration {
    black_box(f()); // warm up
    median(
        (0..REPEATS)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed()
            })
            .collect(),
    )
}

/// wfdb-python in a process of its own that times one pass over a job's records per
/// request (`benches/wfdb_python.py`).
pub struct Python {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Python {
    pub fn start(python: &Path) -> Python {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/wfdb_python.py");
        let mut child = Command::new(python);
        for name in MALLOC_SETTINGS {
            child.env_remove(name);
        }
        let mut child = child
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start wfdb-python");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Python {
            child,
            input,
            output,
        }
    }

    /// Seconds one pass over `job` took.
    pub fn pass(&mut self, job: &str) -> Duration {
        writeln!(self.input, "{job}").expect("ask wfdb-python for a pass");
        let mut line = String::new();
        self.output.read_line(&mut line).expect("read wfdb-python");
        let s: f64 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("wfdb-python failed on {:.60}: {line:?}", job));
        Duration::from_secs_f64(s)
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Ours and wfdb-python's medians, and the median ratio of their passes timed back to
/// back (who goes first alternates), or ours alone without wfdb-python.
pub fn paired<T>(
    ours: impl FnMut() -> T,
    python: Option<&mut Python>,
    job: &str,
) -> (Duration, Option<(Duration, f64)>) {
    paired_n(ours, python, job, PAIRS)
}

/// [`paired`] with `pairs` pairs of passes (fewer for passes that take seconds).
pub fn paired_n<T>(
    mut ours: impl FnMut() -> T,
    python: Option<&mut Python>,
    job: &str,
    pairs: usize,
) -> (Duration, Option<(Duration, f64)>) {
    let Some(py) = python else {
        return (time(ours), None);
    };
    black_box(ours()); // warm up
    py.pass(job);
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..pairs {
        let first = (i % 2 == 1).then(|| py.pass(job));
        let t = Instant::now();
        black_box(ours());
        let o = t.elapsed();
        let p = first.unwrap_or_else(|| py.pass(job));
        ratios.push(p.as_secs_f64() / o.as_secs_f64());
        a.push(o);
        b.push(p);
    }
    ratios.sort_by(f64::total_cmp);
    (median(a), Some((median(b), ratios[ratios.len() / 2])))
}

/// The glibc malloc settings this process was started with, or "none".
pub fn malloc_settings() -> String {
    let set: Vec<String> = MALLOC_SETTINGS
        .iter()
        .filter_map(|n| std::env::var(n).ok().map(|v| format!("{n}={v}")))
        .collect();
    if set.is_empty() {
        "none".into()
    } else {
        set.join(" ")
    }
}

pub fn paths(records: &[PathBuf]) -> String {
    records
        .iter()
        .map(|r| r.to_str().unwrap())
        .collect::<Vec<_>>()
        .join(",")
}

pub fn ms(t: Duration) -> String {
    format!("{:.1} ms", t.as_secs_f64() * 1e3)
}

/// wfdb-python's median and the median ratio, as two table cells.
pub fn theirs(py: Option<(Duration, f64)>) -> String {
    py.map_or("n/a | n/a".into(), |(t, ratio)| {
        format!("{} | {ratio:.1}×", ms(t))
    })
}

pub fn file_bytes(records: &[PathBuf]) -> u64 {
    records
        .iter()
        .map(|r| {
            let rec = Record::open(r).unwrap();
            rec.header
                .signals
                .iter()
                .map(|s| s.file_name.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .map(|f| {
                    std::fs::metadata(r.parent().unwrap().join(f))
                        .unwrap()
                        .len()
                })
                .sum::<u64>()
        })
        .sum()
}
