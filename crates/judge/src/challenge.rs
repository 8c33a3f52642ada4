//! Challenge definitions: `challenges/<id>/challenge.toml`, read into typed form.
//!
//! The four challenges (docs/challenges.md) ship inside the binary (so `demo` needs no files);
//! an organiser can pass a file of their own. Unknown keys are errors: a misspelt limit
//! must not silently fall back to a default.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::JudgeError;

/// The definitions that ship with physiojudge, by id.
pub const BUILT_IN: [(&str, &str); 4] = [
    (
        "cpsc2021",
        include_str!("../../../challenges/cpsc2021/challenge.toml"),
    ),
    (
        "cinc2017",
        include_str!("../../../challenges/cinc2017/challenge.toml"),
    ),
    (
        "physionet2022",
        include_str!("../../../challenges/physionet2022/challenge.toml"),
    ),
    (
        "p300speller",
        include_str!("../../../challenges/p300speller/challenge.toml"),
    ),
];

/// How the judge talks to an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interface {
    /// PhysioNet 2017: `setup.sh` once, `next.sh REC` once per record (one sandbox per
    /// record), answers appended to `answers.txt`.
    PerRecord,
    /// CPSC 2021: `python entry_2021.py DATA OUT` once per data set.
    Folder,
    /// PhysioNet 2022: our drivers call the entry's `team_code.py`, first to train a
    /// model on labelled data, then to run it on unlabelled data.
    TrainRun,
    /// P300 speller: packets streamed to a running algorithm (`crate::streaming`), which
    /// may first train on the training subjects' labelled blocks.
    Stream,
}

/// The native layout of a challenge's data folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// WFDB records `data_<subject>_<n>` listed in `RECORDS`, class in the header.
    Cpsc2021,
    /// WFDB headers + MAT v4 signals, labels in `REFERENCE.csv`.
    Cinc2017,
    /// CirCor `training_data`: `<patient>.txt` with its recordings.
    Physionet2022,
    /// P300 speller blocks: a folder per subject of `.npy` blocks (`stream::load`).
    P300,
}

/// Which official metric scores the exam.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScorerId {
    Cpsc2021,
    Cinc2017,
    Physionet2022,
    Itr,
}

/// Fractions of the subjects (patients) given to each split.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Split {
    pub training: f64,
    pub quiz: f64,
    pub exam: f64,
}

/// Limits, in the units an organiser writes.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsDef {
    pub memory_mb: u64,
    pub pids: u64,
    /// `setup.sh`, or the prep stage's own run.
    pub setup_time_s: u64,
    /// The whole train stage (train-run interface).
    #[serde(default)]
    pub train_s: Option<u64>,
    pub record_cpu_s: u64,
    pub record_wall_s: u64,
    /// Added once to a folder or run stage's budget (interpreter start, imports, model
    /// loading).
    pub startup_s: u64,
    /// No stage may run longer than this in all.
    pub stage_cap_s: u64,
}

/// A file's lines to drop before an entry sees it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StripRule {
    /// Files whose name ends with this.
    pub suffix: String,
    /// Lines whose text (leading blanks ignored) starts with one of these.
    pub prefixes: Vec<String>,
}

/// What quiz and exam data never show (docs/architecture.md: labels never enter a sandbox).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelRules {
    /// File name suffixes never copied.
    pub withhold: Vec<String>,
    pub strip: Vec<StripRule>,
}

/// One challenge.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Challenge {
    pub id: String,
    pub title: String,
    pub interface: Interface,
    pub layout: Layout,
    pub scorer: ScorerId,
    /// Files (or folders) that must exist in the entry and not be empty.
    pub required_files: Vec<String>,
    /// The entry's pip requirements file, checked against the runtime, if any.
    #[serde(default)]
    pub requirements: Option<String>,
    pub split: Split,
    pub limits: LimitsDef,
    pub labels: LabelRules,
    /// The stream interface's session.
    #[serde(default)]
    pub stream: Option<StreamDef>,
}

/// How a streaming session is played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamDef {
    /// Seeds the subjects' shuffled order (published: the order is no secret, and a
    /// fixed seed makes a session reproducible).
    pub seed: u64,
}

impl Challenge {
    /// A built-in challenge by id.
    pub fn built_in(id: &str) -> Result<Challenge, JudgeError> {
        let (_, text) = BUILT_IN.iter().find(|(i, _)| *i == id).ok_or_else(|| {
            JudgeError::Challenge(format!(
                "unknown challenge {id:?} (known: {})",
                BUILT_IN.map(|(i, _)| i).join(", ")
            ))
        })?;
        Challenge::parse(text, &format!("challenges/{id}/challenge.toml"))
    }

    /// Reads a definition file.
    pub fn from_file(path: &Path) -> Result<Challenge, JudgeError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| JudgeError::Challenge(format!("{}: {e}", path.display())))?;
        Challenge::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a definition; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Challenge, JudgeError> {
        let c: Challenge =
            toml::from_str(text).map_err(|e| JudgeError::Challenge(format!("{source}: {e}")))?;
        c.check()
            .map_err(|e| JudgeError::Challenge(format!("{source}: {e}")))?;
        Ok(c)
    }

    fn check(&self) -> Result<(), String> {
        let s = self.split;
        for (name, f) in [("training", s.training), ("quiz", s.quiz), ("exam", s.exam)] {
            if !(0.0..=1.0).contains(&f) {
                return Err(format!("split.{name} = {f} is not a fraction in [0, 1]"));
            }
        }
        if (s.training + s.quiz + s.exam - 1.0).abs() > 1e-9 {
            return Err(format!(
                "split fractions add up to {}, not 1",
                s.training + s.quiz + s.exam
            ));
        }
        if s.exam == 0.0 {
            return Err("split.exam is 0: there would be nothing to score".into());
        }
        if self.interface == Interface::TrainRun && s.training == 0.0 {
            return Err("a train-run challenge needs split.training > 0".into());
        }
        if self.interface == Interface::TrainRun && self.limits.train_s.is_none() {
            return Err("a train-run challenge needs limits.train_s".into());
        }
        let streaming = self.interface == Interface::Stream;
        if streaming != self.stream.is_some() {
            return Err(
                "a [stream] table goes with interface = \"stream\", and only with it".into(),
            );
        }
        if streaming != (self.layout == Layout::P300) || streaming != (self.scorer == ScorerId::Itr)
        {
            return Err(
                "interface = \"stream\", layout = \"p300\" and scorer = \"itr\" go together".into(),
            );
        }
        let l = &self.limits;
        if l.memory_mb == 0 || l.pids == 0 || l.record_cpu_s == 0 || l.record_wall_s == 0 {
            return Err("limits must be positive".into());
        }
        for f in &self.required_files {
            if f.is_empty() || f.contains("..") || f.starts_with('/') {
                return Err(format!("required file {f:?} is not a plain relative name"));
            }
        }
        Ok(())
    }

    /// The limits of one sandbox run that handles `records` records (one for the
    /// per-record interface), capped at the stage cap.
    pub fn run_limits(&self, records: usize) -> sandbox::Limits {
        let l = &self.limits;
        let n = records.max(1) as u64;
        let cap = l.stage_cap_s;
        let startup = if self.interface == Interface::PerRecord {
            0
        } else {
            l.startup_s
        };
        sandbox::Limits {
            cpu_time: Duration::from_secs((startup + l.record_cpu_s * n).min(cap)),
            ..self.single_run_limits((startup + l.record_wall_s * n).min(cap))
        }
    }

    /// The limits of the setup run (`setup.sh`).
    pub fn setup_limits(&self) -> sandbox::Limits {
        self.single_run_limits(self.limits.setup_time_s)
    }

    /// The limits of the train run.
    pub fn train_limits(&self) -> sandbox::Limits {
        let l = &self.limits;
        self.single_run_limits(l.train_s.unwrap_or(l.stage_cap_s).min(l.stage_cap_s))
    }

    /// One run of `seconds` of CPU and wall time, with the challenge's memory and pids.
    fn single_run_limits(&self, seconds: u64) -> sandbox::Limits {
        let t = Duration::from_secs(seconds);
        sandbox::Limits {
            cpu_time: t,
            wall_time: t,
            memory_bytes: self.limits.memory_mb << 20,
            pids: self.limits.pids,
            ..sandbox::Limits::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_definition_parses() {
        for (id, _) in BUILT_IN {
            let c = Challenge::built_in(id).unwrap();
            assert_eq!(c.id, id);
        }
        assert!(Challenge::built_in("nope").is_err());
    }

    #[test]
    fn a_misspelt_key_is_an_error_not_a_default() {
        let text = BUILT_IN[0].1.replace("memory_mb", "memory_mib");
        let e = Challenge::parse(&text, "x.toml").unwrap_err().to_string();
        assert!(e.contains("x.toml") && e.contains("memory"), "{e}");
    }

    #[test]
    fn fractions_must_add_up_and_leave_an_exam() {
        let text = BUILT_IN[0].1.replace("exam = 0.7", "exam = 0.6");
        let e = Challenge::parse(&text, "x.toml").unwrap_err().to_string();
        assert!(e.contains("add up"), "{e}");
        let text = BUILT_IN[0]
            .1
            .replace("quiz = 0.3", "quiz = 1.0")
            .replace("exam = 0.7", "exam = 0.0");
        assert!(Challenge::parse(&text, "x").is_err());
    }

    #[test]
    fn a_stream_table_goes_with_the_stream_interface_only() {
        let p300 = BUILT_IN[3].1;
        let c = Challenge::parse(p300, "p").unwrap();
        assert_eq!(c.stream, Some(StreamDef { seed: 2026 }));
        let cut = p300.split("[stream]").next().unwrap();
        let e = Challenge::parse(cut, "p").unwrap_err().to_string();
        assert!(e.contains("[stream] table goes with"), "{e}");
        let text = format!("{}\n[stream]\nseed = 1\n", BUILT_IN[0].1);
        assert!(Challenge::parse(&text, "c").is_err());
        let text = p300.replace("scorer = \"itr\"", "scorer = \"cinc2017\"");
        let e = Challenge::parse(&text, "p").unwrap_err().to_string();
        assert!(e.contains("go together"), "{e}");
    }

    #[test]
    fn folder_budget_grows_with_the_records_and_stops_at_the_cap() {
        let c = Challenge::built_in("cpsc2021").unwrap();
        assert_eq!(c.run_limits(2).cpu_time, Duration::from_secs(30 + 120));
        assert_eq!(c.run_limits(10_000).wall_time, Duration::from_secs(3600));
        let p = Challenge::built_in("cinc2017").unwrap();
        assert_eq!(p.run_limits(1).cpu_time, Duration::from_secs(30));
    }
}
