//! Which Python runtime an entry runs on: the organiser's `[runtime]` list, then the
//! entry's own word (`runtime.txt`, `.python-version`, a `python==X.Y` requirement line,
//! `python_requires`/`requires-python`, a Dockerfile's `FROM python:X.Y…`), then the
//! first allowed runtime whose Python has wheels for every pin (docs/runtimes.md).
//!
//! This module reads what the entry says and orders the candidates; asking the index
//! about wheels and opening the runtimes is prep's part (`pipeline::prep`).
//!
//! Not here: building runtimes (the `runtime` crate).

use std::path::Path;

use crate::pyenv::Requirement;

/// A runtime by name as the organiser and the logs call it, with its CPython.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offered {
    pub name: &'static str,
    /// Major, minor, patch (the release's own CPython build).
    pub python: (u32, u32, u32),
    pub release: Option<runtime::Release>,
}

impl Offered {
    pub fn by_name(name: &str) -> Option<Offered> {
        if name == "default" {
            let (a, b) = runtime::PYTHON_VERSION;
            return Some(Offered {
                name: "default",
                python: (a, b, 2),
                release: None,
            });
        }
        let r = runtime::Release::from_name(name)?;
        let (a, b) = r.python();
        let patch = match r {
            runtime::Release::Bullseye => 2,
            runtime::Release::Bookworm => 2,
            runtime::Release::Trixie => 5,
        };
        Some(Offered {
            name: r.name(),
            python: (a, b, patch),
            release: Some(r),
        })
    }

    pub fn minor(&self) -> (u32, u32) {
        (self.python.0, self.python.1)
    }

    /// `bullseye (CPython 3.9)`.
    pub fn describe(&self) -> String {
        format!(
            "{} (CPython {}.{})",
            self.name, self.python.0, self.python.1
        )
    }
}

/// How firmly the entry asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strength {
    /// One Python version, to be had or refused: `runtime.txt`, `.python-version`, a
    /// `python==X.Y` requirement line.
    Exact((u32, u32)),
    /// A runtime by its release name in `runtime.txt` (`bullseye`).
    Named(&'static str),
    /// Version clauses every candidate must meet: `python_requires`, `python>=X`.
    Range(Vec<String>),
    /// A preference, followed where a runtime has that Python: a Dockerfile's base image.
    Hint((u32, u32)),
}

/// One thing the entry said about its Python, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// `runtime.txt line 1`, `requirements.txt line 3`, …
    pub source: String,
    pub strength: Strength,
}

/// What the entry said, read from its folder and its parsed requirement lines named
/// `python` (which are runtime requests, never pip packages). A file that says nothing
/// readable is a problem for the team, with its line.
pub fn read_words(
    entry: &Path,
    python_lines: &[(String, &Requirement)],
) -> (Vec<Word>, Vec<String>) {
    let mut words = Vec::new();
    let mut problems = Vec::new();
    let read = |name: &str| -> Option<String> {
        let p = entry.join(name);
        let meta = std::fs::symlink_metadata(&p).ok()?;
        if !meta.is_file() || meta.len() > 1 << 20 {
            return None;
        }
        std::fs::read(&p)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    for name in ["runtime.txt", ".python-version"] {
        let Some(text) = read(name) else { continue };
        let Some((i, line)) = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i, l.trim()))
            .find(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        else {
            continue;
        };
        let source = format!("{name} line {}", i + 1);
        if let Some(r) = runtime::Release::from_name(line).filter(|r| r.name() == line) {
            words.push(Word {
                source,
                strength: Strength::Named(r.name()),
            });
            continue;
        }
        let v = line
            .trim_start_matches("python")
            .trim_start_matches(['-', ' ', '='])
            .trim();
        match major_minor(v) {
            Some(mm) => words.push(Word {
                source,
                strength: Strength::Exact(mm),
            }),
            None => problems.push(format!(
                "{source}: {line:?} is not a Python version (write e.g. 3.9 or python-3.9.7) \
                 nor a runtime's name (bullseye, bookworm, trixie)"
            )),
        }
    }
    for (file, r) in python_lines {
        let source = format!("{file} line {}", r.line);
        let exact = r.clauses.iter().find_map(|c| {
            c.strip_prefix("===")
                .or_else(|| c.strip_prefix("=="))
                .map(|v| v.trim_end_matches(".*"))
        });
        match (exact.and_then(major_minor), r.clauses.is_empty()) {
            (Some(mm), _) if r.clauses.len() == 1 => words.push(Word {
                source,
                strength: Strength::Exact(mm),
            }),
            (_, false) => words.push(Word {
                source,
                strength: Strength::Range(r.clauses.clone()),
            }),
            (_, true) => {}
        }
    }
    for (name, key) in [
        ("setup.py", "python_requires"),
        ("setup.cfg", "python_requires"),
        ("pyproject.toml", "requires-python"),
    ] {
        let Some(text) = read(name) else { continue };
        for (i, line) in text.lines().enumerate() {
            let Some(at) = line.find(key) else { continue };
            let rest = line[at + key.len()..].trim_start();
            let Some(rest) = rest.strip_prefix('=') else {
                continue;
            };
            let value = rest.trim().trim_end_matches(',').trim();
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            let clauses: Vec<String> = value
                .split(',')
                .map(|c| c.replace(' ', ""))
                .filter(|c| !c.is_empty())
                .collect();
            if !clauses.is_empty() && clauses.iter().all(|c| parse_clause(c).is_some()) {
                words.push(Word {
                    source: format!("{name} line {}", i + 1),
                    strength: Strength::Range(clauses),
                });
            }
            break;
        }
    }
    if let Some(text) = read("Dockerfile") {
        for (i, line) in text.lines().enumerate() {
            let words_of: Vec<&str> = line.split_whitespace().collect();
            if !words_of
                .first()
                .is_some_and(|w| w.eq_ignore_ascii_case("FROM"))
            {
                continue;
            }
            let image = words_of
                .iter()
                .skip(1)
                .find(|w| !w.starts_with("--"))
                .copied()
                .unwrap_or_default();
            let image = image
                .trim_start_matches("docker.io/")
                .trim_start_matches("library/");
            if let Some(tag) = image.strip_prefix("python:")
                && let Some(mm) = major_minor(tag.split('-').next().unwrap_or_default())
            {
                words.push(Word {
                    source: format!("Dockerfile line {} ({image})", i + 1),
                    strength: Strength::Hint(mm),
                });
            }
            break;
        }
    }
    (words, problems)
}

/// `3.9`, `3.9.7`, `3.9.*` → (3, 9).
fn major_minor(v: &str) -> Option<(u32, u32)> {
    let mut parts = v.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// A version clause: its operator and its release numbers (`*` as `None`, a final
/// wildcard).
fn parse_clause(c: &str) -> Option<(&str, Vec<u32>, bool)> {
    let op_len = c
        .bytes()
        .take_while(|b| matches!(b, b'=' | b'!' | b'<' | b'>' | b'~'))
        .count();
    let (op, v) = c.split_at(op_len);
    if !matches!(op, "==" | "===" | "!=" | ">=" | "<=" | ">" | "<" | "~=") {
        return None;
    }
    let wild = v.ends_with(".*");
    let v = v.trim_end_matches(".*");
    let nums: Option<Vec<u32>> = v.split('.').map(|p| p.parse().ok()).collect();
    let nums = nums.filter(|n| !n.is_empty())?;
    Some((op, nums, wild))
}

/// Whether CPython `version` meets every clause (PEP 440 for plain release numbers).
pub fn meets(version: (u32, u32, u32), clauses: &[String]) -> bool {
    let have = [version.0, version.1, version.2];
    clauses.iter().all(|c| {
        let Some((op, want, wild)) = parse_clause(c) else {
            return false;
        };
        let pad = |v: &[u32]| {
            let mut v = v.to_vec();
            v.resize(3.max(v.len()), 0);
            v
        };
        let (h, w) = (pad(&have), pad(&want));
        let prefix = have.iter().zip(&want).all(|(a, b)| a == b);
        match op {
            "==" | "===" if wild => prefix,
            "!=" if wild => !prefix,
            "==" | "===" => h == w,
            "!=" => h != w,
            ">=" => h >= w,
            "<=" => h <= w,
            ">" => h > w,
            "<" => h < w,
            // ~=X.Y means >=X.Y, ==X.*; ~=X.Y.Z means >=X.Y.Z, ==X.Y.*.
            _ => {
                want.len() >= 2
                    && h >= w
                    && have
                        .iter()
                        .zip(&want[..want.len() - 1])
                        .all(|(a, b)| a == b)
            }
        }
    })
}

/// The runtimes an entry may be given, in the order they are tried, and why: the
/// organiser's list narrowed by the entry's word. `Err`: the entry asked for a Python
/// no allowed runtime has (the message for the team).
pub fn candidates(
    allowed: &[String],
    words: &[Word],
) -> Result<(Vec<Offered>, Vec<String>), String> {
    let offered: Vec<Offered> = allowed.iter().filter_map(|n| Offered::by_name(n)).collect();
    let list = || {
        offered
            .iter()
            .map(Offered::describe)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut notes = Vec::new();
    let mut keep = offered.clone();
    for w in words {
        let before = keep.clone();
        let wanted = match &w.strength {
            Strength::Exact(mm) | Strength::Hint(mm) => format!("CPython {}.{}", mm.0, mm.1),
            Strength::Named(n) => format!("the {n} runtime"),
            Strength::Range(c) => format!("CPython {}", c.join(",")),
        };
        let fits = |o: &Offered| match &w.strength {
            Strength::Exact(mm) | Strength::Hint(mm) => o.minor() == *mm,
            Strength::Named(n) => o.name == *n,
            Strength::Range(c) => meets(o.python, c),
        };
        keep.retain(|o| fits(o));
        if !keep.is_empty() {
            notes.push(format!("{} asks for {wanted}", w.source));
            continue;
        }
        if let Strength::Hint(_) = w.strength {
            notes.push(format!(
                "{} asks for {wanted}, which no runtime offered here has; the runtime is \
                 chosen by the pins instead",
                w.source
            ));
            keep = before;
            continue;
        }
        return Err(format!(
            "{} asks for {wanted}, which no runtime of this challenge has; the runtimes \
             offered are {}. (CPython 3.10, and 3.8 or older, are in no Debian release the \
             judge can reach: bullseye has 3.9, bookworm 3.11, trixie 3.13.)",
            w.source,
            list()
        ));
    }
    Ok((keep, notes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(line: usize, clauses: &[&str]) -> Requirement {
        Requirement {
            line,
            name: "python".into(),
            extras: Vec::new(),
            clauses: clauses.iter().map(|c| c.to_string()).collect(),
            marker: None,
        }
    }

    fn all() -> Vec<String> {
        crate::challenge::RuntimeDef::default().allowed
    }

    #[test]
    fn version_clauses_are_met_as_pep_440_says() {
        let py39 = (3, 9, 2);
        let s = |v: &[&str]| v.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        assert!(meets(py39, &s(&[">=3.6"])));
        assert!(meets(py39, &s(&[">=3.6", "<3.10"])));
        assert!(!meets((3, 11, 2), &s(&[">=3.6", "<3.10"])));
        assert!(meets(py39, &s(&["==3.9.*"])));
        assert!(!meets(py39, &s(&["!=3.9.*"])));
        assert!(meets(py39, &s(&["~=3.7"])));
        assert!(!meets(py39, &s(&["~=3.7.1"])));
        assert!(!meets(py39, &s(&["nonsense"])));
    }

    #[test]
    fn the_entry_s_files_are_read_for_its_python() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("runtime.txt"), "# x\npython-3.9.7\n").unwrap();
        std::fs::write(
            d.join("setup.py"),
            "setup(\n  python_requires='>=3.7, <3.12',\n)\n",
        )
        .unwrap();
        std::fs::write(
            d.join("Dockerfile"),
            "# base\nFROM python:3.10.1-buster\nRUN x\n",
        )
        .unwrap();
        let r = req(4, &["==3.6.6"]);
        let (words, problems) = read_words(d, &[("requirements.txt".into(), &r)]);
        assert!(problems.is_empty(), "{problems:?}");
        let got: Vec<(String, Strength)> =
            words.into_iter().map(|w| (w.source, w.strength)).collect();
        assert_eq!(
            got,
            vec![
                ("runtime.txt line 2".into(), Strength::Exact((3, 9))),
                ("requirements.txt line 4".into(), Strength::Exact((3, 6))),
                (
                    "setup.py line 2".into(),
                    Strength::Range(vec![">=3.7".into(), "<3.12".into()])
                ),
                (
                    "Dockerfile line 2 (python:3.10.1-buster)".into(),
                    Strength::Hint((3, 10))
                ),
            ]
        );
        std::fs::write(d.join("runtime.txt"), "whatever\n").unwrap();
        let (_, problems) = read_words(d, &[]);
        assert!(
            problems[0].starts_with("runtime.txt line 1:"),
            "{problems:?}"
        );
        std::fs::write(d.join("runtime.txt"), "bullseye\n").unwrap();
        let (words, _) = read_words(d, &[]);
        assert_eq!(words[0].strength, Strength::Named("bullseye"));
    }

    #[test]
    fn an_unreachable_python_is_refused_naming_the_runtimes_offered() {
        let w = Word {
            source: "runtime.txt line 1".into(),
            strength: Strength::Exact((3, 10)),
        };
        let e = candidates(&all(), &[w]).unwrap_err();
        assert!(
            e.contains("runtime.txt line 1 asks for CPython 3.10"),
            "{e}"
        );
        assert!(
            e.contains("bullseye (CPython 3.9)") && e.contains("trixie (CPython 3.13)"),
            "{e}"
        );
        assert!(e.contains("3.8 or older"), "{e}");
        let w = Word {
            source: "requirements.txt line 1".into(),
            strength: Strength::Exact((3, 9)),
        };
        let e = candidates(&["default".to_string()], &[w]).unwrap_err();
        assert!(e.contains("offered are default (CPython 3.11)"), "{e}");
    }

    #[test]
    fn a_dockerfile_is_a_hint_and_ranges_narrow_the_list() {
        let hint = Word {
            source: "Dockerfile line 1".into(),
            strength: Strength::Hint((3, 10)),
        };
        let (c, notes) = candidates(&all(), std::slice::from_ref(&hint)).unwrap();
        assert_eq!(c.len(), 4);
        assert!(notes[0].contains("chosen by the pins instead"), "{notes:?}");
        let range = Word {
            source: "setup.cfg line 3".into(),
            strength: Strength::Range(vec!["<3.10".into()]),
        };
        let (c, _) = candidates(&all(), &[hint, range]).unwrap();
        assert_eq!(c.iter().map(|o| o.name).collect::<Vec<_>>(), ["bullseye"]);
        let exact = Word {
            source: "runtime.txt line 1".into(),
            strength: Strength::Exact((3, 11)),
        };
        let (c, _) = candidates(&all(), &[exact]).unwrap();
        assert_eq!(
            c.iter().map(|o| o.name).collect::<Vec<_>>(),
            ["default", "bookworm"]
        );
    }
}
