//! Prep's import check: what the entry's Python files import is imported in a sandbox
//! run of the built environment, and each failure becomes a problem with advice the team
//! can follow as written ("tqdm is imported by model.py:3 but not in requirements.txt:
//! add tqdm"; "scikit-learn 1.1.3 was built for numpy<2: add numpy<2").
//!
//! The scan and the imports are [`CHECK_PY`]'s, run by the runtime's Python (its `ast`,
//! its standard-library list); this module reads its lines and words the advice. The
//! sandbox run and the check of the advice by pip are the pipeline's (prep).

use serde::Deserialize;

use super::meaning::pip_name_of_module;
use super::parse::Requirement;

/// The scanner and importer, written into the run as `/imports/check.py`.
pub const CHECK_PY: &str = include_str!("imports.py");

/// One line of the check's output.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Line {
    Unparsed {
        unparsed: String,
        line: u64,
        message: String,
    },
    Tried(Box<Tried>),
    Trying {
        trying: String,
    },
}

#[derive(Debug, Deserialize)]
struct Tried {
    module: String,
    file: String,
    line: u64,
    guarded: bool,
    ok: bool,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    missing: Option<String>,
    #[serde(default)]
    stderr: String,
    #[serde(default)]
    dist: Option<String>,
    #[serde(default)]
    version: Option<String>,
}

/// One import that failed, and what to add to the requirements, if anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    /// A requirement line whose addition is the advice (checked by pip before shown).
    pub add: Option<String>,
}

/// What the check found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// Modules that imported.
    pub ok: Vec<String>,
    pub failures: Vec<Failure>,
    pub warnings: Vec<String>,
}

/// Versions with which a module's name was removed, for "cannot import name" and "has
/// no attribute" failures: `(module, names, the bound that keeps them)`.
const REMOVED: [(&str, &[&str], &str); 5] = [
    ("scipy", &["simps", "trapz", "cumtrapz"], "scipy<1.14"),
    (
        "scipy",
        &[
            "hann", "hanning", "hamming", "blackman", "kaiser", "gaussian",
        ],
        "scipy<1.13",
    ),
    (
        "numpy",
        &[
            "float", "int", "bool", "object", "str", "complex", "long", "unicode",
        ],
        "numpy<1.24",
    ),
    (
        "numpy",
        &[
            "NaN",
            "Inf",
            "NINF",
            "PINF",
            "float_",
            "complex_",
            "string_",
            "unicode_",
            "trapz",
            "in1d",
            "product",
            "cumproduct",
            "alltrue",
            "sometrue",
            "round_",
            "asfarray",
        ],
        "numpy<2",
    ),
    (
        "pandas",
        &["Int64Index", "Float64Index", "UInt64Index"],
        "pandas<2",
    ),
];

/// The marks of an extension built for NumPy 1.x loaded under NumPy 2.
const NUMPY_ABI: [&str; 5] = [
    "numpy.dtype size changed",
    "_ARRAY_API not found",
    "compiled using NumPy 1.x",
    "numpy.core.multiarray failed to import",
    "numpy.core._multiarray_umath failed to import",
];

/// `'name'` quoted in a Python message after `marker`.
fn quoted_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let rest = rest.strip_prefix('\'')?;
    Some(&rest[..rest.find('\'')?])
}

/// A bound from [`REMOVED`] for a failure's message.
fn removal_bound(message: &str) -> Option<&'static str> {
    let (name, module) = if let Some(n) = quoted_after(message, "cannot import name ") {
        (n, quoted_after(message, "from ")?)
    } else {
        let m = quoted_after(message, "module ")?;
        (quoted_after(message, "has no attribute ")?, m)
    };
    let top = module.split('.').next()?;
    REMOVED
        .iter()
        .find(|(m, names, _)| *m == top && names.contains(&name))
        .map(|(_, _, bound)| *bound)
}

/// Reads the check's `stdout` (and whether the run ended well): `wanted` are the
/// requirements the entry declared (by their file, `req_file`).
pub fn findings(
    stdout: &str,
    ended_well: bool,
    wanted: &[Requirement],
    req_file: &str,
) -> Findings {
    let mut f = Findings::default();
    let mut last_trying = None;
    let declared = |name: &str| {
        let n = runtime::normalise(name);
        wanted.iter().any(|r| runtime::normalise(&r.name) == n)
    };
    for l in stdout.lines() {
        // An imported module may print: only the check's own lines are JSON objects.
        let Ok(line) = serde_json::from_str::<Line>(l) else {
            continue;
        };
        match line {
            Line::Unparsed {
                unparsed,
                line,
                message,
            } => f.warnings.push(format!(
                "{unparsed}:{line}: Python cannot parse it ({message}): its imports were not \
                 checked"
            )),
            Line::Trying { trying } => last_trying = Some(trying),
            Line::Tried(t) => {
                last_trying = None;
                if t.ok {
                    f.ok.push(t.module);
                    continue;
                }
                let failure = advise(&t, &declared, req_file);
                if t.guarded {
                    f.warnings.push(format!(
                        "{} (it is imported inside a try that catches ImportError, so the \
                         entry may do without it)",
                        failure.message
                    ));
                } else {
                    f.failures.push(failure);
                }
            }
        }
    }
    if let Some(m) = last_trying {
        f.failures.push(Failure {
            message: format!("importing {m} ended the interpreter (a crash or an exit)"),
            add: None,
        });
    } else if !ended_well && f.failures.is_empty() {
        f.failures.push(Failure {
            message: "the import check did not finish (see prep.log)".into(),
            add: None,
        });
    }
    f
}

fn advise(t: &Tried, declared: &dyn Fn(&str) -> bool, req_file: &str) -> Failure {
    let at = format!("{}:{}", t.file, t.line);
    let m = &t.module;
    let message = t.message.clone().unwrap_or_default();
    let kind = t.kind.as_deref().unwrap_or_default();
    let what = match (&t.dist, &t.version) {
        (Some(d), Some(v)) => format!("{d} {v}"),
        _ => m.clone(),
    };
    let missing = t
        .missing
        .as_deref()
        .filter(|_| kind == "ModuleNotFoundError");
    let missing_top = missing.map(|x| x.split('.').next().unwrap_or(x));
    if missing_top == Some(m.as_str()) {
        if m == "matlab" {
            return Failure {
                message: format!(
                    "matlab is imported by {at}: MATLAB and its engine are not available in \
                     this judge; the entry must do without them"
                ),
                add: None,
            };
        }
        let pip = pip_name_of_module(m);
        if declared(&pip) || declared(m) {
            return Failure {
                message: format!(
                    "{m} is imported by {at} and {pip} is in {req_file}, yet {m} cannot be \
                     imported: {message}"
                ),
                add: None,
            };
        }
        return Failure {
            message: format!(
                "{m} is imported by {at} but not in {req_file} (nor in the runtime): add \
                 {pip} to {req_file}"
            ),
            add: Some(pip),
        };
    }
    if let Some(x) = missing_top {
        let pip = pip_name_of_module(x);
        return Failure {
            message: format!(
                "{what} (imported by {at}) needs {x}, which is not installed: {message}; add \
                 {pip} to {req_file}"
            ),
            add: Some(pip),
        };
    }
    if NUMPY_ABI
        .iter()
        .any(|s| message.contains(s) || t.stderr.contains(s))
    {
        return Failure {
            message: format!(
                "{what} (imported by {at}) was built for numpy<2, and the environment has \
                 numpy 2 ({message}): add numpy<2 to {req_file}"
            ),
            add: Some("numpy<2".into()),
        };
    }
    if let Some(bound) = removal_bound(&message) {
        let package = bound.split('<').next().unwrap_or(bound);
        return Failure {
            message: format!(
                "{what} (imported by {at}) uses what newer {package} releases removed \
                 ({message}): add {bound} to {req_file}"
            ),
            add: Some(bound.to_string()),
        };
    }
    Failure {
        message: format!("{what} is imported by {at} but cannot be imported: {message}"),
        add: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyenv::parse::parse_requirements;

    fn tried(module: &str, extra: &str) -> String {
        format!(
            "{{\"module\": \"{module}\", \"file\": \"model.py\", \"line\": 3, \"guarded\": false, \
             \"ok\": false, \"stderr\": \"\", \"dist\": null, \"version\": null{extra}}}"
        )
    }

    fn run(lines: &[String], reqs: &str) -> Findings {
        let wanted = parse_requirements("requirements.txt", reqs).unwrap();
        findings(&lines.join("\n"), true, &wanted, "requirements.txt")
    }

    #[test]
    fn a_module_not_declared_is_named_with_its_file_and_line() {
        let f = run(
            &[tried(
                "tqdm",
                ", \"type\": \"ModuleNotFoundError\", \"message\": \"ModuleNotFoundError: No module named 'tqdm'\", \"missing\": \"tqdm\"",
            )],
            "numpy\n",
        );
        assert_eq!(
            f.failures,
            [Failure {
                message: "tqdm is imported by model.py:3 but not in requirements.txt (nor in \
                          the runtime): add tqdm to requirements.txt"
                    .into(),
                add: Some("tqdm".into())
            }]
        );
        // An import name is advised as its package.
        let f = run(
            &[tried(
                "sklearn",
                ", \"type\": \"ModuleNotFoundError\", \"message\": \"x\", \"missing\": \"sklearn\"",
            )],
            "",
        );
        assert_eq!(f.failures[0].add.as_deref(), Some("scikit-learn"));
    }

    #[test]
    fn numpy_abi_and_removed_names_get_their_bounds() {
        let abi = tried(
            "sklearn",
            ", \"type\": \"ValueError\", \"message\": \"ValueError: numpy.dtype size changed, may indicate binary incompatibility\"",
        )
        .replace("\"dist\": null, \"version\": null", "\"dist\": \"scikit-learn\", \"version\": \"1.1.3\"");
        let simps = tried(
            "peakutils",
            ", \"type\": \"ImportError\", \"message\": \"ImportError: cannot import name 'simps' from 'scipy.integrate' (/runtime/x.py)\"",
        );
        let f = run(&[abi, simps], "");
        assert!(
            f.failures[0]
                .message
                .starts_with("scikit-learn 1.1.3 (imported by model.py:3) was built for numpy<2"),
            "{:?}",
            f.failures
        );
        assert_eq!(f.failures[0].add.as_deref(), Some("numpy<2"));
        assert_eq!(f.failures[1].add.as_deref(), Some("scipy<1.14"));
        assert_eq!(
            removal_bound("AttributeError: module 'numpy' has no attribute 'float'."),
            Some("numpy<1.24")
        );
    }

    #[test]
    fn guarded_imports_warn_and_crashes_name_the_module() {
        let g = tried(
            "cupy",
            ", \"type\": \"ModuleNotFoundError\", \"message\": \"m\", \"missing\": \"cupy\"",
        )
        .replace("\"guarded\": false", "\"guarded\": true");
        let f = findings(
            &format!("{g}\nnoise printed by a module\n{{\"trying\": \"crashy\"}}\n"),
            false,
            &[],
            "requirements.txt",
        );
        assert_eq!(f.warnings.len(), 1);
        assert!(f.warnings[0].contains("try that catches ImportError"));
        assert_eq!(
            f.failures[0].message,
            "importing crashy ended the interpreter (a crash or an exit)"
        );
    }
}
