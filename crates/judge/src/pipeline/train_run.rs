//! The train-run interface (PhysioNet 2022): our `train_model.py` and `run_model.py`
//! drive the entry's `team_code.py` (the organisers replaced the team's drivers too):
//! a train stage on the labelled training split with a writable `/model`, then one run
//! over each split writing one `<patient>.csv` per patient.

use std::path::Path;

use super::driver::{Driver, Ran, Split};
use super::folder::whole_split;
use super::{Evaluator, StageLog, ro};
use crate::JudgeError;
use crate::dataset::Item;

/// Our drivers at `/judge`.
const DRIVERS: [(&str, &str); 3] = [
    (
        "helper_code.py",
        include_str!("../../drivers/helper_code.py"),
    ),
    (
        "train_model.py",
        include_str!("../../drivers/train_model.py"),
    ),
    ("run_model.py", include_str!("../../drivers/run_model.py")),
];

pub(super) struct TrainRun;

/// Files of the official example entry that the judge's own replace, and why.
const REPLACED: [(&str, &str); 4] = [
    (
        "helper_code.py",
        "the judge's helper_code.py is first on sys.path",
    ),
    ("train_model.py", "the judge runs its own train_model.py"),
    ("run_model.py", "the judge runs its own run_model.py"),
    (
        "Dockerfile",
        "every entry runs on the judge's runtime; its packages come from requirements.txt",
    ),
];

impl Driver for TrainRun {
    /// The official layout runs unchanged: what the judge replaces is said, not silently
    /// ignored.
    fn prep(
        &self,
        ev: &mut Evaluator,
        log: &mut StageLog,
        _problems: &mut Vec<String>,
    ) -> Result<Option<crate::result::Reason>, JudgeError> {
        for (name, why) in REPLACED {
            if ev.entry.join(name).exists() {
                log.line(&format!(
                    "the entry's {name} is replaced by the judge's ({why}), as the \
                     organisers did"
                ));
            }
        }
        Ok(None)
    }

    fn judge_files(&self, dir: &Path) -> std::io::Result<bool> {
        for (name, text) in DRIVERS {
            std::fs::write(dir.join(name), text)?;
        }
        Ok(true)
    }

    fn train_argv(&self, _ev: &Evaluator, _training: &[Item]) -> Result<Vec<String>, &'static str> {
        Ok(["python3", "/judge/train_model.py", "/data", "/model"]
            .map(String::from)
            .to_vec())
    }

    fn run_split(
        &self,
        ev: &mut Evaluator,
        split: &Split<'_>,
        log: &mut StageLog,
    ) -> Result<Ran, JudgeError> {
        let binds = vec![
            ro(&ev.work.join("judge"), "/judge"),
            ro(&ev.work.join("model"), "/model"),
        ];
        if ev.matlab.is_some() {
            // The organisers' run_model.m (docs/matlab.md).
            let argv = matlab::call_argv("run_model", &["/model", "/data", "/out"]);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            return whole_split(ev, split, &argv, binds, log);
        }
        let argv = ["python3", "/judge/run_model.py", "/model", "/data", "/out"];
        whole_split(ev, split, &argv, binds, log)
    }
}
