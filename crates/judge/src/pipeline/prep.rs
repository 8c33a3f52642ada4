//! Prep: unpack the entry, check its required files and requirements (and whatever its
//! interface needs), give it to the sandbox uid, write our code at `/judge`, run
//! `setup.sh`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sandbox::Verdict;

use super::{Evaluator, StageLog, chown_tree, io, mkdir, ro, run_failure};
use crate::JudgeError;
use crate::outputs::read_capped;
use crate::pyenv::imports;
use crate::pyenv::meaning;
use crate::pyenv::parse::parse_requirements;
use crate::pyenv::{self, COMPLETE, EnvError, EnvironmentReport, Resolution, pyc};
use crate::result::{Outcome, Reason, Stage};
use crate::unpack::{Caps, unpack};

impl Evaluator<'_, '_> {
    pub(super) fn prep(&mut self) -> Result<bool, JudgeError> {
        let t = Instant::now();
        self.started(Stage::Prep, 0);
        let mut log = StageLog::new();
        let outcome = self.prep_checks(&mut log)?;
        let log = self.save_log(Stage::Prep, log)?;
        Ok(self.finish(Stage::Prep, outcome, t, Vec::new(), None, log))
    }

    fn prep_checks(&mut self, log: &mut StageLog) -> Result<Outcome, JudgeError> {
        let fail = |reason| Ok(Outcome::Failed { reason });
        match unpack(self.ev.entry, &self.entry, Caps::default()) {
            Ok(u) => {
                log.line(&format!(
                    "unpacked {} files and folders, {} bytes{}",
                    u.files,
                    u.bytes,
                    u.unwrapped
                        .map(|d| format!(" (from the single folder {d}/)"))
                        .unwrap_or_default()
                ));
            }
            Err(e) => {
                log.line(&e.to_string());
                return fail(Reason::Unpack {
                    message: e.to_string(),
                });
            }
        }
        self.matlab_detect(log)?;
        self.language = Some(match self.matlab {
            Some(_) => crate::result::Language::Matlab,
            None if super::matlab_entry::has_python(&self.entry) => crate::result::Language::Python,
            None => crate::result::Language::Other,
        });
        if self.matlab.is_none() {
            self.python_runtime()?;
        }
        let mut missing = Vec::new();
        let required: &[String] = match self.ev.seed {
            true => &[],
            false => &self.c.required_files,
        };
        for f in required {
            let f = &self.required_name(f);
            match alternatives(f)
                .into_iter()
                .find(|a| non_empty(&self.entry.join(a)))
            {
                Some(a) if a != *f => log.line(&format!("required file {f}: {a} is taken for it")),
                Some(_) => {}
                None => missing.push(f.clone()),
            }
        }
        for f in self.c.optional_files.iter().filter(|_| !self.ev.seed) {
            if !alternatives(f)
                .iter()
                .any(|a| non_empty(&self.entry.join(a)))
            {
                let w = format!(
                    "{f} is missing or empty: the challenge's rules ask for it (not required \
                     by this judge)"
                );
                log.line(&w);
                self.warnings.push(w);
            }
        }
        if !missing.is_empty() {
            for f in &missing {
                log.line(&format!("required file missing or empty: {f}"));
            }
            log.line("Required component(s) missing -- not scored");
            return fail(Reason::MissingFiles { files: missing });
        }
        let mut problems = Vec::new();
        // A MATLAB entry asks for no Python packages and runs on no Python runtime.
        let python = self.matlab.is_none();
        if python && let Some(req) = &self.c.requirements {
            let path = self.entry.join(req);
            if let Some(bytes) = read_capped(&path, 1 << 20).ok().flatten() {
                match parse_requirements(req, &String::from_utf8_lossy(&bytes)) {
                    Ok(r) => {
                        let kept = self.read_for_now(req, r);
                        self.wanted.extend(kept);
                    }
                    Err(p) => problems.extend(p),
                }
            }
            self.dockerfile(log, &mut problems)?;
        }
        if python {
            self.driver.needs(self, log, &mut problems);
        }
        if python
            && problems.is_empty()
            && let Some(reason) = self.choose_runtime(log)?
        {
            return fail(reason);
        }
        self.read_as_meant(log)?;
        // Compiled files Python would load in place of source must suit its version.
        if let Some(rt) = &self.runtime {
            problems.extend(pyc::check_tree(
                &self.entry,
                rt.python_version(),
                crate::unpack::Caps::default().files,
            ));
        }
        self.dry_run = self.entry.join("DRYRUN").exists();
        if let Some(reason) = self.driver.prep(self, log, &mut problems)? {
            return fail(reason);
        }
        if !problems.is_empty() {
            let problems = capped(problems);
            for p in &problems {
                log.line(p);
            }
            return fail(Reason::Requirements { problems });
        }
        if python && let Some(reason) = self.debian_system(log)? {
            return fail(reason);
        }
        if python && let Some(reason) = self.environment(log)? {
            return fail(reason);
        }
        if self.ev.seed {
            log.line("seeding: the environment is built; nothing of the entry runs");
            return Ok(Outcome::Passed);
        }
        chown_tree(&self.entry, self.uid)?;
        let dir = self.work.join("judge");
        mkdir(&dir)?;
        self.driver.judge_files(&dir).map_err(|e| io(&dir, e))?;
        if self.driver.setup_required() || self.entry.join("setup.sh").is_file() {
            let r = self.sandbox(
                &["/bin/bash", "setup.sh"],
                Vec::new(),
                self.c.setup_limits(),
            );
            log.run("setup.sh", &r);
            let res = &r.result;
            match (res.verdict, run_failure(&r, None)) {
                (_, None) => {}
                (Verdict::InternalError, Some(reason)) => return fail(reason),
                (v, Some(_)) => {
                    return fail(Reason::Setup {
                        verdict: v,
                        exit_code: res.exit_code,
                        last_line: super::last_line(&r),
                    });
                }
            }
        }
        if python && let Some(reason) = self.import_check(log)? {
            return fail(reason);
        }
        Ok(Outcome::Passed)
    }

    /// Imports, in a sandbox run of the built environment, every module the entry's
    /// Python files import that is neither its own nor the standard library
    /// (docs/judge.md, "The import check"); a failure refuses the entry with advice that
    /// pip was seen to resolve.
    fn import_check(&mut self, log: &mut StageLog) -> Result<Option<Reason>, JudgeError> {
        let dir = self.work.join("imports");
        mkdir(&dir)?;
        let script = dir.join("check.py");
        std::fs::write(&script, imports::CHECK_PY).map_err(|e| io(&script, e))?;
        let python = runtime::Runtime::python_in_sandbox();
        let python = python.to_string_lossy();
        // The judge's own files beside the entry (a challenge's helper code) are
        // importable in the real runs: never "missing".
        let judge_dir = self.work.join("judge");
        let own: Vec<String> = std::fs::read_dir(&judge_dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let stem = name.split('.').next().unwrap_or_default().to_string();
                (!stem.is_empty()).then_some(stem)
            })
            .collect();
        let mut argv: Vec<&str> = vec![&python, "/imports/check.py", "/entry"];
        argv.extend(own.iter().map(String::as_str));
        let r = self.sandbox(&argv, vec![ro(&dir, "/imports")], self.c.setup_limits());
        let res = &r.result;
        if res.verdict == Verdict::InternalError {
            return Err(JudgeError::Internal {
                message: super::message_of(res),
            });
        }
        let stdout = String::from_utf8_lossy(&r.stdout);
        let req_file = self
            .c
            .requirements
            .clone()
            .unwrap_or_else(|| "requirements.txt".into());
        let found = imports::findings(&stdout, res.verdict == Verdict::Ok, &self.asked, &req_file);
        if !found.ok.is_empty() {
            log.line(&format!(
                "import check: {} import(s) in the built environment: {}",
                found.ok.len(),
                found.ok.join(", ")
            ));
        }
        for w in &found.warnings {
            log.line(w);
        }
        self.warnings.extend(found.warnings);
        if found.failures.is_empty() {
            return Ok(None);
        }
        log.run("import check (the entry's imports, in the sandbox)", &r);
        let mut problems: Vec<String> = found.failures.iter().map(|f| f.message.clone()).collect();
        let mut adds: Vec<String> = found
            .failures
            .iter()
            .filter_map(|f| f.add.clone())
            .collect();
        adds.dedup();
        if !adds.is_empty() {
            let mut lines: Vec<String> = self.asked.iter().map(|r| r.pip_line()).collect();
            lines.extend(adds.iter().cloned());
            let scratch = self.work.join("advice");
            let stop = self.ev.cancel.as_ref().map(crate::CancelToken::flag);
            let mut said = Vec::new();
            let checked = pyenv::verify(
                self.ev.envs,
                &self.python_runtime()?.dir().join("bin/python"),
                &lines,
                &scratch,
                stop.as_deref(),
                &mut |l| said.push(l.to_string()),
            );
            for l in &said {
                log.line(l);
            }
            problems.push(match checked {
                Ok(Ok(set)) => format!(
                    "{req_file} with {} added, checked (pip resolves it{}):\n{}",
                    adds.join(", "),
                    match set.is_empty() {
                        true => String::new(),
                        false => format!(
                            ", installing {}",
                            set.iter()
                                .map(|p| format!("{} {}", p.name, p.version))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    },
                    lines.join("\n")
                ),
                Ok(Err(text)) => format!(
                    "the judge's advice ({}) does not resolve as it stands; pip says:\n{text}",
                    adds.join(", ")
                ),
                Err(EnvError::Judge(_)) if self.cancelled() => return Ok(Some(Reason::Stopped)),
                Err(EnvError::Judge(message)) => return Err(JudgeError::Packages { message }),
                Err(EnvError::Refused(p)) => p.join("\n"),
            });
        }
        let problems = capped(problems);
        for p in &problems {
            log.line(p);
        }
        Ok(Some(Reason::Requirements { problems }))
    }
}

impl Evaluator<'_, '_> {
    /// The `pip install` packages of the entry's `Dockerfile`, if it has one, added to
    /// what it asks for (a package its requirements file names already is not taken
    /// twice); every other instruction noted as ignored (docs/judge.md, "How requirement
    /// lines are read").
    fn dockerfile(
        &mut self,
        log: &mut StageLog,
        problems: &mut Vec<String>,
    ) -> Result<(), JudgeError> {
        let path = self.entry.join("Dockerfile");
        let Some(bytes) = read_capped(&path, 1 << 20).ok().flatten() else {
            return Ok(());
        };
        let read =
            pyenv::dockerfile::read_dockerfile("Dockerfile", &String::from_utf8_lossy(&bytes));
        problems.extend(read.problems);
        for n in &read.notes {
            log.line(n);
        }
        self.warnings.extend(read.notes);
        if read.reqs.is_empty() {
            return Ok(());
        }
        for r in self.read_for_now("Dockerfile", read.reqs) {
            let n = runtime::normalise(&r.name);
            if self.wanted.iter().any(|w| runtime::normalise(&w.name) == n) {
                log.line(&format!(
                    "Dockerfile: line {}: {} is in the requirements file already: that line is taken",
                    r.line, r.name
                ));
                continue;
            }
            log.line(&format!(
                "Dockerfile: line {}: {} is read as a requirement (from its pip install)",
                r.line,
                r.pip_line()
            ));
            self.wanted.push(r);
        }
        Ok(())
    }
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

/// The names that meet a required file: the official entries ship `LICENSE` and
/// `AUTHORS` where the challenge's rules say `LICENSE.txt` and `AUTHORS.txt`, so a
/// required `NAME.txt` is also met by `NAME` or `NAME.md`.
fn alternatives(required: &str) -> Vec<String> {
    let mut names = vec![required.to_string()];
    if let Some(stem) = required.strip_suffix(".txt") {
        names.push(stem.to_string());
        names.push(format!("{stem}.md"));
    }
    names
}

/// A regular file with content, or a folder with something in it.
fn non_empty(path: &std::path::Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => m.len() > 0,
        Ok(m) if m.is_dir() => std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()),
        _ => false,
    }
}

impl Evaluator<'_, '_> {
    /// Requirement lines of `file` read as meant for choosing the runtime: names turned
    /// into their packages, but the standard library is the chosen runtime's, known only
    /// once it is chosen; [`Self::read_as_meant`] reads them again then.
    fn read_for_now(
        &mut self,
        file: &str,
        reqs: Vec<pyenv::Requirement>,
    ) -> Vec<pyenv::Requirement> {
        let kept = meaning::read_as_meant(file, reqs.clone(), &Default::default(), "").kept;
        self.unread
            .push((file.to_string(), reqs, self.warnings.len()));
        kept
    }

    /// The lines [`Self::read_for_now`] read, read with the chosen runtime's standard
    /// library: its names are ignored with a warning naming that Python, and the
    /// warnings take their place among the others.
    fn read_as_meant(&mut self, log: &mut StageLog) -> Result<(), JudgeError> {
        let unread = std::mem::take(&mut self.unread);
        if unread.is_empty() {
            return Ok(());
        }
        let rt = self.python_runtime()?;
        let python = rt.dir().join("bin/python");
        let stdlib =
            meaning::stdlib_names(&python).map_err(|message| JudgeError::Packages { message })?;
        let (major, minor) = rt.python_version();
        let name = format!("CPython {major}.{minor}");
        for (file, reqs, at) in unread.into_iter().rev() {
            let read = meaning::read_as_meant(&file, reqs, &stdlib, &name);
            for w in &read.warnings {
                log.line(w);
            }
            let at = at.min(self.warnings.len());
            self.warnings.splice(at..at, read.warnings);
        }
        let std_norm: std::collections::BTreeSet<String> =
            stdlib.iter().map(|n| runtime::normalise(n)).collect();
        self.wanted
            .retain(|r| !std_norm.contains(&runtime::normalise(&r.name)));
        Ok(())
    }

    /// Chooses the runtime (docs/runtimes.md): the organiser's list, narrowed by the
    /// entry's word, then the first whose Python has wheels for every pin. Requirement
    /// lines named `python` are taken out of what pip is asked for: they ask for a
    /// runtime. `Some`: refused.
    fn choose_runtime(&mut self, log: &mut StageLog) -> Result<Option<Reason>, JudgeError> {
        let file = self.c.requirements.clone().unwrap_or_default();
        let (python_lines, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.wanted)
            .into_iter()
            .partition(|r| runtime::normalise(&r.name) == "python");
        self.wanted = rest;
        let lines: Vec<(String, &pyenv::Requirement)> =
            python_lines.iter().map(|r| (file.clone(), r)).collect();
        let (words, problems) = crate::runtimes::read_words(&self.entry, &lines);
        let refuse = |problems: Vec<String>, log: &mut StageLog| {
            for p in &problems {
                log.line(p);
            }
            Ok(Some(Reason::Requirements { problems }))
        };
        if !problems.is_empty() {
            return refuse(problems, log);
        }
        let (candidates, notes) = match crate::runtimes::candidates(&self.c.runtime.allowed, &words)
        {
            Ok(c) => c,
            Err(message) => return refuse(vec![message], log),
        };
        for n in &notes {
            log.line(n);
        }
        // Debian packages go into a release's root file system; the default runtime
        // shows the host's, into which the judge installs nothing.
        let (candidates, hosts): (Vec<_>, Vec<_>) = candidates
            .into_iter()
            .partition(|o| self.debian.is_empty() || o.release.is_some());
        if !hosts.is_empty() {
            log.line(&format!(
                "runtime default: skipped, dependencies.txt names Debian packages ({}), which \
                 the judge installs only on a Debian release runtime",
                self.debian
                    .iter()
                    .map(|(_, n)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            if candidates.is_empty() {
                return refuse(
                    vec![format!(
                        "dependencies.txt names Debian packages ({}), which the judge installs \
                         only on a Debian release runtime (bullseye, bookworm, trixie), and this \
                         challenge allows only the default runtime",
                        self.debian
                            .iter()
                            .map(|(l, n)| format!("line {l}: {n}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )],
                    log,
                );
            }
        }
        let pins: Vec<pyenv::Requirement> = self
            .wanted
            .iter()
            .filter(|r| r.pinned().is_some())
            .cloned()
            .collect();
        let stop = self.ev.cancel.as_ref().map(crate::CancelToken::flag);
        let scratch = self.work.join("choose");
        let mut not_set_up = Vec::new();
        let mut first_ready: Option<(runtime::Runtime, crate::runtimes::Offered)> = None;
        let mut chosen = None;
        for (i, o) in candidates.iter().enumerate() {
            let rt = match o.release {
                None => self.python_runtime()?.clone(),
                Some(r) => match runtime::Runtime::find(r) {
                    Ok(rt) => rt,
                    Err(e) => {
                        log.line(&format!(
                            "runtime {}: not on this machine: {e}",
                            o.describe()
                        ));
                        not_set_up.push(o.describe());
                        continue;
                    }
                },
            };
            if first_ready.is_none() {
                first_ready = Some((rt.clone(), *o));
            }
            let why_words = match notes.is_empty() {
                true => "the challenge's runtimes".to_string(),
                false => format!("the challenge's runtimes ({})", notes.join("; ")),
            };
            if pins.is_empty() {
                chosen = Some((
                    rt,
                    *o,
                    format!("the first of {why_words}; no pinned package"),
                ));
                break;
            }
            if i + 1 == candidates.len() && first_ready.as_ref().is_some_and(|f| f.1 == *o) {
                chosen = Some((
                    rt,
                    *o,
                    format!("the only one of {why_words} on this machine"),
                ));
                break;
            }
            match pyenv::wheel_problems(self.ev.envs, &rt, &pins, &scratch, stop.as_deref()) {
                Ok(p) if p.is_empty() => {
                    chosen = Some((
                        rt,
                        *o,
                        format!("the first of {why_words} whose Python has wheels for every pin"),
                    ));
                    break;
                }
                Ok(p) => log.line(&format!(
                    "runtime {}: {}",
                    o.describe(),
                    p.first().map(String::as_str).unwrap_or_default()
                )),
                Err(EnvError::Judge(_)) if self.cancelled() => return Ok(Some(Reason::Stopped)),
                Err(EnvError::Judge(message)) => return Err(JudgeError::Packages { message }),
                Err(EnvError::Refused(p)) => return refuse(p, log),
            }
        }
        let (rt, o, why) = match (chosen, first_ready) {
            (Some(c), _) => c,
            (None, Some((rt, o))) => {
                let absent = match not_set_up.is_empty() {
                    true => String::new(),
                    false => format!(" (not set up on this machine: {})", not_set_up.join(", ")),
                };
                (
                    rt,
                    o,
                    format!("no runtime here has wheels for every pin{absent}; the first is tried"),
                )
            }
            _ => {
                return Err(JudgeError::Packages {
                    message: format!(
                        "the entry needs one of the runtimes {}, and this machine has none \
                         that fits; build it with `physiojudge runtime setup --release NAME`",
                        not_set_up.join(", ")
                    ),
                });
            }
        };
        let (major, minor) = rt.python_version();
        log.line(&format!(
            "runtime: {} (CPython {major}.{minor}): {why}",
            o.name
        ));
        self.runtime_choice = Some(crate::result::RuntimeChoice {
            name: o.name.to_string(),
            python: format!("{major}.{minor}"),
            versions: Default::default(),
            why,
        });
        self.runtime = Some(rt);
        Ok(None)
    }

    /// Finds or builds the entry's own system when `dependencies.txt` names Debian
    /// packages: its runtime's release with them unpacked (docs/runtimes.md, "Debian
    /// packages"). `Some`: refused.
    fn debian_system(&mut self, log: &mut StageLog) -> Result<Option<Reason>, JudgeError> {
        if self.debian.is_empty() {
            return Ok(None);
        }
        let scratch = self.work.join("debian");
        let stop = self.ev.cancel.as_ref().map(crate::CancelToken::flag);
        let mut said = Vec::new();
        let made = pyenv::debian::prepare(
            self.ev.envs,
            self.python_runtime()?,
            "dependencies.txt",
            &self.debian,
            &scratch,
            stop.as_deref(),
            &mut |l| said.push(l.to_string()),
        );
        for l in &said {
            log.line(l);
        }
        match made {
            Ok(None) => Ok(None),
            Ok(Some(system)) => {
                self.system_root = Some(system.root.clone());
                self.debian_report = Some(system);
                Ok(None)
            }
            Err(EnvError::Refused(problems)) => {
                let problems = capped(problems);
                for p in &problems {
                    log.line(p);
                }
                Ok(Some(Reason::Requirements { problems }))
            }
            Err(EnvError::Judge(_)) if self.cancelled() => Ok(Some(Reason::Stopped)),
            Err(EnvError::Judge(message)) => Err(JudgeError::Packages { message }),
        }
    }

    /// Resolves what the entry asked for beyond the runtime and finds or builds its
    /// environment (docs/judge.md, "Entries' own packages"). `Some`: refused.
    fn environment(&mut self, log: &mut StageLog) -> Result<Option<Reason>, JudgeError> {
        let reqs = std::mem::take(&mut self.wanted);
        self.asked = reqs.clone();
        if reqs.is_empty() {
            self.report_environment(None);
            return Ok(None);
        }
        let settings = self.ev.envs;
        let scratch = self.work.join("resolve");
        let stop = self.ev.cancel.as_ref().map(crate::CancelToken::flag);
        let mut said = Vec::new();
        let resolved = pyenv::resolve(
            settings,
            self.python_runtime()?,
            &self.c.packages,
            &reqs,
            &scratch,
            stop.as_deref(),
            &mut |l| said.push(l.to_string()),
        );
        for l in &said {
            log.line(l);
        }
        let r = match resolved {
            Ok(None) => {
                self.report_environment(None);
                return Ok(None);
            }
            Ok(Some(r)) => r,
            Err(EnvError::Refused(problems)) => {
                let problems = capped(problems);
                for p in &problems {
                    log.line(p);
                }
                return Ok(Some(Reason::Requirements { problems }));
            }
            // The stage's outcome becomes `stopped` (`finish`), whatever the reason.
            Err(EnvError::Judge(_)) if self.cancelled() => {
                return Ok(Some(Reason::Stopped));
            }
            Err(EnvError::Judge(message)) => return Err(JudgeError::Packages { message }),
        };
        let envs = settings.cache.join("envs");
        mkdir(&envs)?;
        let dir = pyenv::env_dir(settings, &r.key);
        // One build of an environment at a time, across this machine's evaluations:
        // the second waits and finds it built.
        let lock_path = envs.join(format!("{}.lock", r.key));
        let lock = std::fs::File::create(&lock_path).map_err(|e| io(&lock_path, e))?;
        let _guard = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| io(&lock_path, e.into()))?;
        let cached = dir.join(COMPLETE).is_file();
        if cached {
            log.line(&format!(
                "environment {} found in the cache: nothing downloaded or installed",
                r.key
            ));
        } else if let Some(reason) = self.install(&r, &dir, log)? {
            return Ok(Some(reason));
        }
        self.env_site = Some(dir.join("site"));
        self.report_environment(Some(EnvironmentReport {
            key: r.key.clone(),
            packages: r.packages.clone(),
            cached,
            debian: Vec::new(),
        }));
        Ok(None)
    }

    /// `result.json`'s `environment`: the Python packages' (`python`) and the Debian
    /// system's, when there are any.
    fn report_environment(&mut self, python: Option<EnvironmentReport>) {
        let debian = self.debian_report.take();
        self.environment = match (python, debian) {
            (None, None) => None,
            (Some(p), None) => Some(Box::new(p)),
            (None, Some(d)) => Some(Box::new(EnvironmentReport {
                key: d.key,
                packages: Vec::new(),
                cached: d.cached,
                debian: d.packages,
            })),
            (Some(p), Some(d)) => Some(Box::new(EnvironmentReport {
                key: format!("{}+{}", p.key, d.key),
                packages: p.packages,
                cached: p.cached && d.cached,
                debian: d.packages,
            })),
        };
    }

    /// Installs `r`'s wheels into `dir` with the runtime's pip, in the sandbox: no
    /// network, prep's time, the environment built in a `/tmp` of `packages.env_mb` and
    /// then copied out. Runs no code of the entry's: pip is started isolated (`-I`) in a
    /// run that sees neither the entry nor its working folder.
    fn install(
        &mut self,
        r: &Resolution,
        dir: &Path,
        log: &mut StageLog,
    ) -> Result<Option<Reason>, JudgeError> {
        let t = Instant::now();
        let wheels = self.ev.envs.cache.join("wheels");
        let build = PathBuf::from(format!("{}.partial", dir.display()));
        // A build a stopped evaluation left (the lock is ours now).
        remove_old(&build)?;
        mkdir(&build)?;
        chown_tree(&build, self.uid)?;
        let mut script = String::from(
            "set -e\n/runtime/bin/python -I -m pip install --quiet --no-index --no-deps \
             --no-cache-dir --disable-pip-version-check --no-input \
             --no-warn-script-location --no-compile --target /tmp/site",
        );
        for w in &r.wheels {
            // `<sha256>/<file name>`, both checked to be plain by the resolver.
            let rel = w.strip_prefix(&wheels).unwrap_or(w);
            script.push_str(&format!(" '/wheels/{}'", rel.display()));
        }
        // The modules compiled the same way every time, so that the same module
        // installed for two sets is the same file, shared by the content store:
        // hash-checked .pyc files (no install time in them) and a fixed hash seed (the
        // order of the constant sets in them). `-E`/`-I` would ignore the seed, so the
        // environment is emptied instead; run from `/`, whose names are no modules.
        // pip ignores modules that do not compile (a package's Python 2 test data), and
        // so does this.
        script.push_str(
            "\ncd / && env -i PYTHONHASHSEED=0 /runtime/bin/python -s -m compileall -q -q \
             --invalidation-mode checked-hash /tmp/site || true",
        );
        script.push_str("\ncp -a /tmp/site /out/site\n");
        let mut cfg = self.sandbox_config(
            &["/bin/sh", "-c", &script],
            Vec::new(),
            self.c.install_limits(),
        );
        cfg.cwd = PathBuf::from("/tmp");
        cfg.binds = self.python_runtime()?.binds();
        cfg.binds.push(ro(&wheels, "/wheels"));
        cfg.binds.push(super::rw(&build, "/out"));
        cfg.env.retain(|(k, _)| k != "PYTHONPATH");
        let run = sandbox::run(&cfg);
        log.run(
            "installing the environment (pip, in the sandbox, no network)",
            &run,
        );
        let res = &run.result;
        if res.verdict == Verdict::InternalError {
            return Err(JudgeError::Internal {
                message: super::message_of(res),
            });
        }
        let env_mb = self.c.packages.env_mb;
        if res.verdict != Verdict::Ok {
            let text = String::from_utf8_lossy(&run.stderr);
            let problem = if text.contains("No space left on device") {
                format!(
                    "the environment is larger than this challenge's limit of {env_mb} MiB \
                     installed; use the runtime's packages ({}) where you can",
                    pyenv::runtime_summary(self.python_runtime()?.lock())
                )
            } else {
                format!(
                    "installing the packages failed ({}): {}",
                    res.verdict,
                    super::last_line(&run).unwrap_or_default()
                )
            };
            log.line(&problem);
            return Ok(Some(Reason::Requirements {
                problems: vec![problem],
            }));
        }
        // Root's from now on, and read-only to everyone else: no later run of any slot
        // can change what another entry with the same set will be given.
        let bytes = seal_tree(&build.join("site"))?;
        if bytes > env_mb << 20 {
            let problem = format!(
                "the environment takes {} MiB, more than this challenge's limit of {env_mb} MiB",
                bytes.div_ceil(1 << 20)
            );
            return Ok(Some(Reason::Requirements {
                problems: vec![problem],
            }));
        }
        // Files other environments have too become links to one stored copy.
        let shared = pyenv::store::share(&self.ev.envs.cache.join("store"), &build.join("site"))
            .map_err(|e| io(&build, e))?;
        log.line(&format!(
            "content store: {} of {} file(s), {:.1} of {:.1} MiB, shared with environments \
             built before",
            shared.reused_files,
            shared.files,
            shared.reused_bytes as f64 / (1 << 20) as f64,
            shared.bytes as f64 / (1 << 20) as f64
        ));
        let resolved = serde_json::json!({ "key": r.key, "packages": r.packages });
        let mark = build.join(COMPLETE);
        std::fs::write(&mark, resolved.to_string()).map_err(|e| io(&mark, e))?;
        nix::unistd::chown(&build, Some(0.into()), Some(0.into()))
            .map_err(|e| io(&build, e.into()))?;
        remove_old(dir)?;
        std::fs::rename(&build, dir).map_err(|e| io(dir, e))?;
        log.line(&format!(
            "environment {} installed: {} package(s), {:.1} MiB of wheels, {:.1} MiB \
             installed, in {:.1} s",
            r.key,
            r.packages.len(),
            r.bytes as f64 / (1 << 20) as f64,
            bytes as f64 / (1 << 20) as f64,
            t.elapsed().as_secs_f64()
        ));
        Ok(None)
    }
}

/// Removes a tree of the cache if it is there.
fn remove_old(path: &Path) -> Result<(), JudgeError> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    crate::workdir::remove_tree(path, Some(Instant::now() + Duration::from_secs(300))).map_err(
        |e| JudgeError::Packages {
            message: e.to_string(),
        },
    )
}

/// Gives a tree the sandbox wrote to root, without write permission for anyone else,
/// and returns the bytes of its files. Only folders, files and links are expected
/// (pip makes nothing else): anything else is removed. A list, not recursion; links
/// are never followed.
fn seal_tree(root: &Path) -> Result<u64, JudgeError> {
    use std::os::unix::fs::PermissionsExt;
    let mut bytes = 0u64;
    let mut todo = vec![root.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
        let ft = meta.file_type();
        if !(ft.is_dir() || ft.is_file() || ft.is_symlink()) {
            std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
            continue;
        }
        nix::unistd::fchownat(
            nix::fcntl::AT_FDCWD,
            &path,
            Some(0.into()),
            Some(0.into()),
            nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
        )
        .map_err(|e| io(&path, e.into()))?;
        if ft.is_symlink() {
            continue;
        }
        let mode = meta.permissions().mode() & 0o7755 & !0o6000;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(|e| io(&path, e))?;
        if ft.is_dir() {
            for e in std::fs::read_dir(&path).map_err(|e| io(&path, e))? {
                todo.push(e.map_err(|e| io(&path, e))?.path());
            }
        } else {
            bytes += meta.len();
        }
    }
    Ok(bytes)
}
