//! Challenge kinds: what differs between the scorers a challenge definition can name.
//!
//! Each kind lives in its own folder and implements [`Kind`]: how a folder of outputs is
//! scored, which fields of a scorer report come from the entry (the rest is the
//! reference, hidden unless quiz labels are revealed), the numbers it ranks by, when
//! outputs are degenerate, what a folder-interface entry writes per record, the sentence
//! the challenge page gives on scoring, what the record viewer shows of a quiz
//! record ([`view`]), what a submission's page shows of a quiz report ([`quiz`]), and the
//! entries that ship with it (its example, the starter kit, and the trivial baseline
//! the demo runs). The rest of the judge and the platform ask the kind ([`of`]) and
//! never match on the scorer themselves; adding a kind is a folder and one line in
//! `BUILT_IN` (`docs/challenges.md`, "Adding a challenge kind"). The set is open: a
//! test crate or a program embedding the judge adds a kind of its own with [`register`],
//! and a definition names it by its [`Kind::id`] as it names a built-in one.
//!
//! What a kind is not: the official metric itself (the `score` crate computes it, checked
//! against the official scorers) nor the way an entry is driven (`pipeline::driver`).

use std::collections::HashSet;
use std::path::Path;
use std::sync::RwLock;

use serde_json::Value;

use crate::challenge::{Interface, RankingNumber, ScorerId};
use crate::result::ScoreSummary;
use crate::{Challenge, JudgeError};

/// An [`EntryFile`] of the checkout's `entries/<folder>/<path>`, compiled in (a server
/// needs no checkout to hand out a starter kit).
macro_rules! example_file {
    ($folder:literal, $path:literal, $mode:literal) => {
        $crate::kinds::EntryFile {
            path: $path,
            bytes: include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../entries/",
                $folder,
                "/",
                $path
            )),
            mode: $mode,
        }
    };
}

/// An [`EntryFile`] written out here (a trivial baseline's), readable, not executable.
macro_rules! text_file {
    ($path:literal, $text:expr) => {
        $crate::kinds::EntryFile {
            path: $path,
            bytes: $text.as_bytes(),
            mode: 0o644,
        }
    };
}

mod cinc2017;
mod cpsc2021;
mod p300speller;
mod physionet2022;
pub mod quiz;
pub mod view;

/// A folder of outputs scored by a kind's scorer.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The ranking number, as the official scorer computes it.
    pub score: f64,
    /// The scorer's whole report (organisers' view).
    pub report: Value,
    /// The records (or patients) scored with the default answer: each with why its
    /// output was unusable, or `None` when there was no output.
    pub defaulted: Vec<(String, Option<String>)>,
}

/// One file of an entry that ships with physiojudge: its path in the entry, its bytes
/// and its Unix mode (the scripts the judge runs are executable, as in the repository).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryFile {
    pub path: &'static str,
    pub bytes: &'static [u8],
    pub mode: u32,
}

/// A kind's example entry: written for the judge's pinned Python runtime, it runs as it
/// is through `physiojudge evaluate` and is the challenge page's starter kit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// Its folder under the checkout's `entries/` (what `demo` runs).
    pub folder: &'static str,
    /// Its files, compiled in (what the starter kit packs).
    pub files: &'static [EntryFile],
}

/// The entries that ship with a kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shipped {
    /// The example entry (`None`: the kind ships none).
    pub example: Option<Example>,
    /// The MATLAB-language example entry's folder under `entries/` (docs/matlab.md),
    /// which `demo` runs beside the Python one when the Octave runtime is set up.
    pub matlab_example: Option<&'static str>,
    /// The answer that needs no algorithm, which every entry must beat: the baseline
    /// `demo` and `serve --demo` run (empty: none).
    pub trivial: &'static [EntryFile],
}

/// What one challenge kind decides. Implementations are unit structs, one per folder.
pub trait Kind: Sync {
    /// The scorer id a definition names this kind by (`scorer = "…"`): unique among the
    /// known kinds, and stored as text with every definition, so never renamed.
    fn id(&self) -> &'static str;

    /// Whether entries of this kind are driven by a stream session (`interface =
    /// "stream"`), whose driver scores its own outputs: a definition pairs the stream
    /// interface with such a kind and no other.
    fn streams(&self) -> bool {
        false
    }

    /// The Python main file of an entry under `interface` that a MATLAB layout of this
    /// kind stands in for (docs/matlab.md; the per-record interface's `next.sh`, which
    /// any kind's MATLAB entry may replace, is not the kind's to say), or `None`.
    fn python_main(&self, _interface: Interface) -> Option<&'static str> {
        None
    }

    /// Scores the outputs in `taken` against the reference in `data`, restricted to the
    /// records or patients `ids` (strict mode). `None` for a kind whose driver scores its
    /// own outputs (a stream challenge's session).
    fn score_folder(
        &self,
        data: &Path,
        ids: &HashSet<&str>,
        taken: &Path,
    ) -> Result<Option<Scored>, JudgeError>;

    /// Scores a stored session log again (`session`, as the stream stage wrote it), for
    /// a kind whose driver scores its own outputs; `None` for every other kind.
    fn score_session(
        &self,
        _challenge: &Challenge,
        _session: &Path,
    ) -> Option<Result<ScoreSummary, JudgeError>> {
        None
    }

    /// The numbers entries are ranked by, the first being the report's `score`.
    fn ranking(&self) -> &'static [RankingNumber];

    /// The fields of a report's `items` that come from the entry's own output.
    fn prediction_fields(&self) -> &'static [&'static str];

    /// Why the scored outputs are degenerate (the same answer for every record, as
    /// scored), or `None`. `session` is the stored session log, for a stream kind.
    fn degenerate(&self, report: &Value, session: Option<&Value>) -> Option<String>;

    /// Whether [`Kind::degenerate`] reads the session log the run kept.
    fn reads_session(&self) -> bool {
        false
    }

    /// What a folder-interface entry writes for one record: the suffix of its output
    /// file's name.
    fn output_suffix(&self) -> &'static str {
        ".csv"
    }

    /// How scoring works, in one paragraph for the challenge page.
    fn scoring_text(&self) -> &'static str;

    /// One quiz record (or patient, or subject) as the record viewer shows it: the
    /// truth from `data`, the entry's answer from its quiz `outputs`, over the window
    /// `ask` names. An error says what could not be read.
    fn record_view(
        &self,
        data: &Path,
        outputs: &Path,
        name: &str,
        ask: view::Ask,
    ) -> Result<view::RecordView, String>;

    /// A quiz report (as the reader may see it: `visibility::quiz_view`) as a
    /// submission's page shows it. A kind with no tables of its own shows the report's
    /// top-level figures and each item.
    fn quiz_view(&self, report: &Value) -> quiz::QuizView {
        quiz::QuizView::plain(report, Some(self.prediction_fields()), &[])
    }

    /// The entries that ship with the kind (its folder's `entries.rs`): none by default,
    /// for a kind registered from outside.
    fn shipped(&self) -> Shipped {
        Shipped::default()
    }
}

/// The kinds that ship with the judge. One line per kind: the only list of them.
static BUILT_IN: [&dyn Kind; 4] = [
    &cpsc2021::Cpsc2021,
    &cinc2017::Cinc2017,
    &physionet2022::Physionet2022,
    &p300speller::P300Speller,
];

/// The kinds registered at run time ([`register`]), after the built-in ones.
static REGISTERED: RwLock<Vec<&'static dyn Kind>> = RwLock::new(Vec::new());

/// Why a kind cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegisterError {
    /// Another kind (built in or registered) has the id: a definition could not tell
    /// them apart.
    #[error("a challenge kind with the scorer id {0:?} is already known")]
    Taken(&'static str),
    /// Not an id a definition can write.
    #[error("scorer id {0:?} must be 1-64 lowercase letters, digits, '-' or '_'")]
    BadId(&'static str),
}

/// Adds a kind beyond the built-in ones, for the life of the process (a test crate's
/// kind, or an embedding program's): definitions read afterwards may name it by its
/// [`Kind::id`]. Register before reading such a definition; a definition naming an
/// unknown scorer is refused when read.
pub fn register(kind: &'static dyn Kind) -> Result<ScorerId, RegisterError> {
    let id = kind.id();
    let plain = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !plain {
        return Err(RegisterError::BadId(id));
    }
    // A poisoned lock holds a list no writer left half-made (a push either happened or
    // did not): it is read on.
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    if BUILT_IN
        .iter()
        .chain(registered.iter())
        .any(|k| k.id() == id)
    {
        return Err(RegisterError::Taken(id));
    }
    registered.push(kind);
    Ok(ScorerId::of_kind(kind))
}

/// Every known kind: the built-in ones, then those registered, in order.
pub fn all() -> Vec<&'static dyn Kind> {
    let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    BUILT_IN
        .iter()
        .copied()
        .chain(registered.iter().copied())
        .collect()
}

/// The known kind whose scorer id is `id`.
pub fn find(id: &str) -> Option<&'static dyn Kind> {
    all().into_iter().find(|k| k.id() == id)
}

/// The kind a challenge's scorer names (resolved when the definition was read).
pub fn of(scorer: ScorerId) -> &'static dyn Kind {
    scorer.kind()
}

/// The defaulted items of a scorer's report, from (id, defaulted, had an output file):
/// each with why its output was unusable, or `None` when there was none.
fn unusable<'a>(
    items: impl Iterator<Item = (&'a String, bool, bool)>,
    errors: &[score::PredictionError],
) -> Vec<(String, Option<String>)> {
    items
        .filter(|(_, defaulted, _)| *defaulted)
        .map(|(id, _, had_file)| (id.clone(), had_file.then(|| problem(errors, id)).flatten()))
        .collect()
}

/// The error the scorer listed for an item: in its own output file, or naming it.
fn problem(errors: &[score::PredictionError], id: &str) -> Option<String> {
    errors
        .iter()
        .find(|e| {
            Path::new(&e.file)
                .file_stem()
                .is_some_and(|s| s.to_string_lossy() == id)
                || e.reason
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|token| token == id)
        })
        .map(|e| e.to_string())
}

/// A scorer report as JSON (the reports serialise without failing: plain data, and
/// non-finite numbers become `null`).
pub(crate) fn to_json(report: &impl serde::Serialize) -> Value {
    serde_json::to_value(report).unwrap_or(Value::Null)
}

/// A scoring error as the judge reports it: about the data folder.
fn data_error(data: &Path) -> impl Fn(score::ScoreError) -> JudgeError + '_ {
    move |e| JudgeError::data(Some(data), e)
}

/// The one value `key` has in every item of `report` (quotes trimmed), when there are at
/// least two items: one answer for one record says nothing.
fn one_value(report: &Value, key: &str) -> Option<String> {
    let items = report.get("items").and_then(Value::as_array)?;
    if items.len() < 2 {
        return None;
    }
    let field = |item: &Value| item.get(key).map(Value::to_string);
    let first = field(&items[0])?;
    items
        .iter()
        .all(|i| field(i).as_ref() == Some(&first))
        .then(|| first.trim_matches('"').to_owned())
}

/// The number of items in a report.
fn item_count(report: &Value) -> usize {
    report
        .get("items")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_ids_are_distinct_and_found() {
        let ids: Vec<&str> = BUILT_IN.iter().map(|k| k.id()).collect();
        for (i, id) in ids.iter().enumerate() {
            assert!(!ids[..i].contains(id), "{id} twice");
            assert_eq!(find(id).map(|k| k.id()), Some(*id));
            // A built-in id cannot be taken again.
            assert_eq!(register(BUILT_IN[i]).unwrap_err(), RegisterError::Taken(id));
        }
        assert!(find("no-such-kind").is_none());
    }

    /// What the MATLAB layouts stand in for beyond `next.sh` (docs/matlab.md).
    #[test]
    fn two_kinds_have_a_python_main_a_matlab_layout_replaces() {
        let interfaces = [
            Interface::PerRecord,
            Interface::Folder,
            Interface::TrainRun,
            Interface::Stream,
        ];
        let mains: Vec<_> = BUILT_IN
            .iter()
            .flat_map(|k| {
                interfaces
                    .iter()
                    .filter_map(move |&i| k.python_main(i).map(|m| (k.id(), i, m)))
            })
            .collect();
        assert_eq!(
            mains,
            [
                ("cpsc2021", Interface::Folder, "entry_2021.py"),
                ("physionet2022", Interface::TrainRun, "team_code.py"),
            ]
        );
        let streams: Vec<_> = BUILT_IN
            .iter()
            .filter(|k| k.streams())
            .map(|k| k.id())
            .collect();
        assert_eq!(streams, ["itr"]);
    }

    #[test]
    fn an_error_names_a_record_only_as_a_whole_token() {
        let e = [score::PredictionError::new(
            "answers.txt",
            "no answer for data_1_10: scored as ~",
        )];
        assert!(problem(&e, "data_1_1").is_none());
        assert!(problem(&e, "data_1_10").is_some());
    }

    /// Every file under `dir` as (path in it, whether executable, bytes).
    fn files_under(dir: &Path, base: &Path, out: &mut Vec<(String, bool, Vec<u8>)>) {
        use std::os::unix::fs::PermissionsExt;
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files_under(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                let exec = p.metadata().unwrap().permissions().mode() & 0o111 != 0;
                out.push((rel, exec, std::fs::read(&p).unwrap()));
            }
        }
    }

    #[test]
    fn every_built_in_kind_ships_its_whole_example_and_a_trivial_entry() {
        let entries = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../entries");
        for (id, _) in crate::challenge::BUILT_IN {
            let kind = of(Challenge::built_in(id).unwrap().scorer);
            let example = kind.shipped().example.unwrap();
            let dir = entries.join(example.folder);
            let mut on_disk = Vec::new();
            files_under(&dir, &dir, &mut on_disk);
            on_disk.sort();
            let mut compiled: Vec<_> = example
                .files
                .iter()
                .map(|f| (f.path.to_owned(), f.mode & 0o111 != 0, f.bytes.to_vec()))
                .collect();
            compiled.sort();
            assert_eq!(compiled, on_disk, "{id}: the example entry as compiled in");
            assert!(!kind.shipped().trivial.is_empty(), "{id}");
            if let Some(m) = kind.shipped().matlab_example {
                assert!(entries.join(m).is_dir(), "{id}: {m}");
            }
        }
    }
}
