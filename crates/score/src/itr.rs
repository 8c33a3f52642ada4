//! Information transfer rate of the online P300 speller (`docs/scoring.md`, with the
//! P300 decisions of `docs/architecture.md` and the session rules of `docs/stream.md`).
//!
//! ITR(N, P, T) = (log2 N + P·log2 P + (1−P)·log2((1−P)/(N−1))) · 60/T bits per minute,
//! with N = 36 characters, P the accuracy and T the mean time per character. A trial that
//! used m sequences takes m·Ts with Ts = 1.8 s (m at least 1); a trial without a valid
//! report is wrong and takes the full 5 sequences, 9 s. P ≤ 0.5 gives an ITR of 0. The
//! challenge score is the mean ITR over subjects.
//!
//! This module aggregates trials into ITRs. Deciding which report counts for which trial
//! and how many sequences it used is the streaming session's job.

use serde::Serialize;

/// Characters on the speller (6×6).
pub const N_CHARACTERS: u32 = 36;
/// Seconds per sequence of 12 flashes.
pub const SEQUENCE_SECONDS: f64 = 1.8;
/// Sequences per trial; a trial without a valid report costs all of them.
pub const MAX_SEQUENCES: u32 = 5;

/// How one trial (one character) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Trial {
    /// A valid report, made after `sequences` sequences (counted as `docs/stream.md` says).
    Reported { correct: bool, sequences: u32 },
    /// No valid report: wrong, and the full trial time.
    NoReport,
}

impl Trial {
    pub fn is_correct(self) -> bool {
        matches!(self, Trial::Reported { correct: true, .. })
    }

    /// Seconds charged for the trial: m·Ts with m clamped to 1..=5, or 9 s.
    pub fn seconds(self) -> f64 {
        let m = match self {
            Trial::Reported { sequences, .. } => sequences.clamp(1, MAX_SEQUENCES),
            Trial::NoReport => MAX_SEQUENCES,
        };
        m as f64 * SEQUENCE_SECONDS
    }
}

/// Bits per minute for `n` choices at accuracy `p` and `seconds` per selection; 0 when
/// `p` ≤ 0.5 (the contest rule, stricter than chance level 1/N).
pub fn itr(n: u32, p: f64, seconds: f64) -> f64 {
    // NaN accuracy or time counts as "not above": no information.
    let informative = p > 0.5 && seconds > 0.0 && n >= 2;
    if !informative {
        return 0.0;
    }
    let n = n as f64;
    // (1−P)·log2((1−P)/(N−1)) tends to 0 as P → 1.
    let miss = if p < 1.0 {
        (1.0 - p) * ((1.0 - p) / (n - 1.0)).log2()
    } else {
        0.0
    };
    let bits = n.log2() + p * p.log2() + miss;
    bits * 60.0 / seconds
}

/// One subject's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subject {
    pub subject: String,
    pub trials: usize,
    pub correct: usize,
    pub accuracy: f64,
    /// Mean seconds per trial, penalised trials included.
    pub mean_seconds: f64,
    /// Bits per minute.
    pub itr: f64,
}

/// The aggregate over subjects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Mean ITR over subjects (the challenge score).
    pub score: f64,
    pub subjects: Vec<Subject>,
}

/// ITR of one subject's trials.
pub fn subject(name: &str, trials: &[Trial]) -> Subject {
    let correct = trials.iter().filter(|t| t.is_correct()).count();
    let n = trials.len();
    let accuracy = if n == 0 {
        0.0
    } else {
        correct as f64 / n as f64
    };
    let mean_seconds = if n == 0 {
        0.0
    } else {
        trials.iter().map(|t| t.seconds()).sum::<f64>() / n as f64
    };
    Subject {
        subject: name.to_string(),
        trials: n,
        correct,
        accuracy,
        mean_seconds,
        itr: itr(N_CHARACTERS, accuracy, mean_seconds),
    }
}

/// Mean ITR over subjects (0 when there are none).
pub fn summarize(subjects: Vec<Subject>) -> Summary {
    let score = if subjects.is_empty() {
        0.0
    } else {
        subjects.iter().map(|s| s.itr).sum::<f64>() / subjects.len() as f64
    };
    Summary { score, subjects }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference table of `docs/challenges.md`: k correct of 32, mean sequences m.
    #[test]
    fn reference_table() {
        let table: [(u32, [f64; 5]); 7] = [
            (32, [172.3, 114.9, 86.2, 57.4, 34.5]),
            (31, [160.3, 106.9, 80.2, 53.4, 32.1]),
            (30, [150.4, 100.3, 75.2, 50.1, 30.1]),
            (28, [132.8, 88.6, 66.4, 44.3, 26.6]),
            (24, [102.5, 68.4, 51.3, 34.2, 20.5]),
            (17, [58.9, 39.3, 29.5, 19.6, 11.8]),
            (16, [0.0, 0.0, 0.0, 0.0, 0.0]),
        ];
        for (k, row) in table {
            for (m, want) in [1.0, 1.5, 2.0, 3.0, 5.0].into_iter().zip(row) {
                let got = itr(36, k as f64 / 32.0, m * SEQUENCE_SECONDS);
                assert_eq!(format!("{got:.1}"), format!("{want:.1}"), "k {k} m {m}");
            }
        }
        assert_eq!(format!("{:.1}", 60.0 / 1.8 * 36f64.log2()), "172.3");
    }

    #[test]
    fn trials_aggregate_into_a_subject() {
        // 31 correct after one sequence, one without a report: wrong and 9 s.
        let mut trials = vec![
            Trial::Reported {
                correct: true,
                sequences: 1
            };
            31
        ];
        trials.push(Trial::NoReport);
        let s = subject("s1", &trials);
        assert_eq!((s.correct, s.trials), (31, 32));
        assert!((s.mean_seconds - (31.0 * 1.8 + 9.0) / 32.0).abs() < 1e-12);
        assert_eq!(s.itr, itr(36, 31.0 / 32.0, s.mean_seconds));
        // m is clamped to at least one sequence and at most five.
        assert_eq!(
            Trial::Reported {
                correct: true,
                sequences: 0
            }
            .seconds(),
            1.8
        );
        assert_eq!(
            Trial::Reported {
                correct: false,
                sequences: 9
            }
            .seconds(),
            9.0
        );
        // P ≤ 0.5 gives 0.
        let half = [
            vec![
                Trial::Reported {
                    correct: true,
                    sequences: 1
                };
                16
            ],
            vec![Trial::NoReport; 16],
        ]
        .concat();
        assert_eq!(subject("s2", &half).itr, 0.0);
        let sum = summarize(vec![s.clone(), subject("s2", &half)]);
        assert_eq!(sum.score, s.itr / 2.0);
        assert_eq!(summarize(vec![]).score, 0.0);
        assert_eq!(subject("none", &[]).itr, 0.0);
    }
}
