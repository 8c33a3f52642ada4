//! One block of recorded data as the host holds it, and the trial structure its trigger
//! row encodes.

use p300::{FLASH_MAX, SEQUENCE_END, TRIAL_END, TRIAL_START_MAX, TRIAL_START_MIN};

/// What is wrong with a block: its name, the sample and the problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlockError {
    #[error("{block}: {rows} rows × {samples} samples needs {want} values, found {found}")]
    Size {
        block: String,
        rows: usize,
        samples: usize,
        want: usize,
        found: usize,
    },
    #[error("{block}: a block needs at least one EEG row and the trigger row, found {rows}")]
    TooFewRows { block: String, rows: usize },
    #[error("{block}: sample {sample}: trigger value {value} is not a code 0–255")]
    InvalidTrigger {
        block: String,
        sample: usize,
        value: f32,
    },
    #[error("{block}: sample {sample}: unknown trigger code {code}")]
    UnknownTrigger {
        block: String,
        sample: usize,
        code: u32,
    },
    #[error("{block}: sample {sample}: trigger {code} outside a trial (no trial start before it)")]
    OutsideTrial {
        block: String,
        sample: usize,
        code: u32,
    },
    #[error("{block}: the trial starting at sample {start} has no trial-end trigger 241")]
    Unterminated { block: String, start: usize },
    #[error("{block}: no trial (no trial-start trigger 101–136)")]
    NoTrials { block: String },
}

/// A block: `rows` rows (EEG channels, then the trigger row) of `samples` samples,
/// row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub name: String,
    rows: usize,
    samples: usize,
    data: Vec<f32>,
}

/// One sequence of a trial: the block-relative positions of its flash triggers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sequence {
    pub flashes: Vec<usize>,
}

/// One trial (one character) of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrialSpan {
    /// Position of the trial-start trigger.
    pub start: usize,
    /// The target's code, 101–136.
    pub code: u32,
    /// Position of the trial-end trigger 241.
    pub end: usize,
    pub sequences: Vec<Sequence>,
}

impl TrialSpan {
    /// Sequences used by a report at `point` (samples delivered): those with at least
    /// [`crate::FLASHES_FOR_A_SEQUENCE`] flashes before it.
    pub fn sequences_used(&self, point: usize) -> u32 {
        self.sequences
            .iter()
            .filter(|s| {
                s.flashes.iter().filter(|&&f| f < point).count() >= crate::FLASHES_FOR_A_SEQUENCE
            })
            .count() as u32
    }
}

impl Block {
    pub fn new(
        name: impl Into<String>,
        rows: usize,
        samples: usize,
        data: Vec<f32>,
    ) -> Result<Block, BlockError> {
        let name = name.into();
        if rows < 2 {
            return Err(BlockError::TooFewRows { block: name, rows });
        }
        let want = rows.saturating_mul(samples);
        if data.len() != want {
            return Err(BlockError::Size {
                block: name,
                rows,
                samples,
                want,
                found: data.len(),
            });
        }
        Ok(Block {
            name,
            rows,
            samples,
            data,
        })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn samples(&self) -> usize {
        self.samples
    }

    /// Row `r`, all samples.
    pub fn row(&self, r: usize) -> &[f32] {
        &self.data[r * self.samples..(r + 1) * self.samples]
    }

    /// The trigger row (the last).
    pub fn triggers(&self) -> &[f32] {
        self.row(self.rows - 1)
    }

    /// The trials its trigger row encodes. Strict: any code other than 101–136, 1–12,
    /// 200 and 241, a flash or end outside a trial, or a trial without its end is an
    /// error naming the sample.
    pub fn trials(&self) -> Result<Vec<TrialSpan>, BlockError> {
        let block = || self.name.clone();
        let mut trials = Vec::new();
        let mut open: Option<TrialSpan> = None;
        for (sample, &value) in self.triggers().iter().enumerate() {
            if value == 0.0 {
                continue;
            }
            if !(value.is_finite() && value.fract() == 0.0 && (0.0..=255.0).contains(&value)) {
                return Err(BlockError::InvalidTrigger {
                    block: block(),
                    sample,
                    value,
                });
            }
            let code = value as u32;
            let outside = || BlockError::OutsideTrial {
                block: block(),
                sample,
                code,
            };
            match code {
                TRIAL_START_MIN..=TRIAL_START_MAX => {
                    if let Some(t) = &open {
                        return Err(BlockError::Unterminated {
                            block: block(),
                            start: t.start,
                        });
                    }
                    open = Some(TrialSpan {
                        start: sample,
                        code,
                        end: sample,
                        sequences: vec![Sequence::default()],
                    });
                }
                1..=FLASH_MAX => {
                    let t = open.as_mut().ok_or_else(outside)?;
                    if let Some(s) = t.sequences.last_mut() {
                        s.flashes.push(sample);
                    }
                }
                SEQUENCE_END => {
                    let t = open.as_mut().ok_or_else(outside)?;
                    t.sequences.push(Sequence::default());
                }
                TRIAL_END => {
                    let mut t = open.take().ok_or_else(outside)?;
                    t.end = sample;
                    if t.sequences.last().is_some_and(|s| s.flashes.is_empty()) {
                        t.sequences.pop();
                    }
                    trials.push(t);
                }
                _ => {
                    return Err(BlockError::UnknownTrigger {
                        block: block(),
                        sample,
                        code,
                    });
                }
            }
        }
        if let Some(t) = open {
            return Err(BlockError::Unterminated {
                block: block(),
                start: t.start,
            });
        }
        if trials.is_empty() {
            return Err(BlockError::NoTrials { block: block() });
        }
        Ok(trials)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block of 2 rows (one EEG row, the trigger row) with triggers at given samples.
    pub(crate) fn block_with(samples: usize, triggers: &[(usize, u32)]) -> Block {
        let mut data = vec![0.0f32; 2 * samples];
        for (i, v) in data.iter_mut().take(samples).enumerate() {
            *v = i as f32;
        }
        for &(s, code) in triggers {
            data[samples + s] = code as f32;
        }
        Block::new("b", 2, samples, data).unwrap()
    }

    #[test]
    fn trials_sequences_and_flashes() {
        let b = block_with(
            100,
            &[
                (0, 105),
                (5, 3),
                (8, 7),
                (12, 200),
                (15, 1),
                (20, 200),
                (30, 241),
                (40, 136),
                (41, 2),
                (60, 241),
            ],
        );
        let t = b.trials().unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].start, t[0].code, t[0].end), (0, 105, 30));
        assert_eq!(
            t[0].sequences,
            vec![
                Sequence {
                    flashes: vec![5, 8]
                },
                Sequence { flashes: vec![15] }
            ]
        );
        assert_eq!((t[1].start, t[1].code, t[1].end), (40, 136, 60));
        assert_eq!(t[1].sequences.len(), 1);
    }

    #[test]
    fn malformed_trigger_rows_are_errors_naming_the_sample() {
        let cases: Vec<(Block, &str)> = vec![
            (
                block_with(20, &[(3, 5)]),
                "sample 3: trigger 5 outside a trial",
            ),
            (
                block_with(20, &[(0, 101), (4, 102)]),
                "the trial starting at sample 0 has no trial-end",
            ),
            (block_with(20, &[(0, 101)]), "no trial-end trigger 241"),
            (
                block_with(20, &[(0, 101), (2, 77)]),
                "sample 2: unknown trigger code 77",
            ),
            (block_with(20, &[]), "no trial"),
        ];
        for (b, want) in cases {
            let e = b.trials().unwrap_err().to_string();
            assert!(e.contains(want), "{e} / {want}");
        }
        let mut b = block_with(20, &[(0, 101), (9, 241)]);
        b.data[20 + 4] = 2.5;
        let e = b.trials().unwrap_err().to_string();
        assert!(e.contains("sample 4: trigger value 2.5"), "{e}");
        assert!(Block::new("x", 2, 3, vec![0.0; 5]).is_err());
        assert!(Block::new("x", 1, 3, vec![0.0; 3]).is_err());
    }

    #[test]
    fn sequences_count_from_the_third_flash() {
        let t = TrialSpan {
            start: 0,
            code: 101,
            end: 1000,
            sequences: vec![
                Sequence {
                    flashes: vec![10, 20, 30, 40],
                },
                Sequence {
                    flashes: vec![100, 110, 120, 130],
                },
            ],
        };
        // Report points are "samples delivered": a flash at 30 counts once 31 samples are.
        assert_eq!(t.sequences_used(30), 0);
        assert_eq!(t.sequences_used(31), 1);
        // Two flashes of the next sequence come free.
        assert_eq!(t.sequences_used(111), 1);
        assert_eq!(t.sequences_used(121), 2);
    }
}
