//! Train: the entry's training command on the training split, labels included, with a
//! writable model folder (read-only in every later stage).

use std::time::Instant;

use super::{Evaluator, StageLog, chown_tree, mkdir, ro, run_failure, rw};
use crate::JudgeError;
use crate::dataset::{Item, materialise};
use crate::result::{Outcome, Stage};

impl Evaluator<'_, '_> {
    pub(super) fn train(&mut self, argv: &[String], items: &[Item]) -> Result<bool, JudgeError> {
        let t = Instant::now();
        self.started(Stage::Train, 0);
        let mut log = StageLog::new();
        let data = self.work.join("train/data");
        mkdir(&data)?;
        materialise(self.c.layout, items, &data, None)?;
        let model = self.work.join("model");
        mkdir(&model)?;
        chown_tree(&model, self.uid)?;
        // A MATLAB entry: the organisers' train_model.m (docs/matlab.md).
        let matlab_argv = matlab::call_argv("train_model", &["/data", "/model"]);
        let argv = match self.matlab {
            Some(_) => &matlab_argv,
            None => argv,
        };
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let r = self.sandbox(
            &argv,
            vec![
                ro(&data, "/data"),
                ro(&self.work.join("judge"), "/judge"),
                rw(&model, "/model"),
            ],
            self.c.train_limits(),
        );
        log.run(&argv.join(" "), &r);
        let failure = (self.matlab.as_ref())
            .and_then(|_| super::matlab_entry::unsupported(&r))
            .or_else(|| run_failure(&r, None));
        let outcome = match failure {
            None => Outcome::Passed,
            Some(reason) => Outcome::Failed { reason },
        };
        let log = self.save_log(Stage::Train, log)?;
        Ok(self.finish(Stage::Train, outcome, t, Vec::new(), None, log))
    }
}
