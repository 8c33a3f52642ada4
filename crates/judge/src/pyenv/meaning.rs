//! Requirement lines read as the people who wrote them meant them: a module's import
//! name written for its package (`sklearn`), a retired package name (`tensorflow-gpu`),
//! a standard-library module (`json`) or a system package (`python-dev`,
//! `build-essential`) in a pip file. Each is turned into what was meant or ignored, and
//! always said as a warning with the file and line, so the team learns what the judge
//! did. docs/judge.md, "How requirement lines are read", lists the tables below.
//!
//! Not here: the syntax of a line ([`super::parse`]), Python version lines (the runtime's
//! choice), or whether a package exists (the index).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use super::parse::Requirement;

/// Names written in requirement files for a package of another name: `(written, pip
/// package, why)`. Compared as the index compares names.
pub const ALIASES: [(&str, &str, &str); 14] = [
    (
        "sklearn",
        "scikit-learn",
        "sklearn is scikit-learn's import name",
    ),
    (
        "tensorflow-gpu",
        "tensorflow",
        "tensorflow-gpu was retired: tensorflow is the same package (the judge runs on CPUs)",
    ),
    (
        "tensorflow-cpu",
        "tensorflow",
        "tensorflow is the same package",
    ),
    ("PIL", "pillow", "PIL is Pillow's import name"),
    (
        "cv2",
        "opencv-python-headless",
        "cv2 is OpenCV's import name (the headless build: no display in the sandbox)",
    ),
    (
        "opencv-python",
        "opencv-python-headless",
        "the same OpenCV without the GUI libraries a sandbox does not have",
    ),
    (
        "opencv-contrib-python",
        "opencv-contrib-python-headless",
        "the same OpenCV without the GUI libraries a sandbox does not have",
    ),
    (
        "skimage",
        "scikit-image",
        "skimage is scikit-image's import name",
    ),
    ("yaml", "PyYAML", "yaml is PyYAML's import name"),
    ("pywt", "PyWavelets", "pywt is PyWavelets' import name"),
    ("Bio", "biopython", "Bio is Biopython's import name"),
    (
        "dateutil",
        "python-dateutil",
        "dateutil is python-dateutil's import name",
    ),
    ("serial", "pyserial", "serial is pyserial's import name"),
    ("keras-gpu", "keras", "keras is the same package"),
];

/// Names in a pip file that are system packages or tools, not Python packages: ignored
/// (the runtime has Python's headers and no compiler is used: the judge installs wheels).
pub const NOT_PIP: [&str; 14] = [
    "python-dev",
    "python3-dev",
    "python-devel",
    "python3-devel",
    "python3-pip",
    "python-pip",
    "python3-venv",
    "build-essential",
    "gcc",
    "g++",
    "libatlas-base-dev",
    "libatlas3-base",
    "libprotobuf10",
    "libopenblas-dev",
];

/// The pip package that provides an import name, for advice ("add scikit-learn"): the
/// alias table's, else the name itself.
pub fn pip_name_of_module(module: &str) -> String {
    ALIASES
        .iter()
        .find(|(w, _, _)| *w == module)
        .map_or(module, |(_, pip, _)| pip)
        .to_string()
}

/// The standard library's top-level module names of the interpreter at `python` (its
/// `sys.stdlib_module_names`, CPython ≥ 3.10; older interpreters get the list of the
/// standard library's folder). Run on the host: the interpreter is the runtime's own,
/// and it reads no file of the entry's.
pub fn stdlib_names(python: &Path) -> Result<BTreeSet<String>, String> {
    const CODE: &str = "import sys, os, sysconfig\n\
        names = getattr(sys, 'stdlib_module_names', None)\n\
        if names is None:\n\
        \x20   d = sysconfig.get_paths()['stdlib']\n\
        \x20   names = set(sys.builtin_module_names) | {n.split('.')[0] for n in os.listdir(d)}\n\
        \x20   dy = os.path.join(d, 'lib-dynload')\n\
        \x20   names |= {n.split('.')[0] for n in os.listdir(dy)} if os.path.isdir(dy) else set()\n\
        print('\\n'.join(sorted(names)))\n";
    let out = Command::new(python)
        .args(["-I", "-c", CODE])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} could not list its standard library: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect())
}

/// What reading a file's requirements as meant gave: the requirements to resolve, and a
/// warning for each line read otherwise than written.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reading {
    pub kept: Vec<Requirement>,
    pub warnings: Vec<String>,
}

/// Reads `reqs` (of `file`) as meant; `stdlib` are the runtime's standard-library names,
/// `python` its version for messages (e.g. "CPython 3.11").
pub fn read_as_meant(
    file: &str,
    reqs: Vec<Requirement>,
    stdlib: &BTreeSet<String>,
    python: &str,
) -> Reading {
    let mut out = Reading::default();
    let std_norm: BTreeSet<String> = stdlib.iter().map(|s| runtime::normalise(s)).collect();
    for mut r in reqs {
        let n = runtime::normalise(&r.name);
        let at = format!("{file}: line {}", r.line);
        if NOT_PIP.iter().any(|s| runtime::normalise(s) == n) {
            out.warnings.push(format!(
                "{at}: {} is a system package, not a Python package: ignored (the judge \
                 installs wheels, so no compiler or headers are needed)",
                r.name
            ));
            continue;
        }
        // Some standard-library names are also backports on the index (`dataclasses`,
        // `typing`): the runtime's own module is the one Python imports either way.
        if std_norm.contains(&n) {
            out.warnings.push(format!(
                "{at}: {} is part of Python's standard library ({python}): ignored",
                r.name
            ));
            continue;
        }
        if let Some((_, pip, why)) = ALIASES.iter().find(|(w, _, _)| runtime::normalise(w) == n) {
            let was = r.pip_line();
            // The placeholder packages on the index under import names (`sklearn`
            // 0.0.postN) have versions that mean nothing for the real package.
            if r.clauses.iter().any(|c| c.contains("0.0")) {
                r.clauses.clear();
            }
            r.name = pip.to_string();
            out.warnings
                .push(format!("{at}: {was} is read as {} ({why})", r.pip_line()));
        }
        match out
            .kept
            .iter_mut()
            .find(|k| runtime::normalise(&k.name) == runtime::normalise(&r.name))
        {
            // `sklearn` and `scikit-learn` both written: one requirement, both clauses.
            Some(k) if r.marker.is_none() && k.marker.is_none() => {
                for c in r.clauses {
                    if !k.clauses.contains(&c) {
                        k.clauses.push(c);
                    }
                }
            }
            _ => out.kept.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyenv::parse::parse_requirements;

    fn read(text: &str) -> Reading {
        let stdlib: BTreeSet<String> = ["json", "os", "typing", "dataclasses"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let reqs = parse_requirements("requirements.txt", text).unwrap();
        read_as_meant("requirements.txt", reqs, &stdlib, "CPython 3.11")
    }

    #[test]
    fn standard_library_names_are_ignored_with_their_line() {
        let r = read("numpy\njson\nTyping>=3.7\n");
        assert_eq!(r.kept.len(), 1);
        assert_eq!(
            r.warnings,
            [
                "requirements.txt: line 2: json is part of Python's standard library \
                 (CPython 3.11): ignored",
                "requirements.txt: line 3: Typing is part of Python's standard library \
                 (CPython 3.11): ignored"
            ]
        );
    }

    #[test]
    fn import_names_and_retired_names_become_their_packages() {
        let r = read("sklearn==0.24.1\ntensorflow_gpu==2.4.0\nPIL\nsklearn==0.0.post1\n");
        let lines: Vec<String> = r.kept.iter().map(|k| k.pip_line()).collect();
        assert_eq!(
            lines,
            ["scikit-learn==0.24.1", "tensorflow==2.4.0", "pillow"]
        );
        assert!(
            r.warnings[0].starts_with(
                "requirements.txt: line 1: sklearn==0.24.1 is read as scikit-learn==0.24.1"
            ),
            "{:?}",
            r.warnings
        );
        assert!(r.warnings[1].contains("tensorflow-gpu was retired"));
        // The placeholder's version is dropped, and the two lines are one requirement.
        assert!(
            r.warnings[3].contains("is read as scikit-learn ("),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn system_packages_are_ignored() {
        let r = read("python-dev\nbuild-essential\nscipy\n");
        assert_eq!(r.kept.len(), 1);
        assert!(r.warnings[0].starts_with(
            "requirements.txt: line 1: python-dev is a system package, not a Python package: ignored"
        ));
        assert!(r.warnings[1].contains("line 2: build-essential"));
    }

    #[test]
    fn advice_names_the_package_of_an_import_name() {
        assert_eq!(pip_name_of_module("sklearn"), "scikit-learn");
        assert_eq!(pip_name_of_module("tqdm"), "tqdm");
    }
}
