//! `physiojudge demo`: the main job on a fresh machine. Generates each challenge's data
//! with `synth` (nothing third-party), sets up the Python runtime if needed, runs every
//! example entry (the MATLAB ones too when the Octave runtime is set up) and a trivial
//! baseline through all stages in the sandbox, and prints a leaderboard with each
//! entry's language.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
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
    /// Records (patients for physionet2022, subjects for p300speller) per challenge
    /// (default: synth's demo size).
    #[arg(long)]
    pub records: Option<usize>,
    /// The folder of example entries (default: the checkout's `entries/`).
    #[arg(long)]
    pub entries: Option<PathBuf>,
}

/// The answer that needs no algorithm, per challenge: every entry must beat it.
pub const TRIVIAL: [(&str, &[(&str, &str)]); 4] = [
    (
        "cpsc2021",
        &[
            (
                "entry_2021.py",
                "# Trivial baseline: no AF anywhere.\n\
                 import json, os, sys\n\
                 data, out = sys.argv[1], sys.argv[2]\n\
                 for name in open(os.path.join(data, 'RECORDS')).read().split():\n\
                 \x20   json.dump({'predict_endpoints': []}, open(os.path.join(out, name + '.json'), 'w'))\n",
            ),
            ("AUTHORS.txt", "physiojudge demo\n"),
            ("LICENSE.txt", "MIT\n"),
        ],
    ),
    (
        "cinc2017",
        &[
            ("setup.sh", "#!/bin/bash\ntrue\n"),
            (
                "next.sh",
                "#!/bin/bash\n# Trivial baseline: every record is normal rhythm.\necho \"$1,N\" >> answers.txt\n",
            ),
            ("answers.txt", "# no submitted answers\n"),
            ("dependencies.txt", "# none\n"),
            ("AUTHORS.txt", "physiojudge demo\n"),
            ("LICENSE.txt", "MIT\n"),
        ],
    ),
    (
        "physionet2022",
        &[(
            "team_code.py",
            "# Trivial baseline: every patient Absent and Normal.\n\
             import os\n\
             def train_challenge_model(data_folder, model_folder, verbose):\n\
             \x20   open(os.path.join(model_folder, 'model.txt'), 'w').write('trivial')\n\
             def load_challenge_model(model_folder, verbose):\n\
             \x20   return None\n\
             def run_challenge_model(model, data, recordings, verbose):\n\
             \x20   classes = ['Present', 'Unknown', 'Absent', 'Abnormal', 'Normal']\n\
             \x20   return classes, [0, 0, 1, 0, 1], [0.0, 0.0, 1.0, 0.0, 1.0]\n",
        )],
    ),
    (
        "p300speller",
        &[
            (
                "AlgorithmImplement/AlgorithmImplement.py",
                "# Trivial baseline: 'A' for every character, as early as a report counts.\n\
                 from physiojudge_stream import AlgorithmInterface, ReportModel\n\
                 class AlgorithmImplement(AlgorithmInterface):\n\
                 \x20   def run(self):\n\
                 \x20       pending = False\n\
                 \x20       while True:\n\
                 \x20           packet = self.task.get_data()\n\
                 \x20           if pending:\n\
                 \x20               self.task.report(ReportModel(101))\n\
                 \x20               pending = False\n\
                 \x20           if (packet.data[-1] == 101).any():\n\
                 \x20               pending = True\n\
                 \x20           if packet.finished_flag:\n\
                 \x20               break\n",
            ),
            ("config.toml", "unitImage = \"python:3\"\n"),
        ],
    ),
];

/// The MATLAB-language example entries (docs/matlab.md), by challenge: the demo runs
/// them beside the Python ones when the Octave runtime is set up.
pub const MATLAB_EXAMPLES: [(&str, &str); 2] = [
    ("cpsc2021", "cpsc2021-matlab"),
    ("cinc2017", "cinc2017-matlab"),
];

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
    for (id, trivial) in TRIVIAL {
        let data = base.join("data").join(id);
        let summary = synth::write_challenge(id, &data, a.seed, a.records)
            .with_context(|| format!("generating {id} data"))?;
        eprintln!("{summary}");
        let trivial_dir = base.join("entries").join(format!("trivial-{id}"));
        write_trivial(trivial, &trivial_dir)?;
        let example = entries.join(id);
        if !example.is_dir() {
            bail!(
                "{}: the example entry is missing (pass --entries DIR)",
                example.display()
            );
        }
        let mut runs = vec![(format!("example {id}"), example)];
        if octave.is_ok()
            && let Some((_, dir)) = MATLAB_EXAMPLES.iter().find(|(c, _)| *c == id)
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

/// Writes a trivial entry's files (one of [`TRIVIAL`]) into `dir`.
pub fn write_trivial(files: &[(&str, &str)], dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in files {
        let to = dir.join(name);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&to, text).with_context(|| format!("writing {}", to.display()))?;
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
