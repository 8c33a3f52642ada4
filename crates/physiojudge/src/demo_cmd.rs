//! `physiojudge demo`: the main job on a fresh machine. Generates each challenge's data
//! with `synth` (nothing third-party), sets up the Python runtime if needed, runs every
//! example entry (the MATLAB ones too when the Octave runtime is set up) and a trivial
//! baseline through all stages in the sandbox, and prints a leaderboard with each
//! entry's language.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use judge::kinds::Kind;
use judge::result::EntryVerdict;

#[derive(Args)]
pub struct DemoArgs {
    /// Folder for the generated data, the trivial entries and every result (default: a
    /// new folder per run in physiojudge's data folder,
    /// $XDG_DATA_HOME/physiojudge/demo/<UTC time>, ~/.local/share without XDG_DATA_HOME).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of the generated data.
    #[arg(long, default_value_t = crate::evaluate_cmd::DEFAULT_SEED)]
    pub seed: u64,
    /// Records per challenge (patients or subjects where the challenge has those)
    /// (default: synth's demo size).
    #[arg(long)]
    pub records: Option<usize>,
    /// The folder of example entries (default: the checkout's `entries/`).
    #[arg(long)]
    pub entries: Option<PathBuf>,
}

/// The challenges the demo runs, in order: every built-in definition with its kind,
/// which says its example entry, its MATLAB one if any, and the trivial baseline every
/// entry must beat (`judge::kinds::Kind`).
pub fn challenges() -> Result<Vec<(&'static str, &'static dyn Kind)>> {
    judge::challenge::BUILT_IN
        .iter()
        .map(|(id, _)| {
            let c = judge::Challenge::built_in(id)?;
            Ok((*id, judge::kinds::of(c.scorer)))
        })
        .collect()
}

/// The example entry of a demo challenge: its folder in `entries`, which must exist.
pub fn example(id: &str, kind: &dyn Kind, entries: &Path) -> Result<PathBuf> {
    let Some(example) = kind.shipped().example else {
        bail!("{id}: its kind ships no example entry");
    };
    let dir = entries.join(example.folder);
    if !dir.is_dir() {
        bail!(
            "{}: the example entry is missing (pass --entries DIR)",
            dir.display()
        );
    }
    Ok(dir)
}

/// Whether the MATLAB examples can run here: `Err` says why not and what to do (the
/// Octave runtime is built only on request: minutes of downloading, 751 MB).
pub fn octave_for_examples() -> std::result::Result<(), String> {
    matlab::Octave::find().map(|_| ()).map_err(|e| {
        format!(
            "the MATLAB example entries are left out: {e}; `physiojudge runtime setup \
             --octave` builds it (once, a few minutes)"
        )
    })
}

struct Row {
    challenge: String,
    entry: String,
    /// As the result names it (`Python`, `MATLAB (Octave)`, `other`).
    language: String,
    verdict: EntryVerdict,
    quiz: Option<f64>,
    exam: Option<f64>,
    /// PhysioNet 2022's second ranking number (lower is better).
    outcome_cost: Option<f64>,
    seconds: f64,
    failure: Option<String>,
}

pub fn default_entries() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../entries")
}

/// The runtime, set up on first use (a few minutes' download the first time).
pub fn ensure_runtime() -> Result<()> {
    let dir = runtime::default_dir();
    if runtime::Runtime::open(&dir).is_ok() {
        return Ok(());
    }
    eprintln!(
        "setting up the Python runtime in {} (once; downloads the locked wheels from PyPI)",
        dir.display()
    );
    runtime::setup(&dir, Path::new(runtime::DEFAULT_PYTHON))
        .context("setting up the Python runtime")?;
    Ok(())
}

pub fn run(a: DemoArgs, out: &mut dyn Write) -> Result<()> {
    if !nix::unistd::Uid::effective().is_root() {
        bail!(
            "the demo runs entries in the sandbox, which needs root (namespaces, cgroups): \
             run it as root, e.g. `sudo -E cargo run --release -- demo`"
        );
    }
    let entries = a.entries.clone().unwrap_or_else(default_entries);
    ensure_runtime()?;
    let base = match &a.out {
        Some(p) => p.clone(),
        None => crate::output::run_folder("demo", "")?,
    };
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    let judge = crate::evaluate_cmd::judge(0)?;
    let octave = octave_for_examples();
    if let Err(why) = &octave {
        eprintln!("{why}");
    }
    let mut rows = Vec::new();
    for (id, kind) in challenges()? {
        let data = base.join("data").join(id);
        let summary = synth::write_challenge(id, &data, a.seed, a.records)
            .with_context(|| format!("generating {id} data"))?;
        eprintln!("{summary}");
        let trivial_dir = base.join("entries").join(format!("trivial-{id}"));
        write_trivial(id, kind, &trivial_dir)?;
        let mut runs = vec![(format!("example {id}"), example(id, kind, &entries)?)];
        if octave.is_ok()
            && let Some(dir) = kind.shipped().matlab_example
        {
            runs.push((format!("example-matlab {id}"), entries.join(dir)));
        }
        runs.push((format!("trivial {id}"), trivial_dir));
        for (label, entry) in runs {
            eprintln!("== {label}");
            let dest = base.join("results").join(label.replace(' ', "-"));
            let t = Instant::now();
            let r = crate::evaluate_cmd::evaluate(&judge, id, &entry, &data, &dest)?;
            rows.push(Row {
                challenge: id.to_string(),
                entry: label.split(' ').next().unwrap_or_default().to_string(),
                language: r.language.map_or("-", |l| l.label()).to_string(),
                verdict: r.verdict,
                quiz: r.quiz_score.as_ref().map(|s| s.score),
                exam: r.score,
                outcome_cost: r.exam_score.as_ref().and_then(|s| s.get("outcome_cost")),
                seconds: t.elapsed().as_secs_f64(),
                failure: r.failure().map(|(s, why)| format!("{}: {why}", s.as_str())),
            });
        }
    }
    leaderboard(&rows, out)?;
    if let Err(why) = &octave {
        writeln!(out, "{why}")?;
    }
    writeln!(out, "data, entries and results: {}", base.display())?;
    if let Some(r) = rows.iter().find(|r| r.verdict == EntryVerdict::Failed) {
        bail!(
            "{} {} failed: {}",
            r.entry,
            r.challenge,
            r.failure.as_deref().unwrap_or("")
        );
    }
    Ok(())
}

/// Writes the trivial entry of challenge `id` (its kind's) into `dir`, each file with
/// its mode.
pub fn write_trivial(id: &str, kind: &dyn Kind, dir: &Path) -> Result<()> {
    let files = kind.shipped().trivial;
    if files.is_empty() {
        bail!("{id}: its kind has no trivial entry");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for f in files {
        let to = dir.join(f.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&to, f.bytes).with_context(|| format!("writing {}", to.display()))?;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(f.mode))
            .with_context(|| format!("setting the mode of {}", to.display()))?;
    }
    Ok(())
}

fn fmt(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.4}"))
}

fn leaderboard(rows: &[Row], out: &mut dyn Write) -> Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{:<14} {:<4} {:<15} {:<16} {:<8} {:>10} {:>10} {:>12} {:>7}",
        "challenge", "rank", "entry", "language", "verdict", "quiz", "exam", "outcome cost", "time"
    )?;
    let mut challenges: Vec<&str> = rows.iter().map(|r| r.challenge.as_str()).collect();
    challenges.dedup();
    for c in challenges {
        let mut these: Vec<&Row> = rows.iter().filter(|r| r.challenge == c).collect();
        // Higher exam score first; unscored entries last.
        let key = |r: &Row| r.exam.filter(|x| !x.is_nan()).unwrap_or(f64::NEG_INFINITY);
        these.sort_by(|a, b| key(b).total_cmp(&key(a)));
        for (i, r) in these.iter().enumerate() {
            let verdict = match r.verdict {
                EntryVerdict::Scored => "scored",
                EntryVerdict::Failed => "FAILED",
                EntryVerdict::DryRun => "dry run",
                EntryVerdict::Error => "ERROR",
                EntryVerdict::Stopped => "stopped",
            };
            writeln!(
                out,
                "{:<14} {:<4} {:<15} {:<16} {:<8} {:>10} {:>10} {:>12} {:>6.1}s",
                r.challenge,
                i + 1,
                r.entry,
                r.language,
                verdict,
                fmt(r.quiz),
                fmt(r.exam),
                r.outcome_cost.map_or("-".into(), |x| format!("{x:.1}")),
                r.seconds
            )?;
        }
    }
    Ok(())
}
