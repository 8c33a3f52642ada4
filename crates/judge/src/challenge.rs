//! Challenge definitions: `challenges/<id>/challenge.toml`, read into typed form.
//!
//! The four challenges (docs/challenges.md) ship inside the binary (so `demo` needs no files);
//! an organiser can pass a file of their own. Unknown keys are errors: a misspelt limit
//! must not silently fall back to a default.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::JudgeError;
use crate::kinds::Kind;

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

/// Which kind scores the exam: the scorer a definition names (`scorer = "…"`), one of
/// the kinds known when the definition is read (`crate::kinds`: the built-in ones and
/// any registered). A definition holds it as the kind's id, so a stored definition reads
/// back the same; an unknown name is an error naming the known ones.
#[derive(Clone, Copy)]
pub struct ScorerId(&'static dyn Kind);

impl ScorerId {
    /// The known kind whose id is `name`.
    pub fn named(name: &str) -> Option<ScorerId> {
        crate::kinds::find(name).map(ScorerId)
    }

    /// The scorer id of a kind (`crate::kinds::register` gives it for a new one).
    pub(crate) fn of_kind(kind: &'static dyn Kind) -> ScorerId {
        ScorerId(kind)
    }

    /// The name a definition writes.
    pub fn as_str(self) -> &'static str {
        self.0.id()
    }

    /// The kind it names.
    pub fn kind(self) -> &'static dyn Kind {
        self.0
    }
}

impl PartialEq for ScorerId {
    fn eq(&self, other: &ScorerId) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ScorerId {}

impl std::fmt::Debug for ScorerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ScorerId").field(&self.as_str()).finish()
    }
}

impl std::fmt::Display for ScorerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ScorerId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ScorerId, D::Error> {
        let name = String::deserialize(d)?;
        ScorerId::named(&name).ok_or_else(|| {
            let known: Vec<String> = crate::kinds::all()
                .iter()
                .map(|k| format!("`{}`", k.id()))
                .collect();
            serde::de::Error::custom(format_args!(
                "unknown scorer `{name}`, expected one of {}",
                known.join(", ")
            ))
        })
    }
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
    /// Files the rules ask for whose absence is only a warning (the built-in challenges'
    /// `AUTHORS.txt`: the official examples ship none); an organiser who wants one
    /// required lists it in `required_files` instead.
    #[serde(default)]
    pub optional_files: Vec<String>,
    /// The entry's pip requirements file, checked against the runtime, if any.
    #[serde(default)]
    pub requirements: Option<String>,
    pub split: Split,
    pub limits: LimitsDef,
    pub labels: LabelRules,
    /// The stream interface's session.
    #[serde(default)]
    pub stream: Option<StreamDef>,
    /// Decimals of the exam's ranking numbers a participant is shown (docs/judge.md,
    /// "What a participant sees"): full figures let an entry decode hidden labels.
    #[serde(default = "default_precision")]
    pub score_precision: u32,
    /// Whether the quiz split is public: only then does a participant see each quiz
    /// record's reference (and whatever per-record figure is derived from it).
    #[serde(default)]
    pub reveal_quiz_labels: bool,
    /// What an entry may install beyond the runtime (docs/judge.md, "Entries' own
    /// packages").
    #[serde(default)]
    pub packages: PackagesDef,
    /// Which Python runtimes an entry may run on (docs/runtimes.md).
    #[serde(default)]
    pub runtime: RuntimeDef,
}

/// The organiser's `[runtime]` table: the runtimes entries may run on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RuntimeDef {
    /// By name: `default` (the host's CPython, today's runtime) and the era runtimes
    /// `bullseye`, `bookworm`, `trixie`, in the organiser's order of preference.
    pub allowed: Vec<String>,
}

impl Default for RuntimeDef {
    fn default() -> Self {
        RuntimeDef {
            allowed: ["default", "trixie", "bookworm", "bullseye"]
                .map(String::from)
                .to_vec(),
        }
    }
}

/// The organiser's rules for the packages an entry brings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PackagesDef {
    /// Whether an entry may have packages installed beyond the runtime's (`false`: only
    /// the runtime's, at versions its requirements allow).
    pub extra: bool,
    /// Packages never installed (by name, compared as the index does), whether asked
    /// for or needed by what was.
    pub deny: Vec<String>,
    /// The most wheels an entry's environment may download, in MiB (all of its set,
    /// cached or not, so that the verdict never depends on the cache).
    pub download_mb: u64,
    /// The most an installed environment may take, in MiB.
    pub env_mb: u64,
}

impl Default for PackagesDef {
    fn default() -> Self {
        PackagesDef {
            extra: true,
            deny: Vec::new(),
            download_mb: 4096,
            env_mb: 8192,
        }
    }
}

impl PackagesDef {
    /// Whether `name` is on the deny list.
    pub fn denies(&self, name: &str) -> bool {
        let n = runtime::normalise(name);
        self.deny.iter().any(|d| runtime::normalise(d) == n)
    }
}

fn default_precision() -> u32 {
    3
}

/// Which way a ranking number is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
}

/// One number a challenge ranks by: its key in the scorer's report, what people call it,
/// its unit (none for a score without one), which way is better and the values it can
/// take (a plot's axis spans them, so an F1 is drawn on 0 to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankingNumber {
    pub key: &'static str,
    pub name: &'static str,
    pub unit: Option<&'static str>,
    pub better: Better,
    /// The least value it can take, when it has one.
    pub min: Option<f64>,
    /// The greatest value it can take, when it has one.
    pub max: Option<f64>,
}

impl RankingNumber {
    /// The report's `score`, higher is better, under the name people know it by.
    pub const fn score(name: &'static str, unit: Option<&'static str>) -> RankingNumber {
        RankingNumber {
            key: "score",
            name,
            unit,
            better: Better::Higher,
            min: None,
            max: None,
        }
    }

    /// The same number, known to lie within `min` and `max` (either open).
    pub const fn within(self, min: Option<f64>, max: Option<f64>) -> RankingNumber {
        RankingNumber { min, max, ..self }
    }
}

impl ScorerId {
    /// The numbers entries are ranked by, the first being the `score` (its kind's,
    /// [`crate::kinds::Kind::ranking`]).
    pub fn ranking(self) -> &'static [RankingNumber] {
        crate::kinds::of(self).ranking()
    }
}

/// The largest definition file read (a definition is a few KiB).
pub const DEFINITION_CAP: u64 = 1 << 20;
/// The most any limit in seconds may be: a week.
const MAX_SECONDS: u64 = 7 * 24 * 3600;
/// The most memory a run may be given: 1 TiB.
const MAX_MEMORY_MB: u64 = 1 << 20;
/// The most processes a run may be given.
const MAX_PIDS: u64 = 1 << 16;

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
            JudgeError::challenge(
                id,
                format_args!(
                    "unknown challenge (known: {})",
                    BUILT_IN.map(|(i, _)| i).join(", ")
                ),
            )
        })?;
        Challenge::parse(text, &format!("challenges/{id}/challenge.toml"))
    }

    /// Reads a definition file: a regular file of at most [`DEFINITION_CAP`] bytes of
    /// UTF-8 (`/dev/zero` or a FIFO is refused, not read forever).
    pub fn from_file(path: &Path) -> Result<Challenge, JudgeError> {
        use std::io::Read;
        let err = |e: &dyn std::fmt::Display| JudgeError::challenge(&path.display().to_string(), e);
        let file = std::fs::File::open(path).map_err(|e| err(&e))?;
        let meta = file.metadata().map_err(|e| err(&e))?;
        if !meta.is_file() {
            return Err(err(&"not a regular file"));
        }
        let mut bytes = Vec::new();
        file.take(DEFINITION_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| err(&e))?;
        if bytes.len() as u64 > DEFINITION_CAP {
            return Err(err(&format_args!(
                "larger than {} KiB: not a challenge definition",
                DEFINITION_CAP >> 10
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| err(&format_args!("not UTF-8: {e}")))?;
        Challenge::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a definition; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Challenge, JudgeError> {
        let c: Challenge = toml::from_str(text).map_err(|e| JudgeError::challenge(source, e))?;
        c.check().map_err(|e| JudgeError::challenge(source, e))?;
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
        if streaming != (self.layout == Layout::P300) || streaming != self.scorer.kind().streams() {
            let stream_kinds: Vec<String> = crate::kinds::all()
                .iter()
                .filter(|k| k.streams())
                .map(|k| format!("{:?}", k.id()))
                .collect();
            return Err(format!(
                "interface = \"stream\", layout = \"p300\" and scorer = {} go together",
                stream_kinds.join(" or ")
            ));
        }
        self.check_limits()?;
        let p = &self.packages;
        for (name, mb) in [("download_mb", p.download_mb), ("env_mb", p.env_mb)] {
            if !(1..=MAX_MEMORY_MB).contains(&mb) {
                return Err(format!(
                    "packages.{name} = {mb} is outside 1-{MAX_MEMORY_MB} MiB"
                ));
            }
        }
        if p.deny.len() > 1000 || p.deny.iter().any(|d| d.is_empty() || d.len() > 200) {
            return Err("packages.deny must list at most 1000 names of 1-200 characters".into());
        }
        if self.runtime.allowed.is_empty()
            || self.runtime.allowed.iter().any(|r| {
                r != "default" && runtime::Release::from_name(r).is_none_or(|x| x.name() != r)
            })
        {
            return Err(format!(
                "runtime.allowed must list one or more of default, bullseye, bookworm, \
                 trixie; it lists {:?}",
                self.runtime.allowed
            ));
        }
        let plain = |s: &str| {
            !s.is_empty()
                && s.len() <= 64
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        };
        if !plain(&self.id) {
            return Err(format!(
                "id {:?} must be 1-64 letters, digits, '_' or '-'",
                self.id
            ));
        }
        if self.title.is_empty()
            || self.title.len() > 200
            || self.title.chars().any(char::is_control)
        {
            return Err("title must be 1-200 characters with no control characters".into());
        }
        if self.score_precision > 15 {
            return Err(format!(
                "score_precision = {} is more decimals than a double holds (at most 15)",
                self.score_precision
            ));
        }
        for f in self.required_files.iter().chain(&self.optional_files) {
            if f.is_empty()
                || f.len() > 255
                || f.contains("..")
                || f.starts_with('/')
                || f.chars().any(char::is_control)
            {
                return Err(format!("required file {f:?} is not a plain relative name"));
            }
        }
        for s in self
            .labels
            .withhold
            .iter()
            .chain(self.labels.strip.iter().map(|r| &r.suffix))
        {
            if s.is_empty() {
                return Err("an empty label suffix would match every file".into());
            }
        }
        Ok(())
    }

    /// Every limit in a sane range, so that nothing scaled from them overflows.
    fn check_limits(&self) -> Result<(), String> {
        let l = &self.limits;
        let range = |name: &str, v: u64, max: u64| {
            if (1..=max).contains(&v) {
                Ok(())
            } else {
                Err(format!("limits.{name} = {v} is not in 1..={max}"))
            }
        };
        range("memory_mb", l.memory_mb, MAX_MEMORY_MB)?;
        range("pids", l.pids, MAX_PIDS)?;
        range("setup_time_s", l.setup_time_s, MAX_SECONDS)?;
        range("record_cpu_s", l.record_cpu_s, MAX_SECONDS)?;
        range("record_wall_s", l.record_wall_s, MAX_SECONDS)?;
        range("stage_cap_s", l.stage_cap_s, MAX_SECONDS)?;
        if let Some(t) = l.train_s {
            range("train_s", t, MAX_SECONDS)?;
        }
        // startup_s may be 0 (an entry with nothing to load).
        if l.startup_s > MAX_SECONDS {
            return Err(format!(
                "limits.startup_s = {} is not in 0..={MAX_SECONDS}",
                l.startup_s
            ));
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
        // Checked by `check_limits` to at most a week each; the record count is not
        // bounded, so the products saturate (and the cap takes over).
        let budget = |per_record: u64| {
            per_record
                .saturating_mul(n)
                .saturating_add(startup)
                .min(cap)
        };
        sandbox::Limits {
            cpu_time: Duration::from_secs(budget(l.record_cpu_s)),
            ..self.single_run_limits(budget(l.record_wall_s))
        }
    }

    /// The limits of the setup run (`setup.sh`).
    pub fn setup_limits(&self) -> sandbox::Limits {
        self.single_run_limits(self.limits.setup_time_s)
    }

    /// The limits of the environment's install (prep): prep's time (`setup_time_s`),
    /// and a `/tmp` of `packages.env_mb`, where the environment is built before it is
    /// copied out, so that its size is capped while it is written, not counted after;
    /// `/tmp` is counted in the run's memory, which gets that much on top of the
    /// challenge's.
    pub fn install_limits(&self) -> sandbox::Limits {
        let env = self.packages.env_mb << 20;
        let mut l = self.single_run_limits(self.limits.setup_time_s);
        l.tmp_bytes = env;
        l.file_size_bytes = env;
        l.memory_bytes = l.memory_bytes.saturating_add(env);
        l.pids = l.pids.max(64);
        l
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
            // At most 2^20 MiB (check_limits): the product fits.
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
    fn an_unknown_scorer_is_refused_naming_the_known_ones() {
        let text = BUILT_IN[1]
            .1
            .replace("scorer = \"cinc2017\"", "scorer = \"cinc2071\"");
        let e = Challenge::parse(&text, "x.toml").unwrap_err().to_string();
        for known in crate::kinds::all() {
            assert!(e.contains(&format!("`{}`", known.id())), "{e}");
        }
        assert!(
            e.contains("x.toml") && e.contains("unknown scorer `cinc2071`"),
            "{e}"
        );
        // A known name reads back as the same id.
        let c = Challenge::parse(BUILT_IN[1].1, "x.toml").unwrap();
        assert_eq!(c.scorer.as_str(), "cinc2017");
        assert_eq!(ScorerId::named("cinc2017"), Some(c.scorer));
    }

    #[test]
    fn folder_budget_grows_with_the_records_and_stops_at_the_cap() {
        let c = Challenge::built_in("cpsc2021").unwrap();
        assert_eq!(c.run_limits(2).cpu_time, Duration::from_secs(30 + 120));
        assert_eq!(c.run_limits(10_000).wall_time, Duration::from_secs(3600));
        let p = Challenge::built_in("cinc2017").unwrap();
        assert_eq!(p.run_limits(1).cpu_time, Duration::from_secs(30));
        assert_eq!(c.run_limits(usize::MAX).cpu_time, Duration::from_secs(3600));
    }

    /// A limit that would wrap when scaled (17592186044416 MiB is 2^64 bytes: 0 after
    /// the shift in a release build) is refused, as is every limit out of range.
    #[test]
    fn package_rules_default_parse_and_are_checked() {
        let base = BUILT_IN[1].1;
        let c = Challenge::parse(base, "t").unwrap();
        assert_eq!(c.packages, PackagesDef::default());
        assert!(c.packages.extra && c.packages.download_mb == 4096);
        let with = |extra: &str| Challenge::parse(&format!("{base}\n[packages]\n{extra}\n"), "t");
        let c = with("extra = false\ndeny = [\"Torch\", \"tensorflow\"]\nenv_mb = 100").unwrap();
        assert!(!c.packages.extra && c.packages.env_mb == 100);
        assert_eq!(c.packages.download_mb, 4096);
        assert!(c.packages.denies("torch") && c.packages.denies("TensorFlow"));
        assert!(!c.packages.denies("numpy"));
        let l = c.install_limits();
        assert_eq!(l.tmp_bytes, 100 << 20);
        assert_eq!(l.memory_bytes, (c.limits.memory_mb + 100) << 20);
        for (bad, why) in [
            ("extras = true", "unknown field"),
            ("download_mb = 0", "download_mb"),
            ("env_mb = 99999999999", "env_mb"),
            ("deny = [\"\"]", "packages.deny"),
        ] {
            let e = with(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn limits_out_of_range_are_refused() {
        let base = BUILT_IN[0].1;
        for (from, to, key) in [
            (
                "memory_mb = 2048",
                "memory_mb = 17592186044416",
                "memory_mb",
            ),
            ("memory_mb = 2048", "memory_mb = 0", "memory_mb"),
            ("pids = 64", "pids = 100000000", "pids"),
            (
                "stage_cap_s = 3600",
                "stage_cap_s = 18446744073709551615",
                "stage_cap_s",
            ),
            ("record_cpu_s = 60", "record_cpu_s = 0", "record_cpu_s"),
            ("startup_s = 30", "startup_s = 99999999999", "startup_s"),
        ] {
            assert!(base.contains(from), "{from}");
            let e = Challenge::parse(&base.replace(from, to), "x.toml")
                .unwrap_err()
                .to_string();
            assert!(e.contains(key) && e.contains("x.toml"), "{e}");
        }
        let e = Challenge::parse(&format!("score_precision = 40\n{base}"), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("score_precision"), "{e}");
        let e = Challenge::parse(&base.replace("id = \"cpsc2021\"", "id = \"../x\""), "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("id"), "{e}");
    }

    #[test]
    fn a_definition_file_is_read_with_a_cap() {
        let e = Challenge::from_file(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("not a regular file"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; (DEFINITION_CAP + 1) as usize]).unwrap();
        let e = Challenge::from_file(&big).unwrap_err().to_string();
        assert!(e.contains("big.toml") && e.contains("larger than"), "{e}");
    }

    #[test]
    fn visibility_defaults_and_ranking_numbers() {
        let c = Challenge::built_in("physionet2022").unwrap();
        assert_eq!((c.score_precision, c.reveal_quiz_labels), (3, false));
        let keys: Vec<_> = c
            .scorer
            .ranking()
            .iter()
            .map(|r| (r.key, r.better))
            .collect();
        assert_eq!(
            keys,
            [("score", Better::Higher), ("outcome_cost", Better::Lower)]
        );
    }
}
