//! The per-record interface (PhysioNet 2017's sandbox): `bash setup.sh` once in prep,
//! then `bash next.sh REC` in a sandbox of its own per record, with the record's files
//! put in the entry's folder for the run, appending `REC,LABEL` to `answers.txt`.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use sandbox::Verdict;

use super::driver::{Driver, Ran, Split};
use super::{ANSWER_CAP, Evaluator, OUTPUT_CAP, StageLog, chown_tree, io, message_of, status};
use crate::JudgeError;
use crate::dataset::shown_files;
use crate::outputs::read_capped;
use crate::pyenv::parse::{Debian, Requirement, parse_debian};
use crate::result::{Reason, RecordState, Stage};
use crate::workdir::{RemoveError, remove_tree};

pub(super) struct PerRecord;

/// A 2017 `dependencies.txt`: each Debian package of a Python module the judge knows
/// becomes a requirement on the pip package it carries (installed like
/// `requirements.txt`'s, the Debian version ignored: it says nothing of a pip version);
/// any other package is installed from the runtime's Debian release
/// ([`crate::pyenv::debian`]), which makes the entry's runtime a release one.
fn debian_needs(ev: &mut Evaluator, log: &mut StageLog, text: &str, problems: &mut Vec<String>) {
    let file = "dependencies.txt";
    let lines = match parse_debian(file, text) {
        Ok(l) => l,
        Err(p) => {
            problems.extend(p);
            return;
        }
    };
    for d in lines {
        match d {
            Debian::Python => {}
            Debian::Pip { line, debian, pip } => {
                log.line(&format!(
                    "{file}: line {line}: {debian} is read as the pip package {pip} (any \
                     version; resolved with the entry's other requirements)"
                ));
                ev.wanted.push(Requirement {
                    line,
                    name: pip,
                    extras: Vec::new(),
                    clauses: Vec::new(),
                    marker: None,
                });
            }
            Debian::Ignored { line, name } => {
                let w = format!(
                    "{file}: line {line}: {name} is not needed here (the judge installs \
                     wheels and the runtime has its Python): ignored"
                );
                log.line(&w);
                ev.warnings.push(w);
            }
            Debian::System { line, name } => {
                if !ev.debian.iter().any(|(_, n)| *n == name) {
                    ev.debian.push((line, name));
                }
            }
        }
    }
}

impl Driver for PerRecord {
    /// `dependencies.txt` names Debian packages the sandbox must have.
    fn needs(&self, ev: &mut Evaluator, log: &mut StageLog, problems: &mut Vec<String>) {
        let path = ev.entry.join("dependencies.txt");
        if let Some(bytes) = read_capped(&path, 1 << 20).ok().flatten() {
            debian_needs(ev, log, &String::from_utf8_lossy(&bytes), problems);
        }
    }

    /// The entry's own `answers.txt` is kept, to compare with the quiz's.
    fn prep(
        &self,
        ev: &mut Evaluator,
        _log: &mut StageLog,
        _problems: &mut Vec<String>,
    ) -> Result<Option<Reason>, JudgeError> {
        ev.submitted = read_capped(&ev.entry.join("answers.txt"), OUTPUT_CAP)
            .ok()
            .flatten();
        Ok(None)
    }

    fn setup_required(&self) -> bool {
        true
    }

    fn run_split(
        &self,
        ev: &mut Evaluator,
        split: &Split<'_>,
        log: &mut StageLog,
    ) -> Result<Ran, JudgeError> {
        let (stage, items, taken) = (split.stage, split.items, &split.taken);
        let quiz = stage == Stage::Quiz;
        let answers = ev.entry.join("answers.txt");
        let mut all_answers = Vec::new();
        let mut records = Vec::with_capacity(items.len());
        let mut stopped = None;
        let started = Instant::now();
        for item in items {
            if stopped.is_none() && ev.cancelled() {
                stopped = Some(Reason::Stopped);
            }
            if stopped.is_some() {
                records.push(status(&item.id, RecordState::NotRun, None, None));
                continue;
            }
            if started.elapsed() > Duration::from_secs(ev.c.limits.stage_cap_s) {
                stopped = Some(Reason::StageTimeLimit {
                    cap_s: ev.c.limits.stage_cap_s,
                });
                records.push(status(&item.id, RecordState::NotRun, None, None));
                continue;
            }
            // The record's unlabelled files, placed next to the entry's own. Each run
            // appends to an empty answers.txt: what is there afterwards is this record's
            // answer, whatever the entry did to the file before.
            let mut placed = Vec::new();
            let mut files = shown_files(item, Some(&ev.c.labels))?;
            files.push(("answers.txt".into(), Vec::new()));
            for (name, content) in files {
                let to = ev.entry.join(&name);
                if let Some(reason) = clear(&to)? {
                    stopped = Some(reason);
                    break;
                }
                place(&to, &content, ev.uid)?;
                if name != "answers.txt" {
                    placed.push(to);
                }
            }
            if stopped.is_some() {
                records.push(status(&item.id, RecordState::NotRun, None, None));
                continue;
            }
            // No run may outlast what is left of the stage cap.
            let mut limits = ev.c.run_limits(1);
            let left =
                Duration::from_secs(ev.c.limits.stage_cap_s).saturating_sub(started.elapsed());
            limits.wall_time = limits.wall_time.min(left.max(Duration::from_secs(1)));
            limits.cpu_time = limits.cpu_time.min(limits.wall_time);
            let r = ev.sandbox(&["/bin/bash", "next.sh", &item.id], Vec::new(), limits);
            for p in placed {
                let _ = std::fs::remove_file(p);
            }
            log.run(&format!("next.sh {}", item.id), &r);
            ev.record_done();
            let new = match read_capped(&answers, ANSWER_CAP) {
                Ok(a) => a.unwrap_or_default(),
                Err(why) => {
                    log.line(&format!("answers.txt after {}: {why}; not taken", item.id));
                    Vec::new()
                }
            };
            all_answers.extend_from_slice(&new);
            if !all_answers.is_empty() && !all_answers.ends_with(b"\n") {
                all_answers.push(b'\n');
            }
            let res = &r.result;
            let state = match res.verdict {
                Verdict::Ok => RecordState::Ok,
                Verdict::TimeLimit | Verdict::WallTimeLimit => RecordState::TimedOut,
                Verdict::InternalError => {
                    let message = match quiz {
                        true => format!("record {}: {}", item.id, message_of(res)),
                        // The record's name stays in private/.
                        false => "a run failed in the sandbox (details in the private log)".into(),
                    };
                    stopped = Some(Reason::Internal { message });
                    RecordState::Failed
                }
                _ => RecordState::Failed,
            };
            let mut s = status(&item.id, state, Some(res.verdict), Some(res));
            if state != RecordState::Ok {
                s.message = Some(message_of(res));
                if quiz && stopped.is_none() {
                    // A MATLAB entry's next.sh that ended on a function Octave lacks.
                    stopped = (ev.matlab.as_ref())
                        .and_then(|_| super::matlab_entry::unsupported(&r))
                        .or_else(|| {
                            Some(Reason::Run {
                                record: Some(item.id.clone()),
                                verdict: res.verdict,
                                exit_code: res.exit_code,
                                last_line: super::last_line(&r),
                            })
                        });
                }
            }
            records.push(s);
        }
        let to = taken.join("answers.txt");
        std::fs::write(&to, &all_answers).map_err(|e| io(&to, e))?;
        Ok(Ran {
            records,
            stopped,
            scored: None,
        })
    }
}

/// How long removing what an entry left where the judge must put a file may take: a
/// tree that takes longer is the entry's doing ([`Reason::Leftovers`]).
const CLEAR_TIME: Duration = Duration::from_secs(60);

/// Removes whatever the entry left at `path` (a file, a symlink to a host file, a tree
/// of any depth), never following a link. `Ok(Some(reason))`: the entry left too much to
/// remove in [`CLEAR_TIME`].
fn clear(path: &Path) -> Result<Option<Reason>, JudgeError> {
    match remove_tree(path, Some(Instant::now() + CLEAR_TIME)) {
        Ok(()) => Ok(None),
        Err(e @ RemoveError::Timeout { .. }) => Ok(Some(Reason::Leftovers {
            message: e.to_string(),
        })),
        Err(e) => Err(JudgeError::Io {
            path: path.to_path_buf(),
            kind: std::io::ErrorKind::Other,
            message: e.to_string(),
        }),
    }
}

/// Writes a new file into a folder the sandbox uid owns, where [`clear`] made room.
fn place(path: &Path, bytes: &[u8], uid: u32) -> Result<(), JudgeError> {
    let mut f = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io(path, e))?;
    f.write_all(bytes).map_err(|e| io(path, e))?;
    chown_tree(path, uid)
}

/// Quiz of the per-record interface: the answers reproduced must match those submitted
/// with the entry, for every record the submission has.
pub(super) fn compare_submitted(
    submitted: &[u8],
    produced: &Path,
    log: &mut StageLog,
) -> Option<Reason> {
    let parse = |bytes: &[u8]| -> std::collections::HashMap<String, String> {
        let mut m = std::collections::HashMap::new();
        for line in String::from_utf8_lossy(bytes).lines() {
            if let Some((r, l)) = line.split_once(',') {
                m.entry(r.trim().to_string())
                    .or_insert_with(|| l.trim().to_string());
            }
        }
        m
    };
    let sub = parse(submitted);
    let produced_bytes = std::fs::read(produced).unwrap_or_default();
    let text = String::from_utf8_lossy(&produced_bytes).into_owned();
    let mut compared = 0;
    for line in text.lines() {
        let Some((r, l)) = line.split_once(',') else {
            continue;
        };
        let (r, l) = (r.trim(), l.trim());
        match sub.get(r) {
            Some(s) if s == l => compared += 1,
            Some(s) => {
                return Some(Reason::Mismatch {
                    record: r.to_string(),
                    submitted: s.clone(),
                    produced: l.to_string(),
                });
            }
            None => log.line(&format!(
                "{r}: not in the submitted answers.txt, so not compared"
            )),
        }
    }
    log.line(&format!(
        "{compared} answers match the submitted answers.txt"
    ));
    None
}
