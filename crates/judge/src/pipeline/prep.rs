//! Prep: unpack the entry, check its required files and requirements (and whatever its
//! interface needs), give it to the sandbox uid, write our code at `/judge`, run
//! `setup.sh`.

use std::time::Instant;

use sandbox::Verdict;

use super::{Evaluator, StageLog, chown_tree, io, mkdir, run_failure};
use crate::JudgeError;
use crate::outputs::read_capped;
use crate::requirements;
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
        let missing: Vec<String> = self
            .c
            .required_files
            .iter()
            .filter(|f| !non_empty(&self.entry.join(f)))
            .cloned()
            .collect();
        if !missing.is_empty() {
            log.line("Required component(s) missing -- not scored");
            return fail(Reason::MissingFiles { files: missing });
        }
        let mut problems = Vec::new();
        if let Some(req) = &self.c.requirements {
            let path = self.entry.join(req);
            if let Some(bytes) = read_capped(&path, 1 << 20).ok().flatten() {
                problems.extend(requirements::check_pip(
                    req,
                    &String::from_utf8_lossy(&bytes),
                ));
            }
        }
        self.dry_run = self.entry.join("DRYRUN").exists();
        if let Some(reason) = self.driver.prep(self, log, &mut problems)? {
            return fail(reason);
        }
        if !problems.is_empty() {
            for p in &problems {
                log.line(p);
            }
            return fail(Reason::Requirements { problems });
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
        Ok(Outcome::Passed)
    }
}

/// A regular file with content, or a folder with something in it.
fn non_empty(path: &std::path::Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => m.len() > 0,
        Ok(m) if m.is_dir() => std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_some()),
        _ => false,
    }
}
