//! MATLAB-language entries on GNU Octave (docs/matlab.md).
//!
//! - [`Octave`]: the runtime, a Debian bookworm root file system with `octave`,
//!   `octave-signal` and `octave-statistics` (built by Debian's `mmdebstrap`, its
//!   packages recorded in `runtime/octave/debian.lock`), shown read-only as the whole
//!   system of a sandbox run, as the era runtimes are (docs/runtimes.md).
//! - [`write_files`]: our own files, shown read-only at [`MOUNT_POINT`]: the `matlab`
//!   and `mcc` shims (`bin/`), and the MATLAB-language toolbox on Octave's path
//!   (`toolbox/`: `rdsamp`, `rdann`, `wrann`, `rdheader`, the runner, the layouts'
//!   drivers). They
//!   are part of the judge, not of the runtime, so changing them never rebuilds it.
//! - [`Layout`]: which MATLAB entry layout a folder is.
//! - [`Unsupported`]: a function Octave lacks, as the runner reports it.
//!
//! Not here: the stages (the judge's pipeline drives these layouts).

use std::path::{Path, PathBuf};
use std::process::Command;

mod octave;
pub use octave::{Octave, PACKAGES, setup};

/// Where the sandbox shows our files.
pub const MOUNT_POINT: &str = "/matlab";

/// One of our files, read into the binary.
macro_rules! ours {
    ($path:literal, $mode:expr) => {
        ($path, include_str!(concat!("../", $path)), $mode)
    };
}

/// Our files, by path under [`MOUNT_POINT`], with their mode (the test
/// `every_toolbox_file_is_shipped` checks none is left out).
pub const FILES: &[(&str, &str, u32)] = &[
    ours!("bin/matlab", 0o755),
    ours!("bin/mcc", 0o755),
    ours!("bin/pj-octave", 0o755),
    ours!("toolbox/@ClassificationKNN/ClassificationKNN.m", 0o644),
    ours!("toolbox/@ClassificationKNN/disp.m", 0o644),
    ours!("toolbox/@ClassificationKNN/predict.m", 0o644),
    ours!("toolbox/@ClassificationKNN/subsref.m", 0o644),
    ours!("toolbox/@categorical/categorical.m", 0o644),
    ours!("toolbox/@categorical/categories.m", 0o644),
    ours!("toolbox/@categorical/cellstr.m", 0o644),
    ours!("toolbox/@categorical/char.m", 0o644),
    ours!("toolbox/@categorical/disp.m", 0o644),
    ours!("toolbox/@categorical/display.m", 0o644),
    ours!("toolbox/@categorical/double.m", 0o644),
    ours!("toolbox/@categorical/end.m", 0o644),
    ours!("toolbox/@categorical/eq.m", 0o644),
    ours!("toolbox/@categorical/isempty.m", 0o644),
    ours!("toolbox/@categorical/length.m", 0o644),
    ours!("toolbox/@categorical/ne.m", 0o644),
    ours!("toolbox/@categorical/numel.m", 0o644),
    ours!("toolbox/@categorical/size.m", 0o644),
    ours!("toolbox/@categorical/subsasgn.m", 0o644),
    ours!("toolbox/@categorical/subsref.m", 0o644),
    ours!("toolbox/fitcknn.m", 0o644),
    ours!("toolbox/importdata.m", 0o644),
    ours!("toolbox/iscategorical.m", 0o644),
    ours!("toolbox/physiojudge_cpsc2021.m", 0o644),
    ours!("toolbox/physiojudge_report.m", 0o644),
    ours!("toolbox/physiojudge_run.m", 0o644),
    ours!("toolbox/rdann.m", 0o644),
    ours!("toolbox/rdheader.m", 0o644),
    ours!("toolbox/rdsamp.m", 0o644),
    ours!("toolbox/shadow/save.m", 0o644),
    ours!("toolbox/string.m", 0o644),
    ours!("toolbox/wrann.m", 0o644),
];

#[derive(Debug, thiserror::Error)]
pub enum MatlabError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{step} failed:\n{output}")]
    Step { step: String, output: String },
    #[error(
        "no Octave runtime in {dir}: {why} (build it with `physiojudge runtime setup --octave`)"
    )]
    NotSetUp { dir: PathBuf, why: String },
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MatlabError + '_ {
    move |source| MatlabError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes [`FILES`] into `dir` (created), readable by the sandbox's uid.
pub fn write_files(dir: &Path) -> Result<(), MatlabError> {
    use std::os::unix::fs::PermissionsExt;
    for (rel, text, mode) in FILES {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
            std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755))
                .map_err(io(parent))?;
        }
        std::fs::write(&path, text).map_err(io(&path))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode))
            .map_err(io(&path))?;
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).map_err(io(dir))?;
    Ok(())
}

/// The read-only bind of our files (written by [`write_files`] in `dir`).
pub fn bind(dir: &Path) -> sandbox::Bind {
    sandbox::Bind {
        src: dir.to_path_buf(),
        dst: PathBuf::from(MOUNT_POINT),
        writable: false,
    }
}

/// The sandbox's PATH for a MATLAB entry: our `matlab` and `mcc` first, then the
/// runtime's system (where `octave-cli` is).
pub fn sandbox_path() -> String {
    format!("{MOUNT_POINT}/bin:/usr/local/bin:/usr/bin:/bin")
}

/// The argv that calls a function of ours or the entry's with character-vector
/// arguments, through the runner.
pub fn call_argv(function: &str, args: &[&str]) -> Vec<String> {
    let mut argv = vec![
        format!("{MOUNT_POINT}/bin/pj-octave"),
        "call".to_string(),
        function.to_string(),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    argv
}

/// The MATLAB entry layouts (docs/matlab.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// CPSC 2021: `Result.m` (and the `challenge.m` it calls); the judge calls
    /// `Result(records_file, data_path, out_path)` and reads `<record>.mat`.
    Cpsc2021,
    /// The PhysioNet 2017 sandbox: `setup.sh` and `next.sh`, which calls `matlab`, per
    /// record, appending to `answers.txt`.
    Sandbox2017,
    /// PhysioNet 2022: the organisers' `train_model.m` and `run_model.m` calling the
    /// team's code; the judge calls `train_model(data, model)` then
    /// `run_model(model, data, outputs)`, one `<patient>.csv` each.
    PhysioNet2022,
}

impl Layout {
    /// The layout of an entry folder, for a challenge whose Python layout would need
    /// `python_main` (`entry_2021.py`, `next.sh`): `None` when it is a Python entry.
    /// An entry with both a Python main file and MATLAB files is a Python entry, the
    /// challenge's own layout.
    pub fn detect(entry: &Path, python_main: &str) -> Option<Layout> {
        let file = |n: &str| entry.join(n).is_file();
        match python_main {
            "entry_2021.py" if !file("entry_2021.py") && file("Result.m") => Some(Layout::Cpsc2021),
            "next.sh" if file("next.sh") => {
                let text = std::fs::read(entry.join("next.sh")).ok()?;
                let text = String::from_utf8_lossy(&text);
                // A command word `matlab`, not a mention in a comment or a path.
                let calls = text.lines().any(|l| {
                    let l = l.split('#').next().unwrap_or("");
                    l.split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '('))
                        .any(|w| w == "matlab" || w.ends_with("/matlab"))
                });
                calls.then_some(Layout::Sandbox2017)
            }
            "team_code.py"
                if !file("team_code.py") && file("train_model.m") && file("run_model.m") =>
            {
                Some(Layout::PhysioNet2022)
            }
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Layout::Cpsc2021 => "CPSC 2021 MATLAB (Result.m)",
            Layout::Sandbox2017 => "PhysioNet 2017 sandbox (next.sh calling matlab)",
            Layout::PhysioNet2022 => "PhysioNet 2022 MATLAB (train_model.m, run_model.m)",
        }
    }

    /// The file that stands for the challenge's Python main file among its required
    /// files.
    pub fn main_file(self) -> &'static str {
        match self {
            Layout::Cpsc2021 => "Result.m",
            Layout::Sandbox2017 => "next.sh",
            Layout::PhysioNet2022 => "train_model.m",
        }
    }
}

/// A function the entry calls that Octave lacks, as the runner reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    pub function: String,
    /// The entry's file, relative to its folder where it is inside it.
    pub file: String,
    pub line: u32,
    /// What Octave has instead, or why nothing.
    pub instead: String,
}

impl Unsupported {
    /// Reads the runner's report (`physiojudge: unsupported_matlab function=… file=…
    /// line=…` and the `physiojudge: instead: …` line after it) from a run's stderr. The
    /// last report counts: the one that ended the run.
    pub fn from_stderr(stderr: &[u8], entry_mount: &str) -> Option<Unsupported> {
        let text = String::from_utf8_lossy(stderr);
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .rposition(|l| l.starts_with("physiojudge: unsupported_matlab "))?;
        let rest = &lines[at]["physiojudge: unsupported_matlab ".len()..];
        // file= may hold spaces: it runs to " line=".
        let function = rest
            .strip_prefix("function=")?
            .split(' ')
            .next()?
            .to_string();
        let file_start = rest.find(" file=")? + " file=".len();
        let line_at = rest.rfind(" line=")?;
        let file = rest.get(file_start..line_at)?.trim();
        let line: u32 = rest[line_at + " line=".len()..].trim().parse().ok()?;
        let prefix = format!("{}/", entry_mount.trim_end_matches('/'));
        let file = file.strip_prefix(&prefix).unwrap_or(file).to_string();
        let instead = lines
            .get(at + 1)
            .and_then(|l| l.strip_prefix("physiojudge: instead: "))
            .unwrap_or("")
            .to_string();
        Some(Unsupported {
            function,
            file,
            line,
            instead,
        })
    }
}

/// Runs a command, turning a failure into an error that shows the end of its output.
pub(crate) fn run(step: &str, cmd: &mut Command) -> Result<String, MatlabError> {
    let out = cmd.output().map_err(|e| MatlabError::Step {
        step: step.to_string(),
        output: e.to_string(),
    })?;
    if !out.status.success() {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        let lines: Vec<&str> = output.lines().collect();
        return Err(MatlabError::Step {
            step: format!("{step} ({})", out.status),
            output: lines[lines.len().saturating_sub(40)..].join("\n"),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_told_from_the_files() {
        let d = tempfile::tempdir().unwrap();
        let e = d.path();
        assert_eq!(Layout::detect(e, "entry_2021.py"), None);
        std::fs::write(e.join("Result.m"), "function r = Result(a, b, c)\nend\n").unwrap();
        assert_eq!(Layout::detect(e, "entry_2021.py"), Some(Layout::Cpsc2021));
        // A Python main file wins: the challenge's own layout.
        std::fs::write(e.join("entry_2021.py"), "print(1)\n").unwrap();
        assert_eq!(Layout::detect(e, "entry_2021.py"), None);
        std::fs::write(e.join("next.sh"), "# not matlab here\npython3 a.py $1\n").unwrap();
        assert_eq!(Layout::detect(e, "next.sh"), None);
        std::fs::write(
            e.join("next.sh"),
            "#!/bin/bash\nmatlab -nodisplay -r \"challenge('$1')\"\n",
        )
        .unwrap();
        assert_eq!(Layout::detect(e, "next.sh"), Some(Layout::Sandbox2017));
        std::fs::write(e.join("next.sh"), "/usr/local/bin/matlab -batch x\n").unwrap();
        assert_eq!(Layout::detect(e, "next.sh"), Some(Layout::Sandbox2017));
        assert_eq!(Layout::detect(e, "team_code.py"), None);
        std::fs::write(e.join("train_model.m"), "function train_model(a, b)\nend\n").unwrap();
        assert_eq!(Layout::detect(e, "team_code.py"), None);
        std::fs::write(e.join("run_model.m"), "function run_model(a, b, c)\nend\n").unwrap();
        assert_eq!(
            Layout::detect(e, "team_code.py"),
            Some(Layout::PhysioNet2022)
        );
    }

    #[test]
    fn the_runners_report_is_read_back() {
        let err = b"error: 'TreeBagger' undefined\n    train_model at line 40 column 5 \
                    (/entry/my code/train_model.m)\nphysiojudge: unsupported_matlab \
                    function=TreeBagger file=/entry/my code/train_model.m line=40\n\
                    physiojudge: instead: svmtrain\n";
        let u = Unsupported::from_stderr(err, "/entry").unwrap();
        assert_eq!(
            u,
            Unsupported {
                function: "TreeBagger".into(),
                file: "my code/train_model.m".into(),
                line: 40,
                instead: "svmtrain".into(),
            }
        );
        assert_eq!(Unsupported::from_stderr(b"error: x\n", "/entry"), None);
        assert_eq!(
            Unsupported::from_stderr(
                b"physiojudge: unsupported_matlab function=f file= line=zz\n",
                "/entry"
            ),
            None
        );
    }

    #[test]
    fn every_toolbox_file_is_shipped() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut todo = vec![root.join("toolbox"), root.join("bin")];
        let mut found = Vec::new();
        while let Some(dir) = todo.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    todo.push(p);
                } else {
                    found.push(p.strip_prefix(root).unwrap().display().to_string());
                }
            }
        }
        found.sort();
        let mut shipped: Vec<String> = FILES.iter().map(|(p, _, _)| p.to_string()).collect();
        shipped.sort();
        assert_eq!(found, shipped);
    }

    #[test]
    fn files_are_written_with_their_modes() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        write_files(d.path()).unwrap();
        let mode = |p: &str| {
            std::fs::metadata(d.path().join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("bin/matlab"), 0o755);
        assert_eq!(mode("toolbox/rdsamp.m"), 0o644);
        assert_eq!(
            call_argv("f", &["a"]),
            ["/matlab/bin/pj-octave", "call", "f", "a"]
        );
    }
}
