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

impl Driver for TrainRun {
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
        let argv = ["python3", "/judge/run_model.py", "/model", "/data", "/out"];
        whole_split(ev, split, &argv, binds, log)
    }
}
