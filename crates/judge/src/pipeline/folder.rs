//! The folder interface (CPSC 2021): `python3 entry_2021.py /data /out` once over the
//! whole split, one output file per record. Also the one-run-over-the-split helper the
//! train-run interface shares.

use sandbox::Bind;

use super::driver::{Driver, Ran, Split};
use super::{Evaluator, OUTPUT_CAP, StageLog, ro, run_failure, rw};
use crate::JudgeError;
use crate::dataset::materialise;
use crate::outputs::collect;
use crate::result::{RecordState, RecordStatus};

pub(super) struct Folder;

impl Driver for Folder {
    fn run_split(
        &self,
        ev: &mut Evaluator,
        split: &Split<'_>,
        log: &mut StageLog,
    ) -> Result<Ran, JudgeError> {
        if ev.matlab.is_some() {
            // Result(RECORDS, '/data/', ...) then each <record>.mat as <record>.json
            // (docs/matlab.md); /tmp holds the list and the .mat files.
            let argv = matlab::call_argv("physiojudge_cpsc2021", &["/data", "/out", "/tmp"]);
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            return whole_split(ev, split, &argv, Vec::new(), log);
        }
        let argv = ["python3", "entry_2021.py", "/data", "/out"];
        whole_split(ev, split, &argv, Vec::new(), log)
    }
}

/// One run of `argv` over the split's data (read-only at `/data`, labels withheld), its
/// outputs written to `/out` and taken from there: only regular files with the split's
/// own output names (`<record>.json` for CPSC, else `<record>.csv`), copied out of the
/// entry's reach. Each record's state comes from its output once scored; the run's own
/// failure is the stage's.
pub(super) fn whole_split(
    ev: &mut Evaluator,
    split: &Split<'_>,
    argv: &[&str],
    binds: Vec<Bind>,
    log: &mut StageLog,
) -> Result<Ran, JudgeError> {
    materialise(ev.c.layout, split.items, &split.data, Some(&ev.c.labels))?;
    let mut all = vec![ro(&split.data, "/data"), rw(&split.out, "/out")];
    all.extend(binds);
    let r = ev.sandbox(argv, all, ev.c.run_limits(split.items.len()));
    log.run(
        &format!(
            "{} run over {} records",
            split.stage.as_str(),
            split.items.len()
        ),
        &r,
    );
    for _ in split.items {
        ev.record_done();
    }
    let ext = crate::kinds::of(ev.c.scorer).output_suffix();
    let expected: std::collections::HashSet<String> = split
        .items
        .iter()
        .map(|i| format!("{}{ext}", i.id))
        .collect();
    let skipped = collect(&split.out, &split.taken, OUTPUT_CAP, |n| {
        expected.contains(n)
    })
    .map_err(|message| JudgeError::Io {
        path: split.out.clone(),
        kind: std::io::ErrorKind::Other,
        message,
    })?;
    for s in skipped {
        log.line(&format!("output {} not taken: {}", s.name, s.why));
    }
    let records = split
        .items
        .iter()
        .map(|i| RecordStatus {
            record: i.id.clone(),
            state: RecordState::Ok,
            verdict: None,
            message: None,
            cpu_time_s: None,
            wall_time_s: None,
            peak_memory_bytes: None,
        })
        .collect();
    Ok(Ran {
        records,
        stopped: (ev.matlab.as_ref())
            .and_then(|_| super::matlab_entry::unsupported(&r))
            .or_else(|| run_failure(&r, None)),
        scored: None,
    })
}
