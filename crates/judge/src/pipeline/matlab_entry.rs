//! MATLAB-language entries (docs/matlab.md): prep tells the layout from the entry's
//! files, finds the Octave runtime and writes our shims and toolbox; every run of the
//! entry then sees the Octave root as its system and our files at `/matlab`, first on
//! its PATH (see `Evaluator::sandbox_config`). A run that ends on a function Octave
//! lacks fails with [`Reason::UnsupportedMatlab`]. [`has_python`] tells a Python entry
//! from one in another language, for `result.json`'s `language`.

use std::path::PathBuf;

use super::{Evaluator, StageLog, io, mkdir};
use crate::JudgeError;
use crate::challenge::{Interface, ScorerId};
use crate::result::{Reason, RuntimeChoice};

/// What a MATLAB entry's runs are given.
pub(super) struct MatlabRun {
    pub octave: matlab::Octave,
    /// Our files (host side), shown read-only at `/matlab`.
    pub files: PathBuf,
    pub layout: matlab::Layout,
}

/// The Python main file a challenge's interface would need, which a MATLAB layout
/// stands in for (empty: no MATLAB layout for this interface and kind).
pub(super) fn python_main(interface: Interface, scorer: ScorerId) -> &'static str {
    match interface {
        // The sandbox interface's script, whatever the kind: a MATLAB `next.sh` calls
        // `matlab` itself.
        Interface::PerRecord => "next.sh",
        Interface::Folder | Interface::TrainRun | Interface::Stream => crate::kinds::of(scorer)
            .python_main(interface)
            .unwrap_or_default(),
    }
}

impl Evaluator<'_, '_> {
    /// After unpacking: whether the entry is a MATLAB layout, and if so its runtime and
    /// our files (a judge failure when the Octave runtime is not built here).
    pub(super) fn matlab_detect(&mut self, log: &mut StageLog) -> Result<(), JudgeError> {
        let main = python_main(self.c.interface, self.c.scorer);
        let Some(layout) = matlab::Layout::detect(&self.entry, main) else {
            return Ok(());
        };
        let octave = matlab::Octave::find().map_err(|e| JudgeError::Packages {
            message: format!("a MATLAB entry ({}): {e}", layout.name()),
        })?;
        let files = self.work.join("matlab");
        mkdir(&files)?;
        matlab::write_files(&files).map_err(|e| match e {
            matlab::MatlabError::Io { path, source } => io(&path, source),
            other => JudgeError::Internal {
                message: other.to_string(),
            },
        })?;
        let why = format!(
            "a MATLAB entry, {} layout: run by GNU Octave ({})",
            layout.name(),
            octave.describe()
        );
        log.line(&format!("runtime: octave: {why}"));
        self.runtime_choice = Some(RuntimeChoice {
            name: "octave".into(),
            python: String::new(),
            versions: octave.versions().into_iter().collect(),
            why,
        });
        self.matlab = Some(MatlabRun {
            octave,
            files,
            layout,
        });
        Ok(())
    }

    /// A required file as this entry's layout names it: the MATLAB layout's main file
    /// stands for the Python one.
    pub(super) fn required_name(&self, f: &str) -> String {
        match &self.matlab {
            Some(m) if f == python_main(self.c.interface, self.c.scorer) => {
                m.layout.main_file().to_string()
            }
            _ => f.to_string(),
        }
    }
}

/// How a MATLAB entry's run ended, when the runner reported a function Octave lacks
/// (callers ask only for MATLAB entries: a Python entry printing the same line is not
/// one).
pub(super) fn unsupported(run: &sandbox::Run) -> Option<Reason> {
    if run.result.verdict == sandbox::Verdict::Ok {
        return None;
    }
    let u = matlab::Unsupported::from_stderr(&run.stderr, "/entry")?;
    Some(Reason::UnsupportedMatlab {
        function: u.function,
        file: u.file,
        line: u.line,
        instead: u.instead,
    })
}

/// Whether the unpacked entry holds a Python file (`.py`), at any depth: its language
/// is then Python. A list, not recursion; the tree's size is bounded by the unpack caps.
pub(super) fn has_python(entry: &std::path::Path) -> bool {
    let mut todo = vec![entry.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(list) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in list.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            let path = e.path();
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|x| x == "py") {
                return true;
            }
        }
    }
    false
}
