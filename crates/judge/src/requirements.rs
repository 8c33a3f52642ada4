//! Checking what an entry says it needs against the fixed runtime: nothing is installed
//! at judging time (no network in the sandbox), so every need must already be met, and a
//! participant must learn which one is not, and what the runtime has instead.

use runtime::{Lock, normalise};

/// Debian packages of the 2017 era that the runtime covers, as the pip name they mean.
const DEBIAN_PYTHON: [(&str, &str); 6] = [
    ("python3-numpy", "numpy"),
    ("python3-scipy", "scipy"),
    ("python3-sklearn", "scikit-learn"),
    ("python3-wfdb", "wfdb"),
    ("wfdb", "wfdb"),
    ("python3", ""),
];

fn version_key(v: &str) -> Vec<u64> {
    v.split('.')
        .map(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        })
        .collect()
}

fn cmp_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (version_key(a), version_key(b));
    let n = x.len().max(y.len());
    x.resize(n, 0);
    y.resize(n, 0);
    x.cmp(&y)
}

fn available(lock: &Lock) -> String {
    ["numpy", "scipy", "scikit-learn", "wfdb"]
        .iter()
        .filter_map(|n| lock.version_of(n).map(|v| format!("{n} {v}")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Problems with a pip requirements file (`file` names it in messages). Supports
/// `name`, `name[extras]`, and version clauses `==`, `!=`, `>=`, `<=`, `>`, `<`, `~=`
/// joined by commas; environment markers after `;` are ignored.
pub fn check_pip(file: &str, text: &str) -> Vec<String> {
    capped(check_pip_with(&Lock::embedded(), file, text))
}

/// At most this many problems are listed (a huge file must not make a huge result).
const MAX_PROBLEMS: usize = 20;

fn capped(mut problems: Vec<String>) -> Vec<String> {
    if problems.len() > MAX_PROBLEMS {
        let more = problems.len() - MAX_PROBLEMS;
        problems.truncate(MAX_PROBLEMS);
        problems.push(format!("… and {more} more"));
    }
    problems
}

fn check_pip_with(lock: &Lock, file: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{file}: line {}", i + 1);
        let line = raw.split('#').next().unwrap_or("").trim();
        let line = line.split(';').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('-') || line.contains("://") || line.contains(" @ ") {
            problems.push(format!(
                "{at}: {line:?}: options, URLs and local paths cannot be installed (the \
                 runtime is fixed: {})",
                available(lock)
            ));
            continue;
        }
        let name_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
            .unwrap_or(line.len());
        let name = &line[..name_end];
        let mut rest = line[name_end..].trim();
        if rest.starts_with('[') {
            rest = rest.split_once(']').map_or("", |(_, r)| r.trim());
        }
        if name.is_empty() {
            problems.push(format!("{at}: {line:?} is not a requirement"));
            continue;
        }
        let Some(have) = lock.version_of(&normalise(name)) else {
            problems.push(format!(
                "{at}: {name} is not in the runtime (it has {}; nothing else can be installed)",
                available(lock)
            ));
            continue;
        };
        for clause in rest.split(',').map(str::trim).filter(|c| !c.is_empty()) {
            let op_len = clause
                .find(|c: char| !"=!<>~".contains(c))
                .unwrap_or(clause.len());
            let (op, want) = (&clause[..op_len], clause[op_len..].trim());
            use std::cmp::Ordering::*;
            let ord = cmp_versions(have, want);
            let ok = match op {
                "==" | "===" => {
                    if let Some(prefix) = want.strip_suffix(".*") {
                        have == prefix || have.starts_with(&format!("{prefix}."))
                    } else {
                        ord == Equal
                    }
                }
                "!=" => ord != Equal,
                ">=" => ord != Less,
                "<=" => ord != Greater,
                ">" => ord == Greater,
                "<" => ord == Less,
                "~=" => {
                    // ~=X.Y means >=X.Y, ==X.*
                    let mut key = version_key(want);
                    key.pop();
                    let prefix: Vec<String> = key.iter().map(u64::to_string).collect();
                    ord != Less && version_key(have).starts_with(&key) && !prefix.is_empty()
                }
                _ => {
                    problems.push(format!("{at}: {clause:?} is not a version clause"));
                    continue;
                }
            };
            if !ok {
                problems.push(format!(
                    "{at}: {name}{clause} is not met: the runtime has {name} {have}"
                ));
            }
        }
    }
    problems
}

/// Problems with a PhysioNet 2017 `dependencies.txt` (Debian packages, `name` or
/// `name = version` per line, `#` comments): only the Python packages the runtime
/// already has are accepted.
pub fn check_debian(file: &str, text: &str) -> Vec<String> {
    let lock = Lock::embedded();
    let mut problems = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split('=').next().unwrap_or("").trim();
        if !DEBIAN_PYTHON.iter().any(|(d, _)| *d == name) {
            problems.push(format!(
                "{file}: line {}: the Debian package {name:?} cannot be installed (no \
                 packages are installed at judging time; Python has {})",
                i + 1,
                available(&lock)
            ));
        }
    }
    capped(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock::embedded()
    }

    #[test]
    fn pins_and_ranges_against_the_runtime() {
        let l = lock();
        let np = l.version_of("numpy").unwrap().to_string();
        let ok = format!(
            "numpy=={np}\nscipy>=1.0  # comment\nscikit-learn\nwfdb ; python_version>'3'\n\n# x\n"
        );
        assert_eq!(
            check_pip_with(&l, "requirements.txt", &ok),
            Vec::<String>::new()
        );
        let bad = "numpy==1.21.0\ntorch>=2\nscipy<1.0\n--index-url http://x\n";
        let p = check_pip_with(&l, "requirements.txt", bad);
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(p[0].contains("line 1") && p[0].contains(&np), "{}", p[0]);
        assert!(p[1].contains("torch is not in the runtime"), "{}", p[1]);
        assert!(p[2].contains("scipy<1.0"));
        let major = np.split('.').next().unwrap();
        assert!(check_pip_with(&l, "r", &format!("numpy=={major}.*")).is_empty());
        assert!(check_pip_with(&l, "r", &format!("numpy~={major}.0")).is_empty());
        assert_eq!(
            check_pip_with(&l, "r", "scikit_learn[alldeps]>=0.1").len(),
            0
        );
    }

    #[test]
    fn debian_dependencies() {
        assert!(
            check_debian(
                "d",
                "# none\n\npython3-numpy\npython3-sklearn = 0.18-5~pn0\n"
            )
            .is_empty()
        );
        let p = check_debian("d", "octave\n");
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("octave") && p[0].contains("line 1"));
    }
}
