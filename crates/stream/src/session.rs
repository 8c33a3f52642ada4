//! A streaming session: packets out, reports in, and at the end each report matched to
//! its trial and every subject's ITR.

use p300::{TRIAL_START_MAX, TRIAL_START_MIN};
use serde::Serialize;

use crate::block::{Block, BlockError, TrialSpan};
use crate::{PACKET_SAMPLES, seg_end};

/// One subject's blocks, played in this order.
#[derive(Debug, Clone)]
pub struct SubjectBlocks {
    /// The `personID` the algorithm sees.
    pub person_id: u32,
    /// For results and logs.
    pub name: String,
    pub blocks: Vec<Block>,
}

/// What a packet says besides its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    /// Block-relative index of the packet's first sample (0: a new block began).
    pub start_position: usize,
    pub person_id: u32,
    /// The last packet of the session.
    pub finished: bool,
    /// Samples in the packet (10, fewer at the end of a block, 0 after the end).
    pub samples: usize,
}

/// Reports inside the window of a trial already answered that the log keeps, per trial
/// (docs/stream.md, *The session log*): enough to show that and how an algorithm kept
/// reporting, while a flood of them cannot grow the log.
pub const LATER_KEPT_PER_TRIAL: usize = 3;
/// Reports inside no trial's window that the log keeps, for the whole session
/// (docs/stream.md, *The session log*): enough to show a systematic timing error.
pub const OUTSIDE_KEPT: usize = 32;

/// A report the log keeps: its order of arrival, the block being streamed and how many
/// of its samples had been delivered, and what became of it.
#[derive(Debug, Clone, Copy)]
struct Kept {
    index: usize,
    block: usize,
    point: usize,
    code: i64,
    status: ReportStatus,
}

/// A trial as the reports come: its answer (the first report in its window) and how many
/// later reports the log kept.
#[derive(Debug, Clone, Copy, Default)]
struct Answer {
    answer: Option<score::itr::Trial>,
    later_kept: usize,
}

/// What became of one report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ReportStatus {
    /// The trial's answer: the first report inside its window.
    Accepted {
        trial: usize,
        sequences: u32,
        correct: bool,
    },
    /// Inside the window of a trial already answered: ignored.
    Later { trial: usize },
    /// Inside no trial's window (before the packet after a trial's start, at or after the
    /// packet holding its end, or after a block's last packet): ignored.
    OutsideWindows,
}

/// One line of the session log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportLog {
    /// Order of arrival, from 0, over every report received (kept or not).
    pub index: usize,
    pub subject: String,
    pub block: String,
    /// Samples of the block delivered when the report came.
    pub point: usize,
    pub code: i64,
    #[serde(flatten)]
    pub status: ReportStatus,
}

/// How one trial ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialOutcome {
    pub subject: String,
    pub block: String,
    pub trial: usize,
    #[serde(flatten)]
    pub outcome: score::itr::Trial,
}

/// The result of a session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionResult {
    /// Per-subject ITR and their mean (the score).
    pub summary: score::itr::Summary,
    pub trials: Vec<TrialOutcome>,
    /// The reports kept, in order of arrival: every trial's answer, the first
    /// [`LATER_KEPT_PER_TRIAL`] later ones of each trial and the first [`OUTSIDE_KEPT`]
    /// outside any window; at most `(1 + LATER_KEPT_PER_TRIAL) × trials + OUTSIDE_KEPT`.
    pub log: Vec<ReportLog>,
    /// Reports received, all of them.
    pub reports: usize,
    /// Reports received but not in `log` (beyond its caps).
    pub dropped_reports: usize,
    /// Whether the algorithm was sent the last packet.
    pub finished: bool,
}

/// A session over all subjects' blocks.
pub struct Session {
    subjects: Vec<SubjectBlocks>,
    /// Blocks in play order: (subject, block) indices.
    order: Vec<(usize, usize)>,
    trials: Vec<Vec<TrialSpan>>,
    rows: usize,
    current: usize,
    position: usize,
    finished: bool,
    /// Per block in play order, per trial.
    answers: Vec<Vec<Answer>>,
    /// Reports received.
    received: usize,
    /// Log lines of reports outside any window.
    outside_kept: usize,
    log: Vec<Kept>,
}

/// Fisher–Yates with SplitMix64: the subject order is a function of the seed alone.
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

/// Why a session cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Block(#[from] BlockError),
    #[error("no blocks to stream")]
    Empty,
    #[error("{block}: {rows} rows, but the session's first block has {want}")]
    Rows {
        block: String,
        rows: usize,
        want: usize,
    },
}

impl Session {
    /// A session of `subjects` in an order shuffled by `seed` (blocks keep their order
    /// within a subject). Every block's trigger row is checked here.
    pub fn new(subjects: Vec<SubjectBlocks>, seed: u64) -> Result<Session, SessionError> {
        let mut subject_order: Vec<usize> = (0..subjects.len()).collect();
        shuffle(&mut subject_order, seed);
        let order: Vec<(usize, usize)> = subject_order
            .into_iter()
            .flat_map(|s| (0..subjects[s].blocks.len()).map(move |b| (s, b)))
            .collect();
        let first = order.first().ok_or(SessionError::Empty)?;
        let rows = subjects[first.0].blocks[first.1].rows();
        let mut trials = Vec::with_capacity(order.len());
        for &(s, b) in &order {
            let block = &subjects[s].blocks[b];
            if block.rows() != rows {
                return Err(SessionError::Rows {
                    block: block.name.clone(),
                    rows: block.rows(),
                    want: rows,
                });
            }
            trials.push(block.trials()?);
        }
        let answers = trials
            .iter()
            .map(|t| vec![Answer::default(); t.len()])
            .collect();
        Ok(Session {
            subjects,
            order,
            trials,
            rows,
            current: 0,
            position: 0,
            finished: false,
            answers,
            received: 0,
            outside_kept: 0,
            log: Vec::new(),
        })
    }

    /// Rows of every packet.
    pub fn rows(&self) -> usize {
        self.rows
    }

    fn block(&self, i: usize) -> (&SubjectBlocks, &Block) {
        let (s, b) = self.order[i];
        (&self.subjects[s], &self.subjects[s].blocks[b])
    }

    /// The next packet: its samples go into `out` (row-major, `rows × samples`), with the
    /// trial-start codes 101–136 masked to 101. After the last packet, an empty one that
    /// says `finished` again.
    pub fn next_packet(&mut self, out: &mut Vec<f32>) -> Packet {
        out.clear();
        let (s, b) = self.order[self.current];
        let block = &self.subjects[s].blocks[b];
        let person_id = self.subjects[s].person_id;
        let samples = block.samples();
        if self.finished {
            return Packet {
                start_position: samples,
                person_id,
                finished: true,
                samples: 0,
            };
        }
        let start = self.position;
        let n = PACKET_SAMPLES.min(samples - start);
        let last_row = block.rows() - 1;
        for r in 0..block.rows() {
            let part = &block.row(r)[start..start + n];
            if r == last_row {
                out.extend(part.iter().map(|&v| {
                    if (TRIAL_START_MIN as f32..=TRIAL_START_MAX as f32).contains(&v) {
                        TRIAL_START_MIN as f32
                    } else {
                        v
                    }
                }));
            } else {
                out.extend_from_slice(part);
            }
        }
        self.position += n;
        let mut finished = false;
        if self.position >= samples {
            if self.current + 1 == self.order.len() {
                self.finished = true;
                finished = true;
            } else {
                // The next block starts at once: a report made now belongs to it.
                self.current += 1;
                self.position = 0;
            }
        }
        Packet {
            start_position: start,
            person_id,
            finished,
            samples: n,
        }
    }

    /// Records a report at the position reached: matched to its trial at once, so that
    /// what is kept of it is bounded whatever the algorithm sends (the caps above).
    pub fn report(&mut self, code: i64) {
        let (block, point) = (self.current, self.position);
        let index = self.received;
        self.received += 1;
        let trials = &self.trials[block];
        let window = trials
            .iter()
            .position(|t| seg_end(t.start) < point && point < seg_end(t.end));
        let (status, keep) = match window {
            None => {
                let keep = self.outside_kept < OUTSIDE_KEPT;
                self.outside_kept += usize::from(keep);
                (ReportStatus::OutsideWindows, keep)
            }
            Some(i) => {
                let a = &mut self.answers[block][i];
                if a.answer.is_some() {
                    let keep = a.later_kept < LATER_KEPT_PER_TRIAL;
                    a.later_kept += usize::from(keep);
                    (ReportStatus::Later { trial: i }, keep)
                } else {
                    let sequences = trials[i].sequences_used(point).max(1);
                    let correct = code == i64::from(trials[i].code);
                    a.answer = Some(score::itr::Trial::Reported { correct, sequences });
                    let status = ReportStatus::Accepted {
                        trial: i,
                        sequences,
                        correct,
                    };
                    (status, true)
                }
            }
        };
        if keep {
            self.log.push(Kept {
                index,
                block,
                point,
                code,
                status,
            });
        }
    }

    /// Whether the last packet has been sent.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Scores every subject, from the trials' answers, and writes out the log.
    pub fn finish(self) -> SessionResult {
        let log: Vec<ReportLog> = self
            .log
            .iter()
            .map(|k| {
                let (subject, block) = self.block(k.block);
                ReportLog {
                    index: k.index,
                    subject: subject.name.clone(),
                    block: block.name.clone(),
                    point: k.point,
                    code: k.code,
                    status: k.status,
                }
            })
            .collect();
        let mut outcomes = Vec::new();
        let mut per_subject: Vec<Vec<score::itr::Trial>> = vec![Vec::new(); self.subjects.len()];
        for (i, answers) in self.answers.iter().enumerate() {
            let (s, b) = self.order[i];
            for (trial, a) in answers.iter().enumerate() {
                let outcome = a.answer.unwrap_or(score::itr::Trial::NoReport);
                per_subject[s].push(outcome);
                outcomes.push(TrialOutcome {
                    subject: self.subjects[s].name.clone(),
                    block: self.subjects[s].blocks[b].name.clone(),
                    trial,
                    outcome,
                });
            }
        }
        let subjects = self
            .subjects
            .iter()
            .zip(&per_subject)
            .map(|(s, t)| score::itr::subject(&s.name, t))
            .collect();
        SessionResult {
            summary: score::itr::summarize(subjects),
            trials: outcomes,
            reports: self.received,
            dropped_reports: self.received - log.len(),
            log,
            finished: self.finished,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testblocks::{self, flash, start, subject, trial_end};

    /// Streams packets until `point` samples of the current block have been delivered.
    fn deliver_to(s: &mut Session, point: usize) {
        let mut buf = Vec::new();
        while s.position < point && !s.finished {
            s.next_packet(&mut buf);
        }
        assert_eq!(s.position, point, "points must be packet ends");
    }

    fn one_subject(codes: &[u32]) -> Session {
        Session::new(vec![subject(1, codes)], 7).unwrap()
    }

    fn statuses(r: &SessionResult) -> Vec<ReportStatus> {
        r.log.iter().map(|l| l.status).collect()
    }

    #[test]
    fn the_window_opens_after_the_packet_holding_the_trial_start() {
        let mut s = one_subject(&[105]);
        // The trigger at sample 5 is in packet [0, 10): a report right after it is early.
        deliver_to(&mut s, seg_end(start(0)));
        s.report(105);
        // The first valid packet: right after the next one.
        deliver_to(&mut s, seg_end(start(0)) + 10);
        s.report(105);
        let r = s.finish();
        assert_eq!(
            statuses(&r),
            vec![
                ReportStatus::OutsideWindows,
                ReportStatus::Accepted {
                    trial: 0,
                    sequences: 1,
                    correct: true
                }
            ]
        );
    }

    #[test]
    fn a_report_at_or_after_the_trial_end_packet_is_too_late() {
        let mut s = one_subject(&[110, 111]);
        // The last valid moment: the packet before the one holding 241.
        deliver_to(&mut s, seg_end(trial_end(0)) - 10);
        s.report(110);
        // Trial 1: right after the packet holding its 241, too late.
        deliver_to(&mut s, seg_end(trial_end(1)));
        s.report(111);
        let r = s.finish();
        assert_eq!(
            statuses(&r),
            vec![
                ReportStatus::Accepted {
                    trial: 0,
                    sequences: 5,
                    correct: true
                },
                ReportStatus::OutsideWindows
            ]
        );
        assert_eq!(r.trials[1].outcome, score::itr::Trial::NoReport);
        // 1 of 2 correct: P = 0.5, so no information.
        assert_eq!(r.summary.subjects[0].accuracy, 0.5);
        assert_eq!(r.summary.subjects[0].itr, 0.0);
        assert_eq!(r.summary.subjects[0].mean_seconds, 9.0);
    }

    #[test]
    fn the_first_report_wins_and_later_ones_are_ignored() {
        let mut s = one_subject(&[120]);
        deliver_to(&mut s, 100);
        s.report(101); // wrong
        deliver_to(&mut s, 150);
        s.report(120); // right, but too late to count
        let r = s.finish();
        assert_eq!(
            statuses(&r),
            vec![
                ReportStatus::Accepted {
                    trial: 0,
                    sequences: 2,
                    correct: false
                },
                ReportStatus::Later { trial: 0 }
            ]
        );
    }

    #[test]
    fn a_trial_never_reported_is_wrong_and_costs_nine_seconds() {
        let mut s = one_subject(&[101, 102]);
        deliver_to(&mut s, seg_end(flash(0, 1, 2)));
        s.report(101);
        deliver_to(&mut s, testblocks::start(2) + testblocks::LEAD);
        let r = s.finish();
        assert!(r.finished);
        let outcomes: Vec<_> = r.trials.iter().map(|t| t.outcome).collect();
        assert_eq!(
            outcomes,
            vec![
                score::itr::Trial::Reported {
                    correct: true,
                    sequences: 2
                },
                score::itr::Trial::NoReport
            ]
        );
        assert_eq!(r.summary.subjects[0].mean_seconds, (3.6 + 9.0) / 2.0);
    }

    #[test]
    fn sequences_are_counted_across_sequence_boundaries() {
        // Flashes 3 samples apart, sequences 50 apart: report points chosen on packet
        // ends around the third flash of sequences 1..4.
        for (point_after, want) in [
            (flash(0, 0, 2), 1), // before the 3rd flash of sequence 1: m = 0, clamped to 1
            (flash(0, 1, 1), 1), // two flashes of sequence 2 come free
            (flash(0, 1, 2), 2), // the 3rd flash of sequence 2 counts it
            (flash(0, 3, 11), 4),
            (trial_end(0) - 10, 5),
        ] {
            let mut s = one_subject(&[130]);
            // The first packet end strictly after `point_after`.
            let point = seg_end(point_after);
            deliver_to(&mut s, point);
            s.report(130);
            let r = s.finish();
            let used = s_sequences(&r);
            let used_raw = s_raw(point);
            assert_eq!(used, want, "report at {point} (raw m {used_raw})");
        }

        fn s_sequences(r: &SessionResult) -> u32 {
            match r.log[0].status {
                ReportStatus::Accepted { sequences, .. } => sequences,
                other => panic!("{other:?}"),
            }
        }
        fn s_raw(point: usize) -> u32 {
            testblocks::block("x", &[130]).trials().unwrap()[0].sequences_used(point)
        }
    }

    #[test]
    fn a_report_after_a_blocks_last_packet_belongs_to_the_next_block() {
        let subjects = vec![subject(1, &[101]), subject(2, &[102])];
        let mut s = Session::new(subjects, 1).unwrap();
        let first = s.order[0].0;
        let mut buf = Vec::new();
        // Stream the whole first block, then report: too late for it.
        loop {
            let p = s.next_packet(&mut buf);
            if s.current == 1 {
                assert!(!p.finished);
                break;
            }
        }
        s.report(101);
        let r = s.finish();
        assert_eq!(r.log[0].point, 0);
        assert_ne!(r.log[0].subject, format!("S{:02}", first + 1));
        assert_eq!(r.log[0].status, ReportStatus::OutsideWindows);
    }

    #[test]
    fn packets_mask_the_target_and_keep_everything_else() {
        let mut s = one_subject(&[136]);
        let mut buf = Vec::new();
        let mut triggers = Vec::new();
        let mut eeg = Vec::new();
        let mut positions = Vec::new();
        loop {
            let p = s.next_packet(&mut buf);
            assert!(p.samples <= 10);
            positions.push(p.start_position);
            eeg.extend_from_slice(&buf[..p.samples]);
            triggers.extend_from_slice(&buf[p.samples..]);
            if p.finished {
                break;
            }
        }
        let block = testblocks::block("x", &[136]);
        assert_eq!(eeg, block.row(0));
        assert_eq!(triggers[start(0)], 101.0);
        let unmasked: Vec<f32> = block.triggers().to_vec();
        for (i, (&got, &want)) in triggers.iter().zip(&unmasked).enumerate() {
            if i != start(0) {
                assert_eq!(got, want, "sample {i}");
            }
        }
        assert_eq!(positions[1], 10);
        // After the end: empty packets that say so.
        let p = s.next_packet(&mut buf);
        assert!(p.finished && p.samples == 0 && buf.is_empty());
    }

    #[test]
    fn subject_order_is_a_seeded_shuffle() {
        let subjects: Vec<SubjectBlocks> = (1..=8).map(|i| subject(i, &[101])).collect();
        let order = |seed| {
            Session::new(subjects.clone(), seed)
                .unwrap()
                .order
                .iter()
                .map(|o| o.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(order(3), order(3));
        assert_ne!(order(3), order(4));
        let mut sorted = order(3);
        sorted.sort();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn itr_of_perfect_and_chance_sessions() {
        let codes: Vec<u32> = (0..32).map(|i| 101 + i % 36).collect();
        // Every character right after the 3rd flash of sequence 1: m = 1, 172.3 bits/min.
        let mut s = Session::new(vec![subject(1, &codes), subject(2, &codes)], 9).unwrap();
        for _ in 0..2 {
            for (t, &c) in codes.iter().enumerate() {
                deliver_to(&mut s, seg_end(flash(t, 0, 2)));
                s.report(c as i64);
            }
            let mut buf = Vec::new();
            let b = s.current;
            while s.current == b && !s.finished {
                s.next_packet(&mut buf);
            }
        }
        let r = s.finish();
        assert_eq!(format!("{:.1}", r.summary.score), "172.3");
        // Half right: P = 0.5 gives 0.
        let mut s = one_subject(&codes);
        for (t, &c) in codes.iter().enumerate() {
            deliver_to(&mut s, seg_end(flash(t, 0, 2)));
            s.report(if t % 2 == 0 { c as i64 } else { 0 });
        }
        assert_eq!(s.finish().summary.score, 0.0);
    }

    #[test]
    fn a_session_needs_blocks_of_one_shape() {
        assert!(matches!(Session::new(vec![], 1), Err(SessionError::Empty)));
        let mut other = subject(2, &[101]);
        let b = &other.blocks[0];
        let mut data = Vec::new();
        for r in 0..2 {
            data.extend_from_slice(b.row(r));
        }
        let mut three = data[..b.samples()].to_vec();
        three.extend_from_slice(&data);
        other.blocks[0] = Block::new("three", 3, b.samples(), three).unwrap();
        let e = Session::new(vec![subject(1, &[101]), other], 1)
            .err()
            .unwrap();
        assert!(e.to_string().contains("rows"), "{e}");
    }
    #[test]
    fn a_flood_of_reports_keeps_a_bounded_log_and_the_first_answers() {
        const FLOOD: usize = 1_000_000;
        let codes = [104, 121, 136];
        let subjects = || vec![subject(1, &codes), subject(2, &codes)];
        let mut s = Session::new(subjects(), 3).unwrap();
        // The reference: the first report of every packet only.
        let mut first_only = Session::new(subjects(), 3).unwrap();
        let packets = 2 * (start(codes.len()) + testblocks::LEAD).div_ceil(10);
        let mut buf = Vec::new();
        for p in 0..packets {
            s.next_packet(&mut buf);
            first_only.next_packet(&mut buf);
            // The trial's code in its window (right, first), then wrong ones.
            let trials = &s.trials[s.current];
            let code = trials
                .iter()
                .find(|t| seg_end(t.start) < s.position && s.position < seg_end(t.end))
                .map_or(0, |t| i64::from(t.code));
            s.report(code);
            first_only.report(code);
            for _ in 1..(FLOOD * (p + 1) / packets - FLOOD * p / packets) {
                s.report(0);
            }
        }
        assert!(s.is_finished());
        let r = s.finish();
        let reference = first_only.finish();
        // Scoring as if the flood were not there: every trial answered right at once.
        assert_eq!(r.summary, reference.summary);
        assert_eq!(r.trials, reference.trials);
        assert_eq!(r.summary.subjects[0].accuracy, 1.0);
        // The log: the accepted report and the first later ones of every trial, the
        // first ones outside any window; the rest counted.
        let trials = 2 * codes.len();
        assert_eq!(
            r.log.len(),
            (1 + LATER_KEPT_PER_TRIAL) * trials + OUTSIDE_KEPT
        );
        assert_eq!(r.reports, FLOOD);
        assert_eq!(r.dropped_reports, FLOOD - r.log.len());
        let kept = |f: fn(&ReportStatus) -> bool| r.log.iter().filter(|l| f(&l.status)).count();
        assert_eq!(kept(|s| matches!(s, ReportStatus::Accepted { .. })), trials);
        assert_eq!(kept(|s| *s == ReportStatus::OutsideWindows), OUTSIDE_KEPT);
        // Arrival order stays visible: the first report ever, the last kept far on.
        assert_eq!(r.log[0].index, 0);
        assert!(r.log.windows(2).all(|w| w[0].index < w[1].index));
        // As the judge writes it (pretty): about 200 bytes a line (168 MB before the caps).
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["dropped_reports"], FLOOD - r.log.len());
        let size = serde_json::to_vec_pretty(&r).unwrap().len();
        assert!(size < 32 * 1024, "{size} bytes");
    }
}
